// default_spec.cpp: the built-in default kernel specs (used when no tuning
// entry answers) and fitting a spec to a GPU's shared memory.
#include <fmt/format.h>

#include <algorithm>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"

namespace fusedsample {
namespace {

// The portable heuristic before fitting (fit_shared_memory): sized for the
// 163 KiB of sm_80 and the 227 KiB of Hopper.
KernelSpec portable_heuristic(DType dtype, Arch arch, std::int64_t rows) {
  KernelSpec s;
  s.dtype = dtype;
  s.arch = arch;
  s.variant = default_variant(dtype);
  if (s.variant == Variant::simt) {
    s.tile_v = 128;
    s.tile_d = 32;
    s.stages = 3;
    s.warps_m = 4;
    s.warps_n = 1;
    s.tile_n = rows <= 8 ? 8 : rows <= 32 ? 32 : 64;
    return s;
  }
  // Measured on an H200 (BENCHMARKS.md, config sweep): 256-byte row
  // segments per stage (td128) stream W best while the batch tile is small;
  // larger batch tiles need td64 to keep shared memory for 2+ blocks per SM.
  s.tile_v = 128;
  if (rows <= 8) {
    s.tile_n = 8, s.tile_d = 128, s.stages = 4, s.warps_m = 4, s.warps_n = 1;
  } else if (rows <= 16) {
    s.tile_n = 16, s.tile_d = 128, s.stages = 3, s.warps_m = 8, s.warps_n = 1;
  } else if (rows <= 32) {
    s.tile_n = 32, s.tile_d = 64, s.stages = 3, s.warps_m = 4, s.warps_n = 2;
  } else {
    s.tile_n = 64, s.tile_d = 64, s.stages = 3, s.warps_m = 4, s.warps_n = 2;
  }
  return s;
}

// Hopper's heuristic (bf16/fp16 on sm_90/sm_90a).
KernelSpec hopper_heuristic(DType dtype, std::int64_t rows) {
  // Hopper: the wgmma variant (H200 wgmma sweep, BENCHMARKS.md): within
  // noise of mma_sync at N <= 16, faster from N = 32 on. This is only the
  // fallback: the built-in tables (autotune/builtin/, our tune runs on H100 and
  // H200) answer first for every sm_90 GPU, and there the tuner picked
  // mma_sync for N <= 16-32 by 1-4% with the L2 flushed.
  KernelSpec s;
  s.dtype = dtype;
  s.arch = Arch::sm_90a;
  s.variant = Variant::wgmma;
  s.tile_d = 64;
  s.warps_n = 1;
  if (rows <= 8) {
    s.tile_v = 128, s.tile_n = 8, s.stages = 6, s.warps_m = 4;
  } else if (rows <= 16) {
    s.tile_v = 128, s.tile_n = 16, s.stages = 4, s.warps_m = 8;
  } else if (rows <= 32) {
    s.tile_v = 128, s.tile_n = 32, s.stages = 4, s.warps_m = 8;
  } else if (rows <= 64) {
    s.tile_v = 128, s.tile_n = 64, s.stages = 3, s.warps_m = 8;
  } else {
    s.tile_v = 256, s.tile_n = 128, s.stages = 3, s.warps_m = 8;
  }
  return s;
}

bool valid(const KernelSpec& s) {
  try {
    s.validate();
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A register-epilogue spec without clusters with T_N = `rows` rounded up to
// 8 (wgmma's N step), at least 64 (what re takes), where that is valid;
// what fit_batch_tile and grow_batch_tile both resize to. `who` names the
// caller in the error for rows < 1.
std::optional<KernelSpec> re_tile_for_rows(const KernelSpec& spec, std::int64_t rows, const char* who) {
  if (rows < 1) throw InvalidArgument(fmt::format("{}: rows must be >= 1, not {}", who, rows));
  if (!spec.reg_epilogue || spec.cluster != 1 || rows > 256) return std::nullopt;
  KernelSpec s = spec;
  s.tile_n = int(std::max<std::int64_t>(64, (rows + 7) / 8 * 8));  // re takes 64 to 256 (fs_re_tile_n_ok)
  if (!valid(s)) return std::nullopt;
  return s;
}

}  // namespace

std::size_t shared_memory_limit(Arch arch) {
  switch (arch) {
    case Arch::sm_80: return 163 * 1024;
    case Arch::sm_86:
    case Arch::sm_89: return 99 * 1024;
    case Arch::sm_90:
    case Arch::sm_90a: return 227 * 1024;
  }
  return 99 * 1024;
}

KernelSpec fit_shared_memory(const KernelSpec& spec, std::size_t limit) {
  if (spec.shared_bytes() <= limit) return spec;
  // Batch tile first (a narrower one reads W again per extra tile), then the
  // deepest stages (256-byte row segments stream W best), then the most
  // stages, up to the bytes in flight of the spec (stages x tile_d): at least
  // 3 in a first pass, 2 only when nothing else fits.
  for (int min_stages : {3, 2})
    for (int tn = spec.tile_n; tn >= 8; tn = tn / 2 / 8 * 8)
      for (int td = spec.tile_d; td >= 16; td /= 2)
        for (int st = std::min(16, spec.stages * spec.tile_d / td); st >= min_stages; --st) {
          KernelSpec s = spec;
          s.tile_n = tn;
          s.tile_d = td;
          s.stages = st;
          if (s.shared_bytes() <= limit && valid(s)) return s;
        }
  throw Unsupported(fmt::format("no spec like [{}] fits in {} bytes of shared memory (it needs {})", spec.to_string(),
                                limit, spec.shared_bytes()));
}

KernelSpec fit_batch_tile(const KernelSpec& spec, std::int64_t rows) {
  const auto s = re_tile_for_rows(spec, rows, "fit_batch_tile");
  return s && rows <= spec.tile_n && s->tile_n < spec.tile_n ? *s : spec;
}

std::optional<KernelSpec> grow_batch_tile(const KernelSpec& spec, std::int64_t rows) {
  const auto s = re_tile_for_rows(spec, rows, "grow_batch_tile");
  return s && rows > spec.tile_n ? s : std::nullopt;
}

KernelSpec portable_default_spec(DType dtype, Arch arch, std::int64_t rows) {
  return fit_shared_memory(portable_heuristic(dtype, arch, rows), shared_memory_limit(arch));
}

KernelSpec default_spec(DType dtype, Arch arch, std::int64_t rows) {
  if (dtype == DType::fp32 || (arch != Arch::sm_90 && arch != Arch::sm_90a))
    return portable_default_spec(dtype, arch, rows);
  return fit_shared_memory(hopper_heuristic(dtype, rows), shared_memory_limit(arch));
}

}  // namespace fusedsample
