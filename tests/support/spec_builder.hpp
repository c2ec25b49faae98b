// spec_builder.hpp: a KernelSpec from its fields, for tests.
#pragma once
#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::testing {

inline KernelSpec build_spec(DType dtype, Variant variant, Arch arch, int tile_v, int tile_n, int tile_d, int stages,
                             int warps_m, int warps_n) {
  KernelSpec s;
  s.dtype = dtype;
  s.variant = variant;
  s.arch = arch;
  s.tile_v = tile_v;
  s.tile_n = tile_n;
  s.tile_d = tile_d;
  s.stages = stages;
  s.warps_m = warps_m;
  s.warps_n = warps_n;
  return s;
}

}  // namespace fusedsample::testing
