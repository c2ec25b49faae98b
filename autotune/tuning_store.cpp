// tuning_store.cpp: the tuning database on disk: <cache dir>/tuning.json,
// written atomically (temp file + fsync + rename) under an advisory lock so
// concurrent savers merge rather than overwrite each other; a file that
// cannot be read is ignored with one warning and kept aside by the next
// save; a config whose spec this build does not accept is kept with a
// warning (the lookup skips it), not the file. Also import/export of
// standalone files and tuned_spec() over the persisted database.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "compiler/file_io.hpp"
#include "fusedsample/disk_cache.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fusedsample {
namespace fsys = std::filesystem;

TuningDb import_tuning_file(const fsys::path& path) {
  std::string error;
  auto text = detail::read_file(path, &error);
  if (!text) throw FileError(error.empty() ? fmt::format("{}: no such file", path.string()) : error);
  return tuning_db_from_json(*text, path.string());
}

void export_tuning_file(const TuningDb& db, const fsys::path& path) {
  std::string error;
  if (!detail::write_output_file(path, tuning_db_to_json(db), &error))
    throw FileError(fmt::format("cannot write tuning file {}: {}", path.string(), error));
}

std::optional<fsys::path> tuning_db_path() {
  auto dir = cache_directory();
  if (!dir) return std::nullopt;
  return *dir / "tuning.json";
}

namespace {

// The database at `path`: empty if there is no file; nullopt, with *error
// saying why, if there is one that cannot be read or parsed, and *unusable
// whether that is the file's own fault (its content or kind: a save may set
// it aside) or the reading's (EMFILE, EIO, ...: the file is left alone).
// Configs whose specs this build does not accept are kept (the lookup skips
// them; a save writes them back) with one warning listing them. Never throws.
std::optional<TuningDb> read_tuning_db(const fsys::path& path, std::string* error, bool* unusable) {
  *unusable = false;
  auto text = detail::read_cache_file(path, error, std::size_t(1) << 30, unusable);
  if (!text) {
    if (error->empty()) return TuningDb{};
    *error = fmt::format("unreadable tuning database ({})", *error);
    return std::nullopt;
  }
  try {
    std::vector<std::string> invalid;
    TuningDb db = tuning_db_from_json(*text, path.string(), &invalid);
    if (!invalid.empty()) {
      std::string list;
      for (const std::string& s : invalid) list += "\n  " + s;
      detail::warn_once("invalid:" + path.string(),
                        fmt::format("tuning database: {} config(s) not used, their specs are not valid in this build "
                                    "(kept in the file):{}",
                                    invalid.size(), list));
    }
    return db;
  } catch (const std::bad_alloc&) {  // out of memory this time: not the file's fault (a save leaves it alone)
    *error = "unreadable tuning database (out of host memory)";
    return std::nullopt;
  } catch (const std::exception& e) {  // Error, and anything else a damaged file could raise
    *error = fmt::format("corrupt tuning database ({})", e.what());
    *unusable = true;
    return std::nullopt;
  }
}

// `path` with a suffix naming the current UTC time: where a database that
// cannot be read is kept before a save replaces it.
fsys::path set_aside_path(const fsys::path& path) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  fsys::path aside = path.string() + ".unreadable-" + stamp;
  std::error_code ec;
  for (int i = 1; fsys::exists(fsys::symlink_status(aside, ec)); ++i)
    aside = fmt::format("{}.unreadable-{}-{}", path.string(), stamp, i);
  return aside;
}

}  // namespace

TuningDb load_tuning_db(const fsys::path& path) {
  std::string error;
  bool unusable = false;
  if (auto db = read_tuning_db(path, &error, &unusable)) return std::move(*db);
  detail::warn_once("tuning:" + path.string(),
                    unusable ? fmt::format("ignoring {}; the next save keeps it beside the new one as {}.unreadable-*",
                                           error, path.filename().string())
                             : fmt::format("ignoring {}", error));
  return {};
}

bool save_tuning_db(const TuningDb& db, const fsys::path& path) {
  std::error_code ec;
  fsys::create_directories(path.parent_path(), ec);
  // Advisory lock: load + merge + write is one step across processes. Beside the file the save writes (a link's
  // target), so that savers naming it by different paths share it (session 63: "<path>.lock" did not).
  const std::string lock_path = detail::lock_file_path(path).string();
  fsys::create_directories(fsys::path(lock_path).parent_path(), ec);  // a dangling link's target directory
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd >= 0)
    ::flock(lock_fd, LOCK_EX);
  else
    detail::warn_once("lock:" + lock_path, fmt::format("tuning database: cannot open the lock {} ({}); saving without "
                                                       "it (a concurrent save may be lost)",
                                                       lock_path, std::strerror(errno)));
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) {
        ::flock(fd, LOCK_UN);
        ::close(fd);
      }
    }
  } unlock{lock_fd};
  // A file that cannot be read for what it is (damaged, one a newer
  // fusedsample wrote, not a regular file) is moved aside, never
  // overwritten: until session 40 a save replaced it, and one entry this
  // build could not parse lost them all. One that could not be read this
  // time (EMFILE, EIO, ...) is left alone and nothing is saved.
  std::string why;
  bool unusable = false;
  std::optional<TuningDb> merged = read_tuning_db(path, &why, &unusable);
  if (!merged && !unusable) {
    detail::warn_once("read:" + path.string(),
                      fmt::format("tuning database: {}: {}; results are not saved", path.string(), why));
    return false;
  }
  if (!merged) {
    // Through a link: the file it points to is set aside (the link stays, and the save writes through it), if
    // it is a regular file. What a link names that is no regular file (/dev/null, a FIFO, a directory) is left
    // as it is and nothing is saved: until session 48 it was renamed, /dev/null included when run as root.
    std::string link_error;
    const std::optional<fsys::path> target = detail::link_target(path, &link_error);
    if (!target || (*target != path && !fsys::is_regular_file(fsys::symlink_status(*target, ec)))) {
      const std::string left =
          target ? "the link's target " + target->string() + " is not a regular file and is left as it is" : link_error;
      detail::warn_once("aside:" + path.string(), fmt::format("tuning database: {}: {}; {}; results are not saved",
                                                              path.string(), why, left));
      return false;
    }
    const fsys::path real = *target;
    const fsys::path aside = set_aside_path(real);
    // Kept by a second name, so that the file stays where it is until the atomic write replaces it: that write
    // keeps the permission bits of what it replaces (a private 0600 database stays private; after a rename the
    // new file took 0666 less the umask). Where no hard link can be made (a directory, a file system without
    // them), it is renamed.
    fsys::create_hard_link(real, aside, ec);
    if (ec) fsys::rename(real, aside, ec);
    if (ec) {
      detail::warn_once("aside:" + path.string(),
                        fmt::format("tuning database: {}: {}, and it cannot be moved aside ({}); results are not saved",
                                    path.string(), why, ec.message()));
      return false;
    }
    detail::warn_once("aside:" + path.string(),
                      fmt::format("tuning database: {}: {}; kept as {}", path.string(), why, aside.string()));
    merged = TuningDb{};
  }
  merged->merge(db);
  if (!db.environment.gpu_name.empty()) merged->environment = db.environment;
  std::string error;
  const bool ok = detail::write_file_atomic(path, tuning_db_to_json(*merged), &error);
  if (ok) detail::remove_stale_temp_files(path.parent_path(), path.filename().string() + ".tmp.");
  if (!ok)
    detail::warn_once("write:" + path.string(),
                      fmt::format("tuning database: cannot write {} ({}); results are not saved", path.string(), error));
  return ok;
}

TunedSpec tuned_spec(const DeviceIdentity& device, DType dtype, std::int64_t vocab, std::int64_t d_model,
                     std::int64_t rows, Arch arch, int samples) {
  // The persisted database, re-read when its path, file (device and inode: every save renames a new one into
  // place), size or mtime changes. The mtime alone missed a save within one tick of the file system's coarse
  // clock (a few milliseconds on ext4) that left the size as it was.
  static std::mutex mu;
  static std::string cached_path;
  static struct stat cached_st {};
  static TuningDb cached;
  TuningDb user;
  if (auto path = tuning_db_path()) {
    struct stat st {};
    if (::stat(path->c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      std::lock_guard<std::mutex> lock(mu);
      if (cached_path != path->string() || cached_st.st_dev != st.st_dev || cached_st.st_ino != st.st_ino ||
          cached_st.st_size != st.st_size || cached_st.st_mtim.tv_sec != st.st_mtim.tv_sec ||
          cached_st.st_mtim.tv_nsec != st.st_mtim.tv_nsec) {
        cached = load_tuning_db(*path);
        cached_path = path->string();
        cached_st = st;
      }
      user = cached;
    }
  }
  return tuned_spec(user, device, dtype, vocab, d_model, rows, arch, samples);
}

}  // namespace fusedsample
