// cache_key.cpp: the identity of a compiled binary. Everything that changes
// the bytes NVRTC produces goes in: the rendered source, every option (the
// arch among them), the embedded templates' contents, the NVRTC version and
// build (a toolkit patch release changes only the latter) and the generator
// version.
#include <fmt/format.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fusedsample/compiler.hpp"

namespace fusedsample {

std::string kernel_cache_key(const RenderedKernel& r) { return kernel_cache_key(r, nvrtc_version(), nvrtc_build()); }

std::string kernel_cache_key(const RenderedKernel& r, std::string_view nvrtc, std::string_view nvrtc_build_id) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  auto add = [&](std::string_view field, std::string_view value) {
    const std::uint64_t n = value.size();
    XXH3_128bits_update(st, field.data(), field.size());
    XXH3_128bits_update(st, &n, sizeof n);
    XXH3_128bits_update(st, value.data(), value.size());
  };
  add("generator", generator_version());
  add("nvrtc", nvrtc);
  add("nvrtc build", nvrtc_build_id);  // a patch release keeps the version (session 40)
  add("arch", to_string(r.spec.arch));
  add("source", r.source);
  for (const auto& o : r.options) add("option", o);
  for (const auto& h : embedded_templates()) {
    add("header", h.name);
    add("content", std::string_view(h.data, h.size));
  }
  const XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

}  // namespace fusedsample
