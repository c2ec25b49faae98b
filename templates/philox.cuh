// philox.cuh: Philox4x32-10 (Salmon et al., SC'11), counter-based.
// One source for host and device so the CPU reference draws the same bits.
#pragma once
#include "fs_types.cuh"

struct fs_philox_ctr {
  fs_u32 v[4];
};

FS_HD fs_u32 fs_mulhilo32(fs_u32 a, fs_u32 b, fs_u32* hi) {
  fs_u64 p = (fs_u64)a * (fs_u64)b;
  *hi = (fs_u32)(p >> 32);
  return (fs_u32)p;
}

// Philox4x32 with 10 rounds. counter c, key (k0, k1).
FS_HD fs_philox_ctr fs_philox4x32_10(fs_philox_ctr c, fs_u32 k0, fs_u32 k1) {
  const fs_u32 kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  const fs_u32 kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    fs_u32 hi0, hi1;
    const fs_u32 lo0 = fs_mulhilo32(kMul0, c.v[0], &hi0);
    const fs_u32 lo1 = fs_mulhilo32(kMul1, c.v[2], &hi1);
    fs_philox_ctr n;
    n.v[0] = hi1 ^ c.v[1] ^ k0;
    n.v[1] = lo1;
    n.v[2] = hi0 ^ c.v[3] ^ k1;
    n.v[3] = lo0;
    c = n;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

// The noise contract (docs/rng.md): the four words for vocabulary group
// (vocab_index / 4) of sample `sample` of a row with (seed, offset).
// Word (vocab_index % 4) belongs to vocab_index.
FS_HD fs_philox_ctr fs_noise_block(fs_u64 seed, fs_u64 offset, fs_u64 vocab_index, fs_u32 sample) {
  fs_philox_ctr c;
  c.v[0] = (fs_u32)(vocab_index >> 2);
  c.v[1] = sample;
  c.v[2] = (fs_u32)offset;
  c.v[3] = (fs_u32)(offset >> 32);
  return fs_philox4x32_10(c, (fs_u32)seed, (fs_u32)(seed >> 32));
}
