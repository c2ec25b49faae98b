// philox_test.cpp: the host build of templates/philox.cuh against the
// published Random123 known-answer vectors (kat_vectors, philox4x32 10
// rounds) and the noise counter layout documented in philox.cuh / docs/rng.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>

#include "templates/philox.cuh"

namespace {

struct Kat {
  fs_u32 ctr[4];
  fs_u32 key[2];
  fs_u32 expected[4];
};

// From Random123's kat_vectors ("philox4x32 10" lines), independent of this code.
constexpr Kat kKats[] = {
    {{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u},
     {0x00000000u, 0x00000000u},
     {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
     {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
     {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

fs_philox_ctr make_ctr(fs_u32 a, fs_u32 b, fs_u32 c, fs_u32 d) {
  fs_philox_ctr x;
  x.v[0] = a;
  x.v[1] = b;
  x.v[2] = c;
  x.v[3] = d;
  return x;
}

bool same(const fs_philox_ctr& a, const fs_philox_ctr& b) {
  return a.v[0] == b.v[0] && a.v[1] == b.v[1] && a.v[2] == b.v[2] && a.v[3] == b.v[3];
}

std::tuple<fs_u32, fs_u32, fs_u32, fs_u32> as_tuple(const fs_philox_ctr& a) {
  return {a.v[0], a.v[1], a.v[2], a.v[3]};
}

TEST(Philox, Random123KnownAnswerVectors) {
  for (const Kat& k : kKats) {
    const fs_philox_ctr got = fs_philox4x32_10(make_ctr(k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]), k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(got.v[i], k.expected[i]) << std::hex << "ctr " << k.ctr[0] << " " << k.ctr[1] << " " << k.ctr[2]
                                         << " " << k.ctr[3] << " key " << k.key[0] << " " << k.key[1] << " word " << i;
  }
}

TEST(Philox, MulHiLoIsTheFull64BitProduct) {
  const fs_u32 pairs[][2] = {{0xD2511F53u, 0xffffffffu}, {0xCD9E8D57u, 0x12345678u}, {0xffffffffu, 0xffffffffu}, {0, 7}};
  for (const auto& p : pairs) {
    fs_u32 hi = 0;
    const fs_u32 lo = fs_mulhilo32(p[0], p[1], &hi);
    const std::uint64_t full = std::uint64_t(p[0]) * std::uint64_t(p[1]);
    EXPECT_EQ(lo, std::uint32_t(full));
    EXPECT_EQ(hi, std::uint32_t(full >> 32));
  }
}

// The documented layout: counter = (v >> 2, sample, offset_lo, offset_hi),
// key = (seed_lo, seed_hi). Values chosen so that every half is distinct and
// nonzero, so a swapped or truncated field changes the result.
TEST(Philox, NoiseBlockCounterLayout) {
  const std::uint64_t seeds[] = {0, 1, 0x0123456789abcdefull, 0xfedcba9876543210ull, ~0ull};
  const std::uint64_t offsets[] = {0, 5, 0x00000001ffffffffull, 0xa5a5a5a55a5a5a5aull, ~0ull};
  const std::uint64_t vocab[] = {0, 3, 4, 151935, 0x3ffffffffull};
  const std::uint32_t samples[] = {0, 1, 7, 0xffffffffu};
  for (auto seed : seeds)
    for (auto offset : offsets)
      for (auto v : vocab)
        for (auto s : samples) {
          const fs_philox_ctr expected =
              fs_philox4x32_10(make_ctr(std::uint32_t(v >> 2), s, std::uint32_t(offset), std::uint32_t(offset >> 32)),
                               std::uint32_t(seed), std::uint32_t(seed >> 32));
          const fs_philox_ctr got = fs_noise_block(seed, offset, v, s);
          ASSERT_TRUE(same(got, expected)) << "seed " << seed << " offset " << offset << " v " << v << " sample " << s;
        }
}

TEST(Philox, NoiseBlockIsSharedByTheFourIndicesOfAGroup) {
  for (std::uint64_t g : {0ull, 1ull, 999ull}) {
    const fs_philox_ctr base = fs_noise_block(42, 7, 4 * g, 3);
    for (int j = 1; j < 4; ++j) EXPECT_TRUE(same(base, fs_noise_block(42, 7, 4 * g + j, 3)));
    EXPECT_FALSE(same(base, fs_noise_block(42, 7, 4 * g + 4, 3)));
  }
}

TEST(Philox, EveryInputFieldChangesTheWords) {
  const std::uint64_t seed = 0x1122334455667788ull, offset = 0x99aabbccddeeff00ull, v = 4000;
  const std::uint32_t s = 2;
  const fs_philox_ctr base = fs_noise_block(seed, offset, v, s);
  // Low and high halves of the 64-bit seed and offset each matter.
  EXPECT_FALSE(same(base, fs_noise_block(seed ^ 1, offset, v, s)));
  EXPECT_FALSE(same(base, fs_noise_block(seed ^ (1ull << 32), offset, v, s)));
  EXPECT_FALSE(same(base, fs_noise_block(seed, offset ^ 1, v, s)));
  EXPECT_FALSE(same(base, fs_noise_block(seed, offset ^ (1ull << 32), v, s)));
  EXPECT_FALSE(same(base, fs_noise_block(seed, offset, v + 4, s)));
  EXPECT_FALSE(same(base, fs_noise_block(seed, offset, v, s + 1)));
  // Swapping seed and offset must not collide either.
  EXPECT_FALSE(same(base, fs_noise_block(offset, seed, v, s)));
}

TEST(Philox, NoCollisionsOverAGridOfInputs) {
  std::set<std::tuple<fs_u32, fs_u32, fs_u32, fs_u32>> seen;
  std::size_t n = 0;
  for (std::uint64_t seed : {0ull, 1ull, 2ull, 1ull << 32})
    for (std::uint64_t offset : {0ull, 1ull, 2ull, 1ull << 32})
      for (std::uint64_t group = 0; group < 64; ++group)
        for (std::uint32_t s = 0; s < 4; ++s) {
          seen.insert(as_tuple(fs_noise_block(seed, offset, 4 * group, s)));
          ++n;
        }
  EXPECT_EQ(seen.size(), n);
}

// Words look uniform: each of the 32 bits is set about half the time.
TEST(Philox, BitsAreBalanced) {
  constexpr int kBlocks = 1 << 16;
  int ones[32] = {};
  for (int g = 0; g < kBlocks; ++g) {
    const fs_philox_ctr r = fs_noise_block(12345, 678, std::uint64_t(g) * 4, 0);
    for (int j = 0; j < 4; ++j)
      for (int b = 0; b < 32; ++b) ones[b] += (r.v[j] >> b) & 1u;
  }
  const double n = 4.0 * kBlocks, sd = std::sqrt(n * 0.25);
  for (int b = 0; b < 32; ++b) EXPECT_NEAR(ones[b], n / 2, 6 * sd) << "bit " << b;
}

}  // namespace
