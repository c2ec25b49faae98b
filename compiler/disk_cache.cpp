// disk_cache.cpp: the on-disk module cache. File layout (native endianness;
// the cache is per machine):
//   "FSMODULE" | u32 format version | u32 key length | u64 payload length |
//   u64 XXH3-64 of (key + payload) | key | payload
// payload: spec, source, option count (u32) + options, ptx, cubin, log, each
// string as u64 length + bytes.
#include "fusedsample/disk_cache.hpp"

#include <fmt/format.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdlib>
#include <cstring>

#include "compiler/file_io.hpp"
#include "fusedsample/errors.hpp"

namespace fusedsample {
namespace fsys = std::filesystem;
namespace {

constexpr char kMagic[8] = {'F', 'S', 'M', 'O', 'D', 'U', 'L', 'E'};
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8;

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_str(std::string& out, std::string_view s) {
  put<std::uint64_t>(out, s.size());
  out.append(s);
}

struct Reader {
  std::string_view data;
  std::size_t pos = 0;
  template <typename T>
  T get(const char* what) {
    if (data.size() - pos < sizeof(T)) throw FileError(fmt::format("truncated at {}", what));
    T v;
    std::memcpy(&v, data.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string_view get_str(const char* what) {
    const auto n = get<std::uint64_t>(what);
    if (n > data.size() - pos) throw FileError(fmt::format("truncated {} ({} bytes claimed)", what, n));
    std::string_view s = data.substr(pos, n);
    pos += n;
    return s;
  }
};

std::uint64_t checksum(std::string_view key, std::string_view payload) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, key.data(), key.size());
  XXH3_64bits_update(st, payload.data(), payload.size());
  const std::uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

bool valid_key(const std::string& key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

bool disk_cache_enabled() { return !detail::env_flag("FUSEDSAMPLE_CACHE_DISABLE"); }

std::optional<fsys::path> cache_directory() {
  if (!disk_cache_enabled()) return std::nullopt;
  if (const char* d = std::getenv("FUSEDSAMPLE_CACHE_DIR"); d && *d) return fsys::path(d);
  // A relative XDG_CACHE_HOME is invalid and ignored (XDG Base Directory specification).
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return fsys::path(x) / "fusedsample";
  if (const char* h = std::getenv("HOME"); h && *h) return fsys::path(h) / ".cache" / "fusedsample";
  return std::nullopt;
}

DiskCache::DiskCache(fsys::path root) : root_(std::move(root)) {}

std::optional<DiskCache> DiskCache::from_environment() {
  auto dir = cache_directory();
  if (!dir) return std::nullopt;
  return DiskCache(*dir);
}

fsys::path DiskCache::module_path(const std::string& key) const { return modules_dir() / (key + ".fsmod"); }

std::string encode_module(const CompiledKernel& k) {
  std::string payload;
  put_str(payload, k.spec.to_string());
  put_str(payload, k.source);
  put<std::uint32_t>(payload, std::uint32_t(k.options.size()));
  for (const auto& o : k.options) put_str(payload, o);
  put_str(payload, k.ptx);
  put_str(payload, std::string_view(k.cubin.data(), k.cubin.size()));
  put_str(payload, k.log);
  std::string out(kMagic, sizeof kMagic);
  put<std::uint32_t>(out, kModuleCacheFormatVersion);
  put<std::uint32_t>(out, std::uint32_t(k.cache_key.size()));
  put<std::uint64_t>(out, payload.size());
  put<std::uint64_t>(out, checksum(k.cache_key, payload));
  out += k.cache_key;
  out += payload;
  return out;
}

CompiledKernel decode_module(std::string_view bytes, const std::string& expected_key) {
  if (bytes.size() < kHeaderBytes) throw FileError(fmt::format("truncated header ({} bytes)", bytes.size()));
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) throw FileError("bad magic (not a fusedsample module)");
  Reader r{bytes, sizeof kMagic};
  const auto version = r.get<std::uint32_t>("version");
  if (version != kModuleCacheFormatVersion)
    throw FileError(fmt::format("format version {} (this build reads {})", version, kModuleCacheFormatVersion));
  const auto key_len = r.get<std::uint32_t>("key length");
  const auto payload_len = r.get<std::uint64_t>("payload length");
  const auto sum = r.get<std::uint64_t>("checksum");
  if (bytes.size() - kHeaderBytes < key_len || bytes.size() - kHeaderBytes - key_len != payload_len)
    throw FileError(fmt::format("size mismatch: file has {} bytes, header says {} + {} (key) + {} (payload)",
                                bytes.size(), kHeaderBytes, key_len, payload_len));  // no sum: it can wrap
  const std::string_view key = bytes.substr(kHeaderBytes, key_len);
  if (key != expected_key) throw FileError(fmt::format("holds key {} (expected {})", key, expected_key));
  const std::string_view payload = bytes.substr(kHeaderBytes + key_len);
  if (checksum(key, payload) != sum) throw FileError("checksum mismatch");
  Reader p{payload};
  CompiledKernel k;
  try {
    k.spec = KernelSpec::parse(p.get_str("spec"));
  } catch (const FileError&) {
    throw;
  } catch (const Error& e) {
    throw FileError(fmt::format("bad spec: {}", e.what()));
  }
  k.source = p.get_str("source");
  const auto n_options = p.get<std::uint32_t>("option count");
  for (std::uint32_t i = 0; i < n_options; ++i) k.options.emplace_back(p.get_str("option"));
  k.ptx = p.get_str("ptx");
  const auto cubin = p.get_str("cubin");
  k.cubin.assign(cubin.begin(), cubin.end());
  k.log = p.get_str("log");
  if (p.pos != payload.size()) throw FileError(fmt::format("{} trailing bytes", payload.size() - p.pos));
  k.cache_key = std::string(key);
  return k;
}

std::optional<CompiledKernel> DiskCache::load(const std::string& key) const {
  if (!valid_key(key)) return std::nullopt;
  const fsys::path path = module_path(key);
  std::string error;
  auto bytes = detail::read_cache_file(path, &error);
  if (!bytes) {
    if (!error.empty()) detail::warn_once(path.string(), fmt::format("module cache: {} (ignored)", error));
    return std::nullopt;
  }
  try {
    return decode_module(*bytes, key);
  } catch (const std::exception& e) {  // FileError, and anything else a damaged file could raise
    detail::warn_once(path.string(),
                      fmt::format("module cache: ignoring corrupt file {}: {}; it will be rebuilt", path.string(), e.what()));
    return std::nullopt;
  }
}

bool DiskCache::store(const CompiledKernel& kernel) const {
  if (!valid_key(kernel.cache_key)) return false;
  std::string error;
  if (detail::write_file_atomic(module_path(kernel.cache_key), encode_module(kernel), &error)) {
    // After a compile, which is rare: one listing of the directory.
    detail::remove_stale_temp_files(modules_dir(), ".fsmod.tmp.");
    return true;
  }
  detail::warn_once("dir:" + modules_dir().string(),
                    fmt::format("module cache: {} is not writable ({}); compiled kernels will not be cached",
                                modules_dir().string(), error));
  return false;
}

CompiledKernel load_or_compile(const RenderedKernel& rendered, const DiskCache* cache, bool* from_disk, bool* stored) {
  if (from_disk) *from_disk = false;
  if (stored) *stored = false;
  if (!cache) return compile_uncached(rendered);
  const std::string key = kernel_cache_key(rendered);
  if (auto k = cache->load(key)) {
    // A module whose log lacks ptxas's report was compiled from NVRTC's own
    // cache (before nvrtc_options turned it off): kernel_resources() would
    // know nothing about it, so it is built again and replaced.
    if (k->source == rendered.source && k->options == rendered.options && has_ptxas_report(k->log)) {
      k->spec = rendered.spec;
      if (from_disk) *from_disk = true;
      return std::move(*k);
    }
    if (k->source != rendered.source || k->options != rendered.options)
      detail::warn_once(cache->module_path(key).string(),
                        fmt::format("module cache: {} does not match its kernel; it will be rebuilt",
                                    cache->module_path(key).string()));
  }
  CompiledKernel compiled = compile_uncached(rendered);
  if (compiled.cache_key.empty()) compiled.cache_key = key;
  const bool ok = cache->store(compiled);
  if (stored) *stored = ok;
  return compiled;
}

}  // namespace fusedsample
