// disk_cache.hpp: compiled kernels (PTX + cubin) kept on disk across
// processes, one file per kernel_cache_key() under <cache dir>/modules/.
//
// The cache directory is read from the environment at every call:
//   $FUSEDSAMPLE_CACHE_DIR, else $XDG_CACHE_HOME/fusedsample (if absolute), else
//   ~/.cache/fusedsample. FUSEDSAMPLE_CACHE_DISABLE=1 turns the cache off.
// Nothing here throws on I/O trouble: a corrupt file is ignored (one warning
// per file) and rebuilt; an unwritable directory means no writes (one
// warning per directory).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "fusedsample/compiler.hpp"

namespace fusedsample {

// Bumped whenever the on-disk module layout changes; older files are rebuilt.
inline constexpr std::uint32_t kModuleCacheFormatVersion = 1;

// True unless FUSEDSAMPLE_CACHE_DISABLE is set (to anything but "" or "0").
bool disk_cache_enabled();
// The cache root from the environment (see above); nullopt if no location
// can be derived (no HOME) or the cache is disabled.
std::optional<std::filesystem::path> cache_directory();

class DiskCache {
 public:
  // Modules live under root/modules.
  explicit DiskCache(std::filesystem::path root);
  // The cache the environment selects; nullopt if disabled.
  static std::optional<DiskCache> from_environment();

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path modules_dir() const { return root_ / "modules"; }
  std::filesystem::path module_path(const std::string& key) const;

  // The stored kernel for `key`; nullopt if absent, or (with a warning) if
  // the file is truncated, garbled, of another format version or key.
  std::optional<CompiledKernel> load(const std::string& key) const;
  // Stores `kernel` under kernel.cache_key atomically. Returns false (with a
  // warning once per directory) if the directory is not writable.
  bool store(const CompiledKernel& kernel) const;

 private:
  std::filesystem::path root_;
};

// Serialized form of a module file (exposed for tests and tools).
std::string encode_module(const CompiledKernel& kernel);
// Parses a module file; throws FileError naming what is wrong.
CompiledKernel decode_module(std::string_view bytes, const std::string& expected_key);

// Rendered kernel -> compiled kernel through `cache` (if any): a valid disk
// entry whose source and options match is returned without compiling;
// otherwise NVRTC compiles and the result is stored. *from_disk (optional)
// says which happened, *stored (optional) whether a compiled kernel was
// stored (false: no cache, or it is not writable).
CompiledKernel load_or_compile(const RenderedKernel& rendered, const DiskCache* cache, bool* from_disk = nullptr,
                               bool* stored = nullptr);

}  // namespace fusedsample
