// no_gpu_behavior_test.cpp: behaviour on a machine without a CUDA driver or
// GPU (the CI machine). On a GPU machine the "no GPU" expectations are
// skipped; the validation-before-driver check runs everywhere.
// (Not named no_gpu_test.cpp: tests/CMakeLists.txt sends every file ending in
// _gpu_test.cpp to the GPU test binary.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/sampler.hpp"

namespace fs = fusedsample;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool says_no_gpu_or_driver(const std::string& msg) {
  const std::string m = lower(msg);
  return m.find("no gpu") != std::string::npos || m.find("no cuda driver") != std::string::npos ||
         m.find("driver") != std::string::npos;
}

#define FS_SKIP_IF_GPU()                                                                         \
  do {                                                                                           \
    if (::fusedsample::gpu_available())                                                          \
      GTEST_SKIP() << "a GPU is available here; the no-GPU behaviour is tested on GPU-less CI"; \
  } while (0)

fs::SamplerOptions valid_options() {
  fs::SamplerOptions o;
  o.vocab = 32000;
  o.hidden = 4096;
  o.dtype = fs::DType::bf16;
  return o;
}

TEST(NoGpu, GpuAvailableIsFalseWithAReason) {
  FS_SKIP_IF_GPU();
  std::string why;
  EXPECT_FALSE(fs::gpu_available(&why));
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(says_no_gpu_or_driver(why)) << why;
  // Stable across calls, and the reason argument is optional.
  std::string again;
  EXPECT_FALSE(fs::gpu_available(&again));
  EXPECT_EQ(again, why);
  EXPECT_FALSE(fs::gpu_available());
}

TEST(NoGpu, SamplerThrowsNoGpu) {
  FS_SKIP_IF_GPU();
  for (fs::DType d : {fs::DType::bf16, fs::DType::fp16, fs::DType::fp32}) {
    fs::SamplerOptions o = valid_options();
    o.dtype = d;
    try {
      fs::Sampler s(o);
      ADD_FAILURE() << "constructed a Sampler without a GPU";
    } catch (const fs::NoGpu& e) {
      EXPECT_TRUE(says_no_gpu_or_driver(e.what())) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected NoGpu, got: " << e.what();
    }
  }
}

TEST(NoGpu, DriverQueriesThrowNoGpu) {
  FS_SKIP_IF_GPU();
  EXPECT_THROW(fs::driver_version(), fs::NoGpu);
  EXPECT_THROW(fs::list_devices(), fs::NoGpu);
}

// Validation comes before the driver: bad options are InvalidArgument on
// every machine, GPU or not.
TEST(NoGpu, InvalidOptionsAreReportedBeforeTheDriver) {
  fs::SamplerOptions o = valid_options();
  o.vocab = 0;
  EXPECT_THROW(fs::Sampler{o}, fs::InvalidArgument);
  o = valid_options();
  o.hidden = 12;
  EXPECT_THROW(fs::Sampler{o}, fs::InvalidArgument);
  o = valid_options();
  o.spec = fs::default_spec(fs::DType::fp32, fs::Arch::sm_90, 1);
  EXPECT_THROW(fs::Sampler{o}, fs::InvalidArgument);
}

}  // namespace
