// fused_mma.cuh: fused LM-head matmul + Gumbel-max for bf16/fp16 weights on
// tensor cores (mma.sync m16n8k16, fp32 accumulation). W is the MMA's M
// operand (vocabulary), H the N operand (batch), d the K dimension.
// A persistent grid: each block walks (T_V x T_N) tiles of logits; a
// FS_STAGES-deep cp.async pipeline (persistent_pipeline.cuh) streams (T_V x
// T_d) slices of W and (T_N x T_d) slices of H through XOR-swizzled shared
// memory without draining between tiles; each finished tile is staged in its
// own shared buffer as fp32 and the Gumbel epilogue writes the tile's winner
// per row and sample.
//
// Prelude macros: FS_TV FS_TN FS_TD FS_STAGES FS_WARPS_M FS_WARPS_N and one of
// FS_DTYPE_BF16 / FS_DTYPE_F16.
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"
#include "persistent_pipeline.cuh"

#define FS_THREADS (32 * FS_WARPS_M * FS_WARPS_N)
#define FS_WTILE_M (FS_TV / FS_WARPS_M)
#define FS_WTILE_N (FS_TN / FS_WARPS_N)
#define FS_MI (FS_WTILE_M / 16)
#define FS_NI (FS_WTILE_N / 8)
#define FS_CPR (FS_TD / 8)  // 16-byte chunks per shared-memory row
#define FS_LDL (FS_TV + 4)  // row stride of the staged fp32 logit tile

static_assert(FS_WTILE_M % 16 == 0, "T_V / warps_m must be a multiple of 16");
static_assert(FS_WTILE_N % 8 == 0, "T_N / warps_n must be a multiple of 8");
static_assert(FS_TD % 16 == 0 && FS_TD <= 128, "T_d must be 16, 32, 64 or 128");
static_assert(FS_TV % 4 == 0, "T_V must be a multiple of 4");

#include "epilogue.cuh"
#include "reduce.cuh"

typedef fs_u16 fs_elem;

__device__ __forceinline__ int fs_swizzle(int r, int c) { return fs_swizzle_chunk<FS_CPR>(r, c); }

typedef fs_tile_loader<FS_TV, FS_CPR, FS_THREADS, 2, FS_TD * 2, true> fs_w_loader;
typedef fs_tile_loader<FS_TN, FS_CPR, FS_THREADS, 2, FS_TD * 2, true> fs_h_loader;

__device__ __forceinline__ void fs_ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(fs_smem_addr(p)));
}
__device__ __forceinline__ void fs_ldmatrix_x2(unsigned& r0, unsigned& r1, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r0), "=r"(r1)
               : "r"(fs_smem_addr(p)));
}

__device__ __forceinline__ void fs_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if defined(FS_DTYPE_BF16)
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#else
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
#endif
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(FS_THREADS) fs_fused_kernel(const fs_fused_params p) {
  extern __shared__ __align__(128) unsigned char fs_smem[];
  fs_elem* Ws = reinterpret_cast<fs_elem*>(fs_smem);
  fs_elem* Hs = Ws + FS_STAGES * FS_TV * FS_TD;
  float* L = reinterpret_cast<float*>(Hs + FS_STAGES * FS_TN * FS_TD);  // staged logit tile [T_N][FS_LDL]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm = warp % FS_WARPS_M, wn = warp / FS_WARPS_M;

  float acc[FS_MI][FS_NI][4];
#pragma unroll
  for (int i = 0; i < FS_MI; ++i)
#pragma unroll
    for (int j = 0; j < FS_NI; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  fs_operand_loader<fs_w_loader, fs_h_loader, FS_TV, FS_TN, FS_TD> loader;
  auto load = [&](int st, int vtile, int ntile, int kt) {
    loader.load(p, Ws + st * FS_TV * FS_TD, Hs + st * FS_TN * FS_TD, vtile, ntile, kt);
  };


  auto compute = [&](int st) {
    const fs_elem* Wst = Ws + st * FS_TV * FS_TD;
    const fs_elem* Hst = Hs + st * FS_TN * FS_TD;
#pragma unroll
    for (int kk = 0; kk < FS_TD / 16; ++kk) {
      unsigned a[FS_MI][4];
      unsigned b[FS_NI][2];
#pragma unroll
      for (int mi = 0; mi < FS_MI; ++mi) {
        const int r = wm * FS_WTILE_M + mi * 16 + (lane & 15);
        const int c = kk * 2 + (lane >> 4);
        fs_ldmatrix_x4(a[mi], Wst + r * FS_TD + fs_swizzle(r, c) * 8);
      }
#if FS_NI % 2 == 0
#pragma unroll
      for (int nj = 0; nj < FS_NI / 2; ++nj) {
        const int r = wn * FS_WTILE_N + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
        const int c = kk * 2 + ((lane >> 3) & 1);
        unsigned t[4];
        fs_ldmatrix_x4(t, Hst + r * FS_TD + fs_swizzle(r, c) * 8);
        b[2 * nj][0] = t[0];
        b[2 * nj][1] = t[1];
        b[2 * nj + 1][0] = t[2];
        b[2 * nj + 1][1] = t[3];
      }
#else
#pragma unroll
      for (int ni = 0; ni < FS_NI; ++ni) {
        const int r = wn * FS_WTILE_N + ni * 8 + (lane & 7);
        const int c = kk * 2 + ((lane >> 3) & 1);
        fs_ldmatrix_x2(b[ni][0], b[ni][1], Hst + r * FS_TD + fs_swizzle(r, c) * 8);
      }
#endif
#pragma unroll
      for (int mi = 0; mi < FS_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < FS_NI; ++ni) fs_mma(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
    }
  };

  auto finish = [&](int vtile, int ntile) {
    // Stage the fp32 tile as L[n][v], then run the Gumbel epilogue on it.
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < FS_MI; ++mi)
#pragma unroll
      for (int ni = 0; ni < FS_NI; ++ni) {
        const int v = wm * FS_WTILE_M + mi * 16 + g;
        const int n = wn * FS_WTILE_N + ni * 8 + 2 * t;
        L[n * FS_LDL + v] = acc[mi][ni][0];
        L[(n + 1) * FS_LDL + v] = acc[mi][ni][1];
        L[n * FS_LDL + v + 8] = acc[mi][ni][2];
        L[(n + 1) * FS_LDL + v + 8] = acc[mi][ni][3];
        acc[mi][ni][0] = acc[mi][ni][1] = acc[mi][ni][2] = acc[mi][ni][3] = 0.0f;
      }
    __syncthreads();
    fs_tile_epilogue(L, p, (fs_i64)vtile * FS_TV, (fs_i64)ntile * FS_TN);
  };

  fs_persistent_pipeline<FS_STAGES, FS_TN, FS_TD>(p, load, compute, finish);
  fs_grid_finish(p);
}
