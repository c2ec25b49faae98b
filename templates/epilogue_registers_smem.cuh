// epilogue_registers_smem.cuh: the shared memory of one consumer of the
// register epilogue (spec "re", epilogue_registers.cuh), as byte offsets. One
// definition for the kernel (fs_re_smem) and for KernelSpec::shared_bytes()
// on the host. mi: the consumer's 64-row blocks, tn: the tile's batch columns.
//   words [mi][4][tn] u32   the group words
//   gl    [mi][4][tn] f32   the groups' lead noise (first tile: the leads' logits for a moment)
//   info  [3][tn]     f32   per column 1/tau, the bound, the row's kind
//   keys  [2][tn]     u64   the rows' Philox seeds and offsets
#pragma once
#include "fs_types.cuh"

// The batch tiles the register epilogue takes: T_N a multiple of 8 (wgmma's
// N step; the group maxima's 32-column chunks pad a partial last one,
// epilogue_registers.cuh) from 64 to 256. Until session 65 only multiples
// of 32 from 128: a batch of N = 162 multiplied 192 rows; until session 66
// none below 128: N = 65-127 multiplied 128.
// Consumer thread t owns column t where that is below T_N and, for
// T_N > 128, column t + 128 where that is below T_N: fs_re_cols(T_N) column
// slots per thread.
FS_HD constexpr bool fs_re_tile_n_ok(int tn) { return tn >= 64 && tn <= 256 && tn % 8 == 0; }
FS_HD constexpr int fs_re_cols(int tn) { return (tn + 127) / 128; }
// Whether consumer thread tid owns a column in slot q (q < fs_re_cols(tn)).
// Only a partial slot (128 q < tn < 128 (q + 1): slot 0 of T_N < 128, slot 1
// of T_N > 128) needs the comparison with tid; the first two terms decide
// whole slots at compile time (q and tn are constants in the unrolled loops),
// so T_N = 128 and 256 test nothing. (The first term is implied by the
// second; without it NVRTC 13.0 emitted one more instruction for the partial
// slot of T_N = 136, 224 and 248, so it stays: session 66.)
FS_HD constexpr bool fs_re_owns(int tid, int q, int tn) {
  return (q == 0 && tn >= 128) || tn >= 128 * (q + 1) || tid + 128 * q < tn;
}

FS_HD constexpr int fs_re_gl_at(int mi, int tn) { return mi * 4 * tn * 4; }
FS_HD constexpr int fs_re_info_at(int mi, int tn) { return 2 * mi * 4 * tn * 4; }
FS_HD constexpr int fs_re_keys_at(int mi, int tn) { return fs_re_info_at(mi, tn) + 3 * tn * 4; }
FS_HD constexpr int fs_re_bytes(int mi, int tn) { return fs_re_keys_at(mi, tn) + 2 * tn * 8; }

// The 64-bit keys (and the next consumer's buffer) stay 8-byte aligned for every tile the epilogue takes.
static_assert(fs_re_keys_at(1, 128) % 8 == 0 && fs_re_bytes(2, 128) % 8 == 0 && fs_re_bytes(1, 256) % 8 == 0 &&
                  fs_re_keys_at(1, 160) % 8 == 0 && fs_re_bytes(1, 160) % 8 == 0 && fs_re_bytes(1, 224) % 8 == 0 &&
                  fs_re_keys_at(1, 136) % 8 == 0 && fs_re_bytes(1, 136) % 8 == 0 && fs_re_bytes(2, 248) % 8 == 0 &&
                  fs_re_keys_at(2, 72) % 8 == 0 && fs_re_bytes(2, 120) % 8 == 0,
              "epilogue_registers_smem: 8-byte alignment");
