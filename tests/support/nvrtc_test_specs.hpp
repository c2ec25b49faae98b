// nvrtc_test_specs.hpp: what the compiler tests (tests/compiler/nvrtc_*_test.cpp,
// wgmma_instruction_test.cpp) share: a spec of any variant and arch from its
// fields, and the target arches every variant compiles for.
#pragma once
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/spec_builder.hpp"

namespace fusedsample::testing::nvrtc_tests {

// The spec types, so that `using namespace fusedsample::testing::nvrtc_tests;` is
// all a test file needs.
using fusedsample::Arch;
using fusedsample::DType;
using fusedsample::KernelSpec;
using fusedsample::Variant;

inline KernelSpec make_spec(DType dt, Variant var, Arch arch, int tv, int tn, int td, int st, int wm, int wn) {
  return fusedsample::testing::build_spec(dt, var, arch, tv, tn, td, st, wm, wn);
}

inline constexpr Arch kArchs[] = {Arch::sm_80, Arch::sm_90, Arch::sm_90a};

}  // namespace fusedsample::testing::nvrtc_tests
