// wgmma_ops.cuh: the Hopper warpgroup-MMA primitives shared by the wgmma
// kernels (sm_90a): shared-memory matrix descriptors for K-major tiles with the
// 128-byte swizzle, and the fence / commit / wait of asynchronous MMAs.
#pragma once
#include "fs_types.cuh"
#include "pipeline.cuh"  // fs_smem_addr

// The dynamic shared memory rounded up to a 1024-byte boundary, where wgmma's
// 128-byte swizzle is anchored (the kernels' shared_bytes() include the slack).
__device__ __forceinline__ unsigned char* fs_smem_align_1024(unsigned char* raw) {
  const unsigned a = fs_smem_addr(raw);
  return raw + (((a + 1023u) & ~1023u) - a);
}

// Shared-memory matrix descriptor: K-major, rows of RB = 128 (128-byte
// swizzle, 8-row groups 1024 bytes apart) or 64 bytes (64-byte swizzle, 512
// bytes apart) as the copy engine wrote them; leading byte offset unused (1).
template <int RB = 128>
__device__ __forceinline__ fs_u64 fs_wgmma_desc(unsigned smem_addr) {
  static_assert(RB == 128 || RB == 64, "fs_wgmma_desc: 128- or 64-byte swizzled rows");
  fs_u64 d = (fs_u64)((smem_addr & 0x3FFFF) >> 4);
  d |= (fs_u64)1 << 16;
  d |= (fs_u64)((8 * RB) >> 4) << 32;
  d |= (fs_u64)(RB == 128 ? 1 : 2) << 62;  // layout type: 1 = 128-byte swizzle, 2 = 64-byte
  return d;
}

__device__ __forceinline__ void fs_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void fs_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void fs_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Orders the cp.async (generic proxy) writes of a stage before the tensor
// cores' (async proxy) reads of it.
__device__ __forceinline__ void fs_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Descriptor arithmetic: a descriptor's low 14 bits hold the shared address
// / 16, so moving within the (< 256 KiB) shared window adds bytes / 16.
#define FS_WGMMA_DESC_STEP(bytes) ((fs_u64)((bytes) >> 4))

// One box of MMAs for a warpgroup: MI 64-row blocks of W (K-major tile
// whose descriptor is dw, RB bytes per row: RB / 2 deep) against the T_N rows
// of H (descriptor dh), accumulating into acc; committed as one group (not
// waited for). Each k16 step issues NACC / (FS_WGMMA_N / 2) instructions of
// the generated shape fs_wgmma_k16 (m64 n FS_WGMMA_N k16): instruction b
// takes H rows [b FS_WGMMA_N, (b + 1) FS_WGMMA_N) and accumulators
// [b FS_WGMMA_N / 2, ...), which is where one m64 n T_N instruction keeps them.
// overwrite: the box's first k16 step replaces the accumulators instead of
// adding to them (wgmma's scale-d = 0), so a tile needs no zeroing before it.
template <int MI, int NACC, int RB = 128>
__device__ __forceinline__ void fs_wgmma_stage(float (&acc)[MI][NACC], fs_u64 dw, fs_u64 dh, bool overwrite = false) {
  constexpr int IACC = FS_WGMMA_N / 2;  // accumulators per instruction
  static_assert(NACC % IACC == 0, "fs_wgmma_stage: T_N is whole instructions");
  fs_wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < RB / 32; ++kk) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int b = 0; b < NACC / IACC; ++b)
        fs_wgmma_k16(*reinterpret_cast<float(*)[IACC]>(&acc[mi][b * IACC]),
                     dw + FS_WGMMA_DESC_STEP(mi * 64 * RB + kk * 32),
                     dh + FS_WGMMA_DESC_STEP(b * FS_WGMMA_N * RB + kk * 32), kk > 0 || !overwrite);
  }
  fs_wgmma_commit();
}

// A consumer's position in a ring of STAGES stages: the stage and the parity
// of its `full` phase. Advanced by one per stage (no 64-bit division).
template <int STAGES>
struct fs_ring_pos {
  int st = 0;
  unsigned phase = 0;
  __device__ __forceinline__ explicit fs_ring_pos(long long it = 0)
      : st((int)(it % STAGES)), phase((unsigned)((it / STAGES) & 1)) {}
  __device__ __forceinline__ void advance() {
    if (++st == STAGES) {
      st = 0;
      phase ^= 1u;
    }
  }
};

// Column of vocabulary offset v in row n of a staged logit tile: with SWZ,
// the unpadded layout (row stride T_V) whose 16-byte chunks are permuted by
// row (chunk ^ (n & 7)), so that neither the consumers' stores (8 rows x 8
// values per instruction) nor the row-owner epilogue's float4 loads (32 rows,
// one chunk each) conflict in a bank; without it, a padded row stride does.
template <bool SWZ>
__device__ __forceinline__ int fs_staged_col(int n, int v) {
  return SWZ ? (v ^ ((n & 7) << 2)) : v;
}

// Writes batch columns [c0, c0 + EPI_N) of a warpgroup's accumulators to the
// staged logit tile L[n - c0][v] (row stride LDL) and zeroes them. Accumulator
// i of a 64-row block: vocabulary row 16*wq + g (+8 if i&2), batch column
// 8*(i/4) + 2t + (i&1), with g = lane / 4, t = lane % 4; block mi starts at
// vocabulary row v0 + 64 * mi of the tile.
// VMAJOR: the tile is vocabulary-major instead, L[v][n - c0] (row stride LDL,
// the wgmma_coop kernel staging in L2): accumulators 2i and 2i + 1 are batch
// columns n and n + 1 of one vocabulary row, so each pair is one 8-byte store
// and a warp's store covers eight whole 32-byte sectors. (Plain stores:
// __stcg on the float2 put the accumulators on the stack.)
template <int MI, int NACC, int EPI_N, int LDL, bool SWZ = false, bool VMAJOR = false>
__device__ __forceinline__ void fs_wgmma_stage_logits(float (&acc)[MI][NACC], float* L, int c0, int v0, int wq,
                                                      int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const int v = v0 + mi * 64 + wq * 16 + g;
#pragma unroll
    for (int j = 0; j < EPI_N / 8; ++j) {
      const int a = c0 / 8 + j;  // accumulator column group
      const int n = 8 * j + 2 * t;
      if constexpr (VMAJOR) {
        *reinterpret_cast<float2*>(L + v * LDL + n) = make_float2(acc[mi][4 * a + 0], acc[mi][4 * a + 1]);
        *reinterpret_cast<float2*>(L + (v + 8) * LDL + n) = make_float2(acc[mi][4 * a + 2], acc[mi][4 * a + 3]);
      } else {
        L[n * LDL + fs_staged_col<SWZ>(n, v)] = acc[mi][4 * a + 0];
        L[(n + 1) * LDL + fs_staged_col<SWZ>(n + 1, v)] = acc[mi][4 * a + 1];
        L[n * LDL + fs_staged_col<SWZ>(n, v + 8)] = acc[mi][4 * a + 2];
        L[(n + 1) * LDL + fs_staged_col<SWZ>(n + 1, v + 8)] = acc[mi][4 * a + 3];
      }
      acc[mi][4 * a + 0] = acc[mi][4 * a + 1] = acc[mi][4 * a + 2] = acc[mi][4 * a + 3] = 0.0f;
    }
  }
}
