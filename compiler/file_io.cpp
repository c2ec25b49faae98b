// file_io.cpp: atomic writes (temp file + fsync + rename), whole-file reads
// and once-per-topic warnings.
#include "compiler/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <set>
#include <system_error>
#include <vector>

namespace fusedsample::detail {
namespace fsys = std::filesystem;

std::optional<fsys::path> link_target(const fsys::path& path, std::string* error) {
  fsys::path at = path;
  std::error_code ec;
  // Hop by hop (weakly_canonical returned a dangling link's own path, so a
  // write replaced the link with a file).
  for (int hop = 0; hop < 40; ++hop) {
    if (!fsys::is_symlink(fsys::symlink_status(at, ec))) return at;
    const fsys::path to = fsys::read_symlink(at, ec);
    if (ec) {
      if (error) *error = "cannot read the link " + at.string() + ": " + ec.message();
      return std::nullopt;
    }
    at = to.is_absolute() ? to : at.parent_path() / to;
  }
  if (error) *error = "too many levels of symbolic links at " + path.string();
  return std::nullopt;
}

fsys::path lock_file_path(const fsys::path& path) {
  // Beside the target only where write_file_atomic would write (a regular
  // file or nothing): a link to /dev/null saves nothing, and run as root it
  // would create /dev/null.lock.
  std::error_code ec;
  const std::optional<fsys::path> target = link_target(path, nullptr);
  const fsys::file_status st = target ? fsys::symlink_status(*target, ec) : fsys::file_status{};
  const bool writable = target && (!fsys::exists(st) || fsys::is_regular_file(st));
  return (writable ? *target : path).string() + ".lock";
}

// The process's umask, read without changing it (umask(2) can only set it,
// which would race with other threads' file creation): the "Umask:" line of
// /proc/self/status (Linux 4.7 and newer), else the usual 022.
static mode_t process_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return mode_t(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
  return 022;
}

bool write_file_atomic(const fsys::path& link_or_path, std::string_view bytes, std::string* error) {
  auto fail = [&](const std::string& what, int err) {
    if (error) *error = what + ": " + std::strerror(err);
    return false;
  };
  std::error_code ec;
  // Through a symbolic link: its target is replaced (renaming over the link
  // would replace the link and leave the target as it was), if it is a
  // regular file or absent. A link to anything else (/dev/null, a FIFO, a
  // directory) is refused: renaming over its target would replace a device
  // node or another program's FIFO outside the cache (session 48).
  const bool link = fsys::is_symlink(fsys::symlink_status(link_or_path, ec));
  fsys::path path = link_or_path;
  if (link) {
    const std::optional<fsys::path> target = link_target(link_or_path, error);
    if (!target) return false;
    path = *target;
    const fsys::file_status st = fsys::symlink_status(path, ec);
    if (fsys::exists(st) && !fsys::is_regular_file(st)) {
      if (error)
        *error = link_or_path.string() + " is a link to " + path.string() +
                 ", which is not a regular file; not replaced";
      return false;
    }
  }
  const fsys::path dir = path.parent_path().empty() ? fsys::path(".") : path.parent_path();
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
  // An existing file keeps its permission bits (a private 0600 database
  // stays private); a new one gets what open(O_CREAT, 0666) would, 0666 less
  // the umask (mkstemp made it 0600; until session 60 it became 0644 whatever
  // the umask, so a umask of 077 still left the caches readable to all).
  struct stat old_st {};
  ::fchmod(fd, ::stat(path.c_str(), &old_st) == 0 && S_ISREG(old_st.st_mode) ? (old_st.st_mode & 07777)
                                                                               : (0666 & ~process_umask()));
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

bool write_output_file(const fsys::path& path, std::string_view bytes, std::string* error) {
  std::error_code ec;
  const fsys::file_status st = fsys::status(path, ec);  // follows links
  // Named before the temp file's rename fails on them ("cannot rename ./.tmp.X to : No such file", session 60).
  if (path.empty() || !path.has_filename() || fsys::is_directory(st)) {
    if (error)
      *error = path.empty() ? std::string("no output file name (an empty path)")
                            : "cannot write " + path.string() + ": it names a directory, not a file";
    return false;
  }
  if (ec || !fsys::exists(st) || fsys::is_regular_file(st)) return write_file_atomic(path, bytes, error);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = "cannot open " + path.string() + ": " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error) *error = "cannot write " + path.string() + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += std::size_t(n);
  }
  if (::close(fd) != 0) {
    if (error) *error = "cannot close " + path.string() + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

std::optional<std::string> read_cache_file(const fsys::path& path, std::string* error, std::size_t max_bytes,
                                           bool* unusable) {
  if (error) error->clear();
  if (unusable) *unusable = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (error && errno != ENOENT && errno != ENOTDIR)  // absent: not an error
      *error = "cannot open " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    if (error) *error = "cannot stat " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    if (error) *error = "cannot read " + path.string() + ": it is a directory";
    if (unusable) *unusable = true;
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    if (error) *error = "cannot read " + path.string() + ": it is not a regular file";
    if (unusable) *unusable = true;
    return std::nullopt;
  }
  if (std::uint64_t(st.st_size) > max_bytes) {
    if (unusable) *unusable = true;
    if (error) *error = "cannot read " + path.string() + ": " + std::to_string(st.st_size) + " bytes, more than " +
                        std::to_string(max_bytes);
    return std::nullopt;
  }
  std::string data;
  try {
    data.resize(std::size_t(st.st_size));
  } catch (const std::bad_alloc&) {  // out of host memory this time: not the file's fault (unusable stays false)
    if (error)
      *error = "cannot read " + path.string() + ": out of host memory for its " + std::to_string(st.st_size) + " bytes";
    return std::nullopt;
  }
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error) *error = "cannot read " + path.string() + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;  // shrank while read: what is there (a torn file fails its checksum or its parse)
    done += std::size_t(n);
  }
  data.resize(done);
  return data;
}

std::optional<std::string> read_file(const fsys::path& path, std::string* error, std::size_t max_bytes) {
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
    // In pieces, up to max_bytes: `import /dev/zero` read until memory ran out until session 48.
    std::string data;
    char piece[1 << 16];
    while (in.read(piece, sizeof piece) || in.gcount() > 0) {
      if (data.size() + std::size_t(in.gcount()) > max_bytes) {
        if (error) *error = "cannot read " + path.string() + ": more than " + std::to_string(max_bytes) + " bytes";
        return std::nullopt;
      }
      data.append(piece, std::size_t(in.gcount()));
    }
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

void remove_stale_temp_files(const fsys::path& dir, std::string_view marker) {
  std::error_code ec;
  const auto now = fsys::file_time_type::clock::now();
  for (fsys::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().find(marker) == std::string::npos) continue;
    std::error_code ec2;
    const auto mtime = fsys::last_write_time(it->path(), ec2);
    if (!ec2 && now - mtime > std::chrono::hours(1)) fsys::remove(it->path(), ec2);
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
