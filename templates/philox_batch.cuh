// philox_batch.cuh: the same Philox4x32-10 words as fs_noise_block
// (philox.cuh), computed for G vocabulary groups of one (row, sample) at a
// time, S groups apart (consecutive by default), with less work per group.
// The counter is (x, sample, offset_lo, offset_hi) with only x =
// vocab_index / 4 varying along a row, so:
//   round 1: the multiply of word 2 (offset_lo) and every xor with sample,
//            offset_hi or the key are the same for the whole row;
//   round 2: the multiply of word 0 (from round 1's constant half) too;
//   round 3: word 3 (round 2's constant low product) folds into a constant.
// fs_philox_row holds those constants; fs_philox_blocks then does 18
// multiplies instead of 20 per group and shares each round's key between the
// G groups (keys k + r * Weyl, one add per round for all G). Host and device
// build the same code; tests/templates/philox_batch_test.cpp checks it word
// for word against fs_noise_block.
#pragma once
#include "philox.cuh"

struct fs_philox_row {
  fs_u32 k0, k1;  // the key (the row's seed)
  fs_u32 c1;      // round 1: word 2 = hi(M0 x) ^ c1
  fs_u32 c2;      // round 2: word 0 = hi(M1 w2) ^ c2
  fs_u32 c3;      // round 2: word 2 = lo(M0 x) ^ c3
  fs_u32 c4;      // round 3: word 2 = hi(M0 w0) ^ c4
};

FS_HD fs_philox_row fs_philox_row_init(fs_u64 seed, fs_u64 offset, fs_u32 sample) {
  const fs_u32 kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  const fs_u32 kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  fs_philox_row r;
  r.k0 = (fs_u32)seed;
  r.k1 = (fs_u32)(seed >> 32);
  // Round 1 (key k): word 0 = hi(M1 off_lo) ^ sample ^ k0, word 1 = lo(M1 off_lo).
  fs_u32 hi1;
  const fs_u32 lo1 = fs_mulhilo32(kMul1, (fs_u32)offset, &hi1);
  const fs_u32 w0 = hi1 ^ sample ^ r.k0, w1 = lo1;
  r.c1 = (fs_u32)(offset >> 32) ^ r.k1;
  // Round 2 (key k + W): the product M0 * w0 is constant.
  fs_u32 hi0;
  const fs_u32 lo0 = fs_mulhilo32(kMul0, w0, &hi0);
  r.c2 = w1 ^ (r.k0 + kWeyl0);
  r.c3 = hi0 ^ (r.k1 + kWeyl1);
  // Round 3 (key k + 2W): word 3 of round 2's output is lo0.
  r.c4 = lo0 ^ (r.k1 + 2u * kWeyl1);
  return r;
}

// The words of groups x0, x0 + S, ..., x0 + (G - 1) S (x = vocab_index / 4;
// S = 2: tokens v and v + 8, as a take-up of the register epilogue needs).
// The G chains are independent, so the scheduler interleaves their rounds.
template <int G, int S = 1>
FS_HD void fs_philox_blocks(const fs_philox_row& r, fs_u32 x0, fs_philox_ctr (&out)[G]) {
  const fs_u32 kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  const fs_u32 kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  fs_u32 a[G], b[G], c[G], d[G];  // the counter words after each round
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int j = 0; j < G; ++j) {
    // Round 1: (x, s, off_lo, off_hi) -> (const, const, hi(M0 x) ^ c1, lo(M0 x)).
    fs_u32 h0;
    const fs_u32 l0 = fs_mulhilo32(kMul0, x0 + (fs_u32)(S * j), &h0);
    const fs_u32 w2 = h0 ^ r.c1;
    // Round 2: word 0's product is constant (folded into c3).
    fs_u32 h1;
    const fs_u32 l1 = fs_mulhilo32(kMul1, w2, &h1);
    a[j] = h1 ^ r.c2;  // word 0
    b[j] = l1;         // word 1
    c[j] = l0 ^ r.c3;  // word 2
    // word 3 is constant (folded into c4)
    // Round 3.
    fs_u32 g0, g1;
    const fs_u32 m0 = fs_mulhilo32(kMul0, a[j], &g0);
    const fs_u32 m1 = fs_mulhilo32(kMul1, c[j], &g1);
    a[j] = g1 ^ b[j] ^ (r.k0 + 2u * kWeyl0);
    b[j] = m1;
    c[j] = g0 ^ r.c4;
    d[j] = m0;
  }
  fs_u32 k0 = r.k0 + 3u * kWeyl0, k1 = r.k1 + 3u * kWeyl1;
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int round = 3; round < 10; ++round) {
#if defined(__CUDACC__)
#pragma unroll
#endif
    for (int j = 0; j < G; ++j) {
      fs_u32 g0, g1;
      const fs_u32 m0 = fs_mulhilo32(kMul0, a[j], &g0);
      const fs_u32 m1 = fs_mulhilo32(kMul1, c[j], &g1);
      const fs_u32 na = g1 ^ b[j] ^ k0, nc = g0 ^ d[j] ^ k1;
      a[j] = na;
      b[j] = m1;
      c[j] = nc;
      d[j] = m0;
    }
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int j = 0; j < G; ++j) {
    out[j].v[0] = a[j];
    out[j].v[1] = b[j];
    out[j].v[2] = c[j];
    out[j].v[3] = d[j];
  }
}
