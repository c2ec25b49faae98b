// warm_compile_gpu_test.cpp: with FUSEDSAMPLE_TEST_WARM=1, a global test
// environment compiles the forced configs the GPU tests use (warm_specs.hpp)
// on every core before any test runs; they land in the process memo and the
// module cache. Off by default (a filtered run would pay for all of them);
// without a GPU it does nothing. A spec that fails to compile here is only
// counted: the test that runs it reports the error.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "compiler/parallel_compile.hpp"
#include "fusedsample/fusedsample.hpp"
#include "tests/support/warm_specs.hpp"

namespace fusedsample {
namespace {

class WarmCompileEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* on = std::getenv("FUSEDSAMPLE_TEST_WARM");
    if (on == nullptr || std::strcmp(on, "1") != 0 || !gpu_available()) return;
    const std::vector<DeviceInfo> devices = list_devices();
    const std::vector<KernelSpec> specs = testing::warm_specs(devices[0].cc_major, devices[0].cc_minor);
    const auto t0 = std::chrono::steady_clock::now();
    int failed = 0;
    for (const CompileOutcome& o : compile_all(specs)) failed += o.ok ? 0 : 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ warm     ] %zu specs compiled on %u threads in %.1f s (%d failed; FUSEDSAMPLE_TEST_WARM=1)\n",
                specs.size(), std::thread::hardware_concurrency(), s, failed);
  }
};

[[maybe_unused]] ::testing::Environment* const kWarmCompile =
    ::testing::AddGlobalTestEnvironment(new WarmCompileEnvironment);

}  // namespace
}  // namespace fusedsample
