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
  ASSERT_EQ(needs.count, 3);
  EXPECT_EQ(std::string(needs.items[0].name), "weights");
  EXPECT_EQ(needs.items[0].bytes, 5003u * 136 * 2);
  EXPECT_EQ(needs.items[0].shape(), "[5003, 136] bf16");
  EXPECT_EQ(std::string(needs.items[1].name), "hidden_states");
  EXPECT_EQ(needs.items[1].bytes, 37u * 136 * 2);
  EXPECT_EQ(std::string(needs.items[2].name), "out");
  EXPECT_EQ(needs.items[2].bytes, 37u * 3 * 8);
  EXPECT_EQ(needs.items[2].shape(), "[37, 3] int64");

  o.dtype = fs::DType::fp32;
  a.index_type = fs::IndexType::int32;
  a.temperatures = reinterpret_cast<const float*>(0x4000);
  a.seeds = reinterpret_cast<const std::uint64_t*>(0x5000);
  a.offsets = reinterpret_cast<const std::uint64_t*>(0x6000);
  needs = fs::runtime::buffer_needs(o, a);
  ASSERT_EQ(needs.count, 6);
  EXPECT_EQ(needs.items[0].bytes, 5003u * 136 * 4);
  EXPECT_EQ(needs.items[2].bytes, 37u * 3 * 4);
  EXPECT_EQ(needs.items[2].shape(), "[37, 3] int32");
  EXPECT_EQ(needs.items[3].shape(), "[37] float");
  EXPECT_EQ(needs.items[3].bytes, 37u * 4);
  EXPECT_EQ(needs.items[4].bytes, 37u * 8);
  EXPECT_EQ(std::string(needs.items[5].name), "offsets");

  // sample_logits: fp32 [N, V] instead of W and H; N x V x 4 past 2^64 saturates.
  const float* logits = reinterpret_cast<const float*>(0x7000);
  a.temperatures = nullptr;
  a.seeds = a.offsets = nullptr;
  needs = fs::runtime::buffer_needs(o, a, logits);
  ASSERT_EQ(needs.count, 2);
  EXPECT_EQ(std::string(needs.items[0].name), "logits");
  EXPECT_EQ(needs.items[0].bytes, 37u * 5003 * 4);
  o.vocab = fs::kMaxVocab;
  a.rows = fs::kMaxRows;
  a.num_samples = 1;
  needs = fs::runtime::buffer_needs(o, a, logits);
  const unsigned __int128 largest = static_cast<unsigned __int128>(fs::kMaxRows) * std::uint64_t(fs::kMaxVocab) * 4;
  ASSERT_LE(largest, std::numeric_limits<std::size_t>::max());  // just below 2^64: computed without wrapping
  EXPECT_EQ(needs.items[0].bytes, std::size_t(largest));
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

BufferNeed need(std::uintptr_t p, std::size_t bytes, const char* name, std::uint64_t rows, std::uint64_t cols,
                const char* type) {
  return BufferNeed{at(p), bytes, name, rows, cols, type};
}

TEST(BufferExtents, ExtentAgainstTheAllocation) {
  const PointerRange range{true, 0x10000, 4096};
  // Exact fits, at the start and inside.
  EXPECT_NO_THROW(fs::runtime::check_extent(need(0x10000, 4096, "weights", 16, 128, "bf16"), range, false));
  EXPECT_NO_THROW(fs::runtime::check_extent(need(0x10100, 4096 - 0x100, "out", 480, 0, "int64"), range, false));
  EXPECT_TRUE(fs::runtime::fits(need(0x10100, 4096 - 0x100, "out", 480, 0, "int64"), range));
  // One byte short, from the start and from inside.
  expect_refused(need(0x10000, 4097, "weights", 16, 128, "bf16"), range, false,
                 {"weights", "[16, 128] bf16", "4097", "4096", "0x10000", "is the shape right?"});
  expect_refused(need(0x10100, 4096 - 0x100 + 1, "hidden_states", 2, 8, "bf16"), range, false,
                 {"hidden_states", "[2, 8] bf16", "3841 bytes", "holds only 3840"});
  // A range that does not contain the pointer (the driver's answer for another allocation).
  expect_refused(need(0x20000, 8, "seeds", 1, 0, "uint64"), range, false, {"seeds", "[1] uint64", "holds only 0"});
  // A saturated need never fits.
  expect_refused(need(0x10000, std::numeric_limits<std::size_t>::max(), "logits", 1, 1, "fp32"), range, false, {"logits"});
  // Unknown to the driver: refused unless unknown pointers may be valid (the
  // GPU reads pageable memory, or the stream is being captured).
  expect_refused(need(0x7f0000001000, 64, "out", 8, 0, "int64"), PointerRange{}, false,
                 {"out", "not memory the GPU can access"});
  EXPECT_NO_THROW(fs::runtime::check_extent(need(0x7f0000001000, 64, "out", 8, 0, "int64"), PointerRange{}, true));
  // Known, range not reported: nothing to check against.
  EXPECT_NO_THROW(fs::runtime::check_extent(need(0x10000, 1 << 30, "weights", 1, 1, "x"), PointerRange{true, 0, 0}, false));
  // A need across two adjacent ranges fits once they are joined (check_buffer_extents joins them).
  const BufferNeed across = need(0x10800, 4096, "weights", 16, 128, "bf16");
  EXPECT_FALSE(fs::runtime::fits(across, range));
  EXPECT_TRUE(fs::runtime::fits(across, PointerRange{true, 0x10000, 8192}));
}

}  // namespace
