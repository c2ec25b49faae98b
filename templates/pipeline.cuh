// pipeline.cuh: cp.async helpers (sm_80+) for multi-stage shared-memory tiles.
#pragma once
#include "fs_params.cuh"

__device__ __forceinline__ unsigned fs_smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// 16-byte asynchronous global->shared copy; zero-fills when !pred.
__device__ __forceinline__ void fs_cp_async16(void* smem, const void* gmem, bool pred) {
  const int src_bytes = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(fs_smem_addr(smem)), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

// 4-byte asynchronous global->shared copy (through L1); zero-fills when !pred.
__device__ __forceinline__ void fs_cp_async4(void* smem, const void* gmem, bool pred) {
  const int src_bytes = pred ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(fs_smem_addr(smem)), "l"(gmem), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void fs_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void fs_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Physical 16-byte chunk of logical chunk `c` in shared-memory row `r` for a
// row of CPR chunks: an XOR swizzle that makes ldmatrix conflict-free.
template <int CPR>
__device__ __forceinline__ int fs_swizzle_chunk(int r, int c) {
  if (CPR >= 8) return c ^ (r & 7);
  if (CPR == 4) return c ^ ((r >> 1) & 3);
  return c ^ ((r >> 2) & 1);
}

// Copies a (ROWS x CPR 16-byte chunks) tile of a row-major matrix into one
// shared-memory stage with cp.async, zero-filling rows past `rows` and
// columns past `d`. Each thread owns one column chunk c = tid % CPR and rows
// r0 + j * RSTEP, so per tile it keeps a single global pointer, and per stage
// it only adds the k offset: a few instructions per 16 bytes.
template <int ROWS, int CPR, int THREADS, int ELEM, int SMEM_ROW_BYTES, bool SWIZZLE>
struct fs_tile_loader {
  static constexpr int RSTEP = THREADS / CPR;
  static constexpr int CHUNKS = (ROWS + RSTEP - 1) / RSTEP;
  static_assert(THREADS % CPR == 0, "threads must be a multiple of the chunks per row");
  static_assert(!SWIZZLE || RSTEP % 8 == 0, "swizzled loads need threads / chunks-per-row to be a multiple of 8");

  const char* base;   // this thread's chunk in row r0 of the tile
  const char* any;    // a valid address for zero-filled copies
  fs_i64 row_bytes;   // global bytes between rows
  int tile_left;      // rows of the tile from r0 on (<= 0: this thread copies nothing)
  int rows_left;      // of those, rows inside the matrix
  int kc;             // first element of this thread's chunk within a stage
  int smem0;          // shared byte offset of (r0, c)

  __device__ __forceinline__ void init(const void* src, fs_i64 row0, fs_i64 rows, fs_i64 d, int tid = threadIdx.x) {
    const int r0 = tid / CPR, c = tid % CPR;
    kc = c * (16 / ELEM);
    row_bytes = d * ELEM;
    any = static_cast<const char*>(src);
    tile_left = ROWS - r0;
    const fs_i64 left = rows - row0 - r0;
    rows_left = left > tile_left ? tile_left : (int)left;
    base = any + ((rows_left > 0 ? row0 + r0 : 0) * d + kc) * ELEM;
    smem0 = r0 * SMEM_ROW_BYTES + (SWIZZLE ? fs_swizzle_chunk<CPR>(r0, c) : c) * 16;
  }

  __device__ __forceinline__ void issue(unsigned char* stage, int k0, int d) const {
    const bool kok = k0 + kc < d;
    const char* p = base + (fs_i64)k0 * ELEM;
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
      if (ROWS % RSTEP != 0 && j * RSTEP >= tile_left) break;  // past the tile's last row
      const bool ok = kok && j * RSTEP < rows_left;
      fs_cp_async16(stage + smem0 + j * RSTEP * SMEM_ROW_BYTES, ok ? p : any, ok);
      p += row_bytes * RSTEP;
    }
  }
};

// The W and H loaders of the fused kernels: re-points each only when the
// tile's vocabulary or batch index changes, then issues one stage of both.
template <class WLoader, class HLoader, int TV, int TN, int TD>
struct fs_operand_loader {
  WLoader w;
  HLoader h;
  int vtile = -1, ntile = -1;

  __device__ __forceinline__ void load(const fs_fused_params& p, void* w_stage, void* h_stage, int vt, int nt, int kt,
                                       int tid = threadIdx.x) {
    if (vt != vtile) {
      w.init(p.weights, (fs_i64)vt * TV, p.vocab, p.hidden_dim, tid);
      vtile = vt;
    }
    if (nt != ntile) {
      h.init(p.hidden, (fs_i64)nt * TN, p.rows, p.hidden_dim, tid);
      ntile = nt;
    }
    w.issue(static_cast<unsigned char*>(w_stage), kt * TD, (int)p.hidden_dim);
    h.issue(static_cast<unsigned char*>(h_stage), kt * TD, (int)p.hidden_dim);
  }
};
