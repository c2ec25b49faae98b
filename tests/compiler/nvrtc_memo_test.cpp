// nvrtc_memo_test.cpp: compile_kernel memoizes: the same spec gives the same
// compiled kernel, concurrent requests share one compile, and an invalid spec
// is not memoized. No GPU needed.
#include <gtest/gtest.h>

#include <exception>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/nvrtc_test_specs.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::nvrtc_tests;

TEST(NvrtcMemo, SameSpecSamePointer) {
  const KernelSpec s = make_spec(DType::fp16, Variant::mma_sync, Arch::sm_80, 64, 8, 32, 2, 4, 1);
  const auto a = fs::compile_kernel(s);
  const auto b = fs::compile_kernel(s);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->spec, s);
  EXPECT_FALSE(a->ptx.empty());
  EXPECT_FALSE(a->cubin.empty());
  // An invalid spec throws every time and is not memoized as a success.
  KernelSpec bad = s;
  bad.tile_n = 12;
  EXPECT_THROW(fs::compile_kernel(bad), fs::InvalidArgument);
  EXPECT_THROW(fs::compile_kernel(bad), fs::InvalidArgument);
}

TEST(NvrtcMemo, ConcurrentRequestsShareOneCompile) {
  const KernelSpec s = make_spec(DType::fp32, Variant::simt, Arch::sm_80, 64, 8, 16, 2, 2, 1);
  constexpr int kThreads = 4;
  std::vector<const fs::CompiledKernel*> got(kThreads, nullptr);
  std::vector<std::string> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        got[std::size_t(t)] = fs::compile_kernel(s).get();  // the memo keeps it alive
      } catch (const std::exception& e) {
        errors[std::size_t(t)] = e.what();
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[std::size_t(t)], "") << "thread " << t;
    EXPECT_NE(got[std::size_t(t)], nullptr);
    EXPECT_EQ(got[std::size_t(t)], got[0]) << "thread " << t;
  }
  EXPECT_EQ(fs::compile_kernel(s).get(), got[0]);
}

}  // namespace
