// sampler_api_context_gpu_test.cpp: Sampler lifetimes and the CUDA context
// on a GPU: a second Sampler works after the first is destroyed (checked in
// a child process, which retains no context of its own).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_api_problem.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using namespace testing::sampler_api_tests;

// Sampler lifetimes must not break the context: on a thread with no current
// context, a Sampler takes device 0's primary context; destroying it must not
// reset that context (which stays current on the thread), or a second Sampler
// would adopt a dead context. Runs in a child process because the rest of
// this binary keeps the primary context retained (testing::use_process_context),
// which would hide the problem.
TEST(SamplerContextGpuChild, DISABLED_SecondSamplerAfterFirstIsDestroyed) {
  FS_REQUIRE_GPU();
  // Deliberately no testing::use_process_context().
  std::mt19937_64 rng(1234);
  const std::int64_t V = 1000, d = 64, N = 4;
  const auto w = testing::random_storage(DType::bf16, std::size_t(V * d), 1.0, rng);
  const auto h = testing::random_storage(DType::bf16, std::size_t(N * d), 0.25, rng);
  auto run = [&](Sampler& sampler) {
    const DeviceMemory dw = to_device(w), dh = to_device(h);
    const auto got = run64(std::size_t(N), [&](const DeviceMemory& out) {
      SampleArgs a;
      a.weights = dw.as<const void>();
      a.hidden_states = dh.as<const void>();
      a.rows = N;
      a.out = out.as<void>();
      sampler.sample(a, nullptr);
    });
    expect_all_in_range(got, V, "sample");
    return got;
  };
  std::vector<std::int64_t> first_result;
  {
    Sampler first(testing::sampler_options(V, d, DType::bf16));
    first_result = run(first);
  }
  Sampler second(testing::sampler_options(V, d, DType::bf16));
  EXPECT_EQ(run(second), first_result);
}

TEST(SamplerContextGpu, SamplerLifetimeKeepsContextUsable) {
  FS_REQUIRE_GPU();
  char self[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0) << "cannot resolve /proc/self/exe";
  // The child ignores the parent's sharding and report settings.
  const std::string child = "env -u GTEST_OUTPUT -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_SHARD_STATUS_FILE '" +
                            std::string(self, std::size_t(len)) +
                            "' --gtest_filter=SamplerContextGpuChild.DISABLED_SecondSamplerAfterFirstIsDestroyed"
                            " --gtest_also_run_disabled_tests 2>&1";
  FILE* pipe = popen(child.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << "popen failed: " << child;
  std::string output;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, got);
  const int status = pclose(pipe);
  if (output.find("CUDA_ERROR_DEVICES_UNAVAILABLE") != std::string::npos)
    GTEST_SKIP() << "the GPU does not accept a second process (exclusive compute mode)";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "a second Sampler created after the first was destroyed does not work:\n" << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

}  // namespace
}  // namespace fusedsample
