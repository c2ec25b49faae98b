// buffer_extents_test.cpp: what each buffer of a call must hold
// (buffer_needs) and the test of one against its allocation's range
// (check_extent), on the host: exact fits pass, one byte short fails naming
// the buffer and its shape, an unknown pointer fails unless the GPU reads
// pageable memory, and the largest logits (just below 2^64 bytes) do not wrap.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/sampler.hpp"
#include "runtime/buffer_extents.hpp"

namespace {

namespace fs = fusedsample;
using fs::runtime::BufferNeed;
using fs::runtime::PointerRange;

const void* at(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(BufferExtents, NeedsOfASampleCall) {
  fs::SamplerOptions o;
  o.vocab = 5003;
  o.hidden = 136;
  o.dtype = fs::DType::bf16;
  fs::SampleArgs a;
  a.weights = at(0x1000);
  a.hidden_states = at(0x2000);
  a.out = reinterpret_cast<void*>(0x3000);
  a.rows = 37;
  a.num_samples = 3;
  auto needs = fs::runtime::buffer_needs(o, a);
  ASSERT_EQ(needs.size(), 3u);
  EXPECT_EQ(std::string(needs[0].name), "weights");
  EXPECT_EQ(needs[0].bytes, 5003u * 136 * 2);
  EXPECT_EQ(needs[0].shape, "[5003, 136] bf16");
  EXPECT_EQ(std::string(needs[1].name), "hidden_states");
  EXPECT_EQ(needs[1].bytes, 37u * 136 * 2);
  EXPECT_EQ(std::string(needs[2].name), "out");
  EXPECT_EQ(needs[2].bytes, 37u * 3 * 8);
  EXPECT_EQ(needs[2].shape, "[37, 3] int64");

  o.dtype = fs::DType::fp32;
  a.index_type = fs::IndexType::int32;
  a.temperatures = reinterpret_cast<const float*>(0x4000);
  a.seeds = reinterpret_cast<const std::uint64_t*>(0x5000);
  a.offsets = reinterpret_cast<const std::uint64_t*>(0x6000);
  needs = fs::runtime::buffer_needs(o, a);
  ASSERT_EQ(needs.size(), 6u);
  EXPECT_EQ(needs[0].bytes, 5003u * 136 * 4);
  EXPECT_EQ(needs[2].bytes, 37u * 3 * 4);
  EXPECT_EQ(needs[2].shape, "[37, 3] int32");
  EXPECT_EQ(needs[3].bytes, 37u * 4);
  EXPECT_EQ(needs[4].bytes, 37u * 8);
  EXPECT_EQ(std::string(needs[5].name), "offsets");

  // sample_logits: fp32 [N, V] instead of W and H; N x V x 4 past 2^64 saturates.
  const float* logits = reinterpret_cast<const float*>(0x7000);
  a.temperatures = nullptr;
  a.seeds = a.offsets = nullptr;
  needs = fs::runtime::buffer_needs(o, a, logits);
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(std::string(needs[0].name), "logits");
  EXPECT_EQ(needs[0].bytes, 37u * 5003 * 4);
  o.vocab = fs::kMaxVocab;
  a.rows = fs::kMaxRows;
  a.num_samples = 1;
  needs = fs::runtime::buffer_needs(o, a, logits);
  const unsigned __int128 largest = static_cast<unsigned __int128>(fs::kMaxRows) * std::uint64_t(fs::kMaxVocab) * 4;
  ASSERT_LE(largest, std::numeric_limits<std::size_t>::max());  // just below 2^64: computed without wrapping
  EXPECT_EQ(needs[0].bytes, std::size_t(largest));
}

void expect_refused(const BufferNeed& need, const PointerRange& range, bool pageable,
                    const std::vector<std::string>& needles) {
  try {
    fs::runtime::check_extent(need, range, pageable);
    ADD_FAILURE() << need.name << " was not refused";
  } catch (const fs::InvalidArgument& e) {
    const std::string what = e.what();
    for (const auto& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' not in: " << what;
  }
}

TEST(BufferExtents, ExtentAgainstTheAllocation) {
  const PointerRange range{true, 0x10000, 4096};
  // Exact fits, at the start and inside.
  EXPECT_NO_THROW(fs::runtime::check_extent({at(0x10000), 4096, "weights", "[16, 128] bf16"}, range, false));
  EXPECT_NO_THROW(fs::runtime::check_extent({at(0x10100), 4096 - 0x100, "out", "[x]"}, range, false));
  EXPECT_NO_THROW(fs::runtime::check_extent({at(0x11000), 0, "out", "[0]"}, range, false));
  // One byte short, from the start and from inside.
  expect_refused({at(0x10000), 4097, "weights", "[16, 128] bf16"}, range, false,
                 {"weights", "[16, 128] bf16", "4097", "4096", "0x10000"});
  expect_refused({at(0x10100), 4096 - 0x100 + 1, "hidden_states", "[2, 8] bf16"}, range, false,
                 {"hidden_states", "3841 bytes", "holds only 3840"});
  // A range that does not contain the pointer (the driver's answer for another allocation).
  expect_refused({at(0x20000), 8, "seeds", "[1] uint64"}, range, false, {"seeds", "holds only 0"});
  // A saturated need never fits.
  expect_refused({at(0x10000), std::numeric_limits<std::size_t>::max(), "logits", "[a, b] fp32"}, range, false,
                 {"logits"});
  // Unknown to the driver: refused unless the GPU reads pageable memory.
  expect_refused({at(0x7f0000001000), 64, "out", "[8] int64"}, PointerRange{}, false,
                 {"out", "not memory the GPU can access"});
  EXPECT_NO_THROW(fs::runtime::check_extent({at(0x7f0000001000), 64, "out", "[8] int64"}, PointerRange{}, true));
  // Known, range not reported: nothing to check against.
  EXPECT_NO_THROW(fs::runtime::check_extent({at(0x10000), 1 << 30, "weights", "[x]"}, PointerRange{true, 0, 0}, false));
}

}  // namespace
