// kernel_spec_checks.hpp: what the KernelSpec tests
// (tests/compiler/kernel_spec_*_test.cpp) share: the dtypes and arches, a
// spec from its fields, and a check of an exception's type and message.
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "tests/support/spec_builder.hpp"

namespace fusedsample::testing::kernel_spec_tests {

// The spec types, so that `using namespace fusedsample::testing::kernel_spec_tests;` is
// all a test file needs.
using fusedsample::Arch;
using fusedsample::DType;
using fusedsample::KernelSpec;
using fusedsample::Variant;

inline constexpr DType kDTypes[] = {DType::bf16, DType::fp16, DType::fp32};
inline constexpr Arch kArchs[] = {Arch::sm_80, Arch::sm_86, Arch::sm_89, Arch::sm_90, Arch::sm_90a};

inline KernelSpec spec(DType dt, Variant var, int tv, int tn, int td, int st, int wm, int wn, Arch arch = Arch::sm_90) {
  return fusedsample::testing::build_spec(dt, var, arch, tv, tn, td, st, wm, wn);
}

// Runs f, expecting exception E whose message contains every needle.
template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& needles, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << what << ": '" << msg << "' lacks '" << n << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

}  // namespace fusedsample::testing::kernel_spec_tests
