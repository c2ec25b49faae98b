// sampler_api_outputs_gpu_test.cpp: the host API's outputs on a GPU: int32
// and int64 indices agree, and every output element is written (nothing
// past the end), for the fused path and sample_logits.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
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

TEST_F(SamplerApiGpu, Int32OutputMatchesInt64) {
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32}) {
    SCOPED_TRACE(std::string(to_string(dtype)));
    const Problem pb(dtype, rng);
    Sampler sampler(testing::sampler_options(pb.V, pb.d, dtype));
    const int S = 3;
    const std::size_t n = std::size_t(pb.N * S);
    const std::uint64_t seed = rng(), offset = rng();

    SampleArgs a = pb.args(S);
    a.seed = seed;
    a.offset = offset;
    a.temperature = 0.9f;
    const auto got = sample_both_index_types(sampler, a, n);
    expect_all_in_range(got.i64, pb.V, "int64");
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(got.i32[i], got.i64[i]) << "element " << i;
  }
}

// Every output element is written, nothing after the last one is: the output
// buffer and a guard region after it are poisoned with 0xAB bytes first. For
// int64 and int32 outputs, the fused path and sample_logits.
TEST_F(SamplerApiGpu, PoisonedOutputIsFullyWritten) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  std::normal_distribution<float> logit(0.0f, 2.0f);
  std::vector<float> logits(std::size_t(pb.N * pb.V));
  for (float& x : logits) x = logit(rng);
  const DeviceMemory dlogits = to_device(logits);
  const int S = 3;
  const std::size_t n = std::size_t(pb.N * S), guard = 64;

  for (const IndexType type : {IndexType::int64, IndexType::int32})
    for (const bool unfused : {false, true}) {
      const std::string what = std::string(type == IndexType::int64 ? "int64" : "int32") +
                               (unfused ? " sample_logits" : " sample");
      SCOPED_TRACE(what);
      const std::size_t elem = type == IndexType::int64 ? 8 : 4;
      DeviceMemory out((n + guard) * elem);
      testing::poison(out);
      SampleArgs a = pb.args(out, S, type);
      a.seed = rng();
      a.offset = rng();
      a.temperature = 1.0f;
      if (unfused) sampler.sample_logits(dlogits.as<const float>(), a, nullptr);
      else sampler.sample(a, nullptr);
      const auto bytes = from_device<std::uint8_t>(out, (n + guard) * elem);
      std::size_t unwritten = 0, bad = 0, guard_written = 0;
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t v;
        if (type == IndexType::int64) {
          std::memcpy(&v, &bytes[i * 8], 8);
          unwritten += v == testing::kPoison64;
        } else {
          std::int32_t v32;
          std::memcpy(&v32, &bytes[i * 4], 4);
          unwritten += v32 == testing::kPoison32;
          v = v32;
        }
        if (v < 0 || v >= pb.V) {
          if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " = " << v;
        }
      }
      for (std::size_t b = n * elem; b < bytes.size(); ++b) guard_written += bytes[b] != testing::kPoisonByte;
      EXPECT_EQ(unwritten, 0u) << "elements left unwritten";
      EXPECT_EQ(bad, 0u) << "elements outside [0, V)";
      EXPECT_EQ(guard_written, 0u) << "bytes written past the end of out";
    }
}

}  // namespace
}  // namespace fusedsample
