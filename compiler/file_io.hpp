// file_io.hpp: crash-safe file helpers shared by the module cache and the
// tuning database. Writers never leave a partial file under the final name:
// data goes to a unique temp file in the same directory, is fsync'ed, then
// renamed over the target (atomic on POSIX file systems).
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace fusedsample::detail {

// Writes `bytes` to `path` atomically, creating parent directories. A
// symbolic link at `path` stays: the file it points to is replaced, in its
// own directory (which must be writable) and keeping its permission bits,
// or created if absent; a link to something that is not a regular file (a
// device, a FIFO, a directory) is refused. Returns false (with the reason in
// *error) instead of throwing on I/O failure.
bool write_file_atomic(const std::filesystem::path& path, std::string_view bytes, std::string* error);

// What `path` names once every symbolic link on its last component is
// followed, hop by hop (the final path may not exist); `path` itself if it is
// no link. nullopt (the reason in *error) for an unreadable link or a loop.
std::optional<std::filesystem::path> link_target(const std::filesystem::path& path, std::string* error);

// The advisory lock file of `path` (the tuning database's save): "<target>.lock"
// beside what link_target resolves `path` to, so that every path naming one
// file (the file itself, a link to it, two links) takes the same lock; until
// session 63 it was "<path>.lock", and two processes saving through a link
// and through its target took two locks and could lose each other's entries.
// "<path>.lock" where the link cannot be resolved or names what is not a
// regular file (write_file_atomic refuses both: nothing is saved).
std::filesystem::path lock_file_path(const std::filesystem::path& path);

// A user's output file (`export -o`): into an existing FIFO, character
// device or the like as a plain write (a reader gets the bytes), else
// write_file_atomic.
bool write_output_file(const std::filesystem::path& path, std::string_view bytes, std::string* error);

// Whole file contents; nullopt if it does not exist or cannot be read (the
// reason, if any, in *error; empty when the file is simply absent), or holds
// more than `max_bytes`. Reads what a user names (a FIFO too, e.g.
// `import <(...)`).
std::optional<std::string> read_file(const std::filesystem::path& path, std::string* error,
                                     std::size_t max_bytes = std::size_t(1) << 30);

// The same for files of our own caches: only a regular file of at most
// `max_bytes` is read (opened without blocking, so a FIFO or device put in
// the cache's place, or a link to /dev/zero, is an error, not a hang or an
// endless read). *unusable (optional) tells the two kinds of error apart:
// true when what is there can never be read as a cache file (not a regular
// file, too large), false when the reading failed (EMFILE, EIO, EACCES, no
// host memory for it: never std::bad_alloc, ...), which may pass.
std::optional<std::string> read_cache_file(const std::filesystem::path& path, std::string* error,
                                           std::size_t max_bytes = std::size_t(1) << 30, bool* unusable = nullptr);

// Removes the files of `dir` whose name holds `marker` (a temp file's
// ".tmp.") and that are over an hour old: what writers killed between their
// temp file and the rename left. A younger one may be another process's
// write in progress. Errors are ignored: this only tidies.
void remove_stale_temp_files(const std::filesystem::path& dir, std::string_view marker);

// Prints "fusedsample: warning: <message>" to stderr the first time `topic`
// is seen in this process. Thread-safe. Returns true if it printed.
bool warn_once(const std::string& topic, const std::string& message);

// True if the environment variable is set to something other than "", "0".
bool env_flag(const char* name);

}  // namespace fusedsample::detail
