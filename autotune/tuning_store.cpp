// tuning_store.cpp: the tuning database on disk: <cache dir>/tuning.json,
// written atomically (temp file + fsync + rename) under an advisory lock so
// concurrent savers merge rather than overwrite each other; a corrupt file
// is ignored with one warning. Also import/export of standalone files and
// tuned_spec() over the persisted database.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <mutex>

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
  if (!detail::write_file_atomic(path, tuning_db_to_json(db), &error))
    throw FileError(fmt::format("cannot write tuning file {}: {}", path.string(), error));
}

std::optional<fsys::path> tuning_db_path() {
  auto dir = cache_directory();
  if (!dir) return std::nullopt;
  return *dir / "tuning.json";
}

TuningDb load_tuning_db(const fsys::path& path) {
  std::string error;
  auto text = detail::read_file(path, &error);
  if (!text) {
    if (!error.empty()) detail::warn_once("tuning:" + path.string(), fmt::format("tuning database: {} (ignored)", error));
    return {};
  }
  try {
    return tuning_db_from_json(*text, path.string());
  } catch (const std::exception& e) {  // Error, and anything else a damaged file could raise: never throws
    detail::warn_once("tuning:" + path.string(),
                      fmt::format("ignoring corrupt tuning database ({}); it will be rewritten on the next save", e.what()));
    return {};
  }
}

bool save_tuning_db(const TuningDb& db, const fsys::path& path) {
  std::error_code ec;
  fsys::create_directories(path.parent_path(), ec);
  // Advisory lock: load + merge + write is one step across processes.
  const std::string lock_path = path.string() + ".lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd >= 0) ::flock(lock_fd, LOCK_EX);
  TuningDb merged = load_tuning_db(path);
  merged.merge(db);
  if (!db.environment.gpu_name.empty()) merged.environment = db.environment;
  std::string error;
  const bool ok = detail::write_file_atomic(path, tuning_db_to_json(merged), &error);
  if (lock_fd >= 0) {
    ::flock(lock_fd, LOCK_UN);
    ::close(lock_fd);
  }
  if (!ok)
    detail::warn_once("dir:" + path.parent_path().string(),
                      fmt::format("tuning database: {} is not writable ({}); results are not saved",
                                  path.parent_path().string(), error));
  return ok;
}

TunedSpec tuned_spec(const DeviceIdentity& device, DType dtype, std::int64_t vocab, std::int64_t d_model,
                     std::int64_t rows, Arch arch, int samples) {
  // The persisted database, re-read when its path, size or mtime changes.
  static std::mutex mu;
  static std::string cached_path;
  static fsys::file_time_type cached_mtime;
  static std::uintmax_t cached_size = 0;
  static TuningDb cached;
  TuningDb user;
  if (auto path = tuning_db_path()) {
    std::error_code ec1, ec2;
    const auto mtime = fsys::last_write_time(*path, ec1);
    const auto size = fsys::file_size(*path, ec2);
    if (!ec1 && !ec2) {
      std::lock_guard<std::mutex> lock(mu);
      if (cached_path != path->string() || cached_mtime != mtime || cached_size != size) {
        cached = load_tuning_db(*path);
        cached_path = path->string();
        cached_mtime = mtime;
        cached_size = size;
      }
      user = cached;
    }
  }
  return tuned_spec(user, device, dtype, vocab, d_model, rows, arch, samples);
}

}  // namespace fusedsample
