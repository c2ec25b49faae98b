// file_io.cpp: atomic writes (temp file + fsync + rename), whole-file reads
// and once-per-topic warnings.
#include "compiler/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>
#include <vector>

namespace fusedsample::detail {
namespace fsys = std::filesystem;

bool write_file_atomic(const fsys::path& path, std::string_view bytes, std::string* error) {
  auto fail = [&](const std::string& what, int err) {
    if (error) *error = what + ": " + std::strerror(err);
    return false;
  };
  const fsys::path dir = path.parent_path().empty() ? fsys::path(".") : path.parent_path();
  std::error_code ec;
  fsys::create_directories(dir, ec);
  if (ec) {
    if (error) *error = "cannot create directory " + dir.string() + ": " + ec.message();
    return false;
  }
  std::string tmpl = (dir / (path.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return fail("cannot create a temp file in " + dir.string(), errno);
  const std::string tmp(name.data());
  auto abandon = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail(what + " " + tmp, err);
  };
  ::fchmod(fd, 0644);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return abandon("cannot write");
    }
    done += std::size_t(n);
  }
  if (::fsync(fd) != 0) return abandon("cannot fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail("cannot close " + tmp, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return fail("cannot rename " + tmp + " to " + path.string(), err);
  }
  // Make the rename itself durable; failure here is not an error.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

std::optional<std::string> read_file(const fsys::path& path, std::string* error) {
  if (error) error->clear();
  std::error_code ec;
  if (fsys::is_directory(path, ec)) {  // an ifstream opens a directory and throws on its first read
    if (error) *error = "cannot read " + path.string() + ": it is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error && fsys::exists(path, ec)) *error = "cannot open " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  try {
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
      if (error) *error = "cannot read " + path.string();
      return std::nullopt;
    }
    return data;
  } catch (const std::exception& e) {  // a read error the stream reports by throwing; out of memory
    if (error) *error = "cannot read " + path.string() + ": " + e.what();
    return std::nullopt;
  }
}

bool warn_once(const std::string& topic, const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.insert(topic).second) return false;
  }
  std::fprintf(stderr, "fusedsample: warning: %s\n", message.c_str());
  return true;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

}  // namespace fusedsample::detail
