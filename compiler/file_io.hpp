// file_io.hpp: crash-safe file helpers shared by the module cache and the
// tuning database. Writers never leave a partial file under the final name:
// data goes to a unique temp file in the same directory, is fsync'ed, then
// renamed over the target (atomic on POSIX file systems).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace fusedsample::detail {

// Writes `bytes` to `path` atomically, creating parent directories. Returns
// false (with the reason in *error) instead of throwing on I/O failure.
bool write_file_atomic(const std::filesystem::path& path, std::string_view bytes, std::string* error);

// Whole file contents; nullopt if it does not exist or cannot be read (the
// reason, if any, in *error; empty when the file is simply absent).
std::optional<std::string> read_file(const std::filesystem::path& path, std::string* error);

// Prints "fusedsample: warning: <message>" to stderr the first time `topic`
// is seen in this process. Thread-safe. Returns true if it printed.
bool warn_once(const std::string& topic, const std::string& message);

// True if the environment variable is set to something other than "", "0".
bool env_flag(const char* name);

}  // namespace fusedsample::detail
