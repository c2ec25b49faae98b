// spec_builder.hpp: a KernelSpec from its fields, for tests.
#pragma once
#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::testing {

inline KernelSpec build_spec(DType dtype, Variant variant, Arch arch, int tile_v, int tile_n, int tile_d, int stages,
                             int warps_m, int warps_n) {
  return KernelSpec{.tile_v = tile_v, .tile_n = tile_n, .tile_d = tile_d, .stages = stages, .warps_m = warps_m,
                    .warps_n = warps_n, .dtype = dtype, .arch = arch, .variant = variant};
}

}  // namespace fusedsample::testing
