// reference_arguments_test.cpp: the CPU reference sampler's handling of bad
// input: invalid temperatures give -1, bad shapes throw.
//
// The inputs are hand-built (tests/support/reference_problem.hpp): with d = 8
// and hidden row n = e_c, logit_v = W[v][c] exactly (fp32 storage, one nonzero
// product), so every expectation below is computed here from the logits we
// chose, never taken from the sampler.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <cstddef>
#include <iterator>
#include <limits>

#include "fusedsample/errors.hpp"
#include "fusedsample/reference.hpp"
#include "fusedsample/sampler.hpp"
#include "tests/support/reference_problem.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::reference_tests;

// ------------------------------------------------------ invalid temperature

TEST(ReferenceTemperature, InvalidTemperatureGivesMinusOne) {
  Problem p(6);
  p.set_column(0, {0, 1, 2, 3, 4, 5});
  // Positive below 2^-64 too (session 31: at 1e-39, 1/tau is inf, every
  // positive logit scored +inf and token 1, the lowest of them, won).
  const float bad[] = {-1.0f, -0.0001f, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(), 1e-39f, std::numeric_limits<float>::denorm_min(), 1e-30f,
                       std::nextafter(fs::kMinTemperature, 0.0f)};
  for (float t : bad) p.add_row(0, t, 1, 2);
  p.add_row(0, 1.0f, 1, 2);  // a valid row between/after invalid ones is unaffected
  p.add_row(0, -0.0f, 1, 2);  // -0 == 0: greedy
  p.add_row(0, fs::kMinTemperature, 1, 2);  // the smallest valid: 5 * 2^64 is finite, the noise negligible
  const int S = 3;
  const auto r = p.run(S);
  for (std::size_t n = 0; n < std::size(bad); ++n)
    for (int s = 0; s < S; ++s) EXPECT_EQ(r[n * S + s].index, -1) << "temperature " << bad[n];
  for (int s = 0; s < S; ++s) {
    EXPECT_GE(r[std::size(bad) * S + s].index, 0);
    EXPECT_EQ(r[(std::size(bad) + 1) * S + s].index, 5);
    EXPECT_EQ(r[(std::size(bad) + 2) * S + s].index, 5);
  }
}

TEST(ReferenceArguments, BadShapesThrow) {
  Problem p(4);
  p.add_row(0, 1.0f, 0, 0);
  EXPECT_THROW(fs::reference_sample(nullptr, p.H.data(), fs::DType::fp32, 4, kD, 1, p.params, 1), fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 0, kD, 1, p.params, 1), fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 4, kD, 1, p.params, 0), fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 4, kD, 2, p.params, 1), fs::InvalidArgument);
}

// Until session 40 an unknown dtype read the inputs as fp16, and a V past the
// Sampler's limit was accepted (the noise's counter layout holds below it).
TEST(ReferenceArguments, UnknownDTypeAndTooLargeShapesThrow) {
  Problem p(4);
  p.add_row(0, 1.0f, 0, 0);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), static_cast<fs::DType>(7), 4, kD, 1, p.params, 1),
               fs::Unsupported);
  // Checked before anything is read or allocated (V = 2^61 made the worker's
  // logit vector throw std::length_error on its thread: std::terminate).
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, std::int64_t(1) << 61, kD, 1, p.params, 1),
               fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, std::int64_t(1) << 31, kD, 1, p.params, 1),
               fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 4, std::int64_t(1) << 25, 1, p.params, 1),
               fs::InvalidArgument);
}

// A worker thread's exception reaches the caller. Here: std::bad_alloc for
// the row's logits, under an address-space limit, in a child process (before
// session 40 it escaped the thread and aborted the process). Exit codes: 0
// caught, 2 nothing thrown, 3 no limit could be set.
[[noreturn]] void reference_under_one_gib() {
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = std::size_t(1) << 30;
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
  Problem p(4);
  p.add_row(0, 1.0f, 0, 0);
  try {
    // 2^28 doubles (2 GiB) of logits: allocated on the worker before W is read.
    fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, std::int64_t(1) << 28, kD, 1, p.params, 1);
  } catch (const std::bad_alloc&) {
    std::_Exit(0);
  }
  std::_Exit(2);
}

TEST(ReferenceArguments, WorkerExceptionReachesTheCaller) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit and AddressSanitizer's shadow memory do not mix";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(reference_under_one_gib(), ::testing::ExitedWithCode(0), "");
#endif
}

}  // namespace
