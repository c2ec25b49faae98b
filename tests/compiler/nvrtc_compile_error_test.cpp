// nvrtc_compile_error_test.cpp: a source NVRTC rejects throws CompileError
// carrying the log, the options and the source. No GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/nvrtc_test_specs.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::nvrtc_tests;

TEST(NvrtcCompileError, CarriesLogOptionsAndSource) {
  const KernelSpec s = make_spec(DType::bf16, Variant::mma_sync, Arch::sm_80, 64, 8, 32, 3, 4, 1);
  fs::RenderedKernel r = fs::render_kernel(s);
  r.source += "\nthis is not valid CUDA C++ @@@;\n";
  try {
    fs::compile_uncached(r);
    FAIL() << "a syntax error compiled";
  } catch (const fs::CompileError& e) {
    EXPECT_FALSE(e.log().empty());
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_EQ(e.source(), r.source);
    for (const auto& o : r.options) EXPECT_NE(e.options().find(o), std::string::npos) << o;
    const std::string what = e.what();
    EXPECT_NE(what.find(s.to_string()), std::string::npos) << what;
    EXPECT_NE(what.find(e.log()), std::string::npos) << "what() should include the log";
  }
}

}  // namespace
