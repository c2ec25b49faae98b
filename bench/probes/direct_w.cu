// direct_w.cu: a session-26 probe, not part of the library or its build. Can an mma.sync mainloop that loads W
// straight from global memory into the MMA's A registers (16-byte loads, no shared-memory round trip for W)
// stream W closer to the floor at N = 1..64 than the staged kernels do?
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o direct_w bench/probes/direct_w.cu && ./direct_w
// The trick: a k-step of 32 columns is loaded as one 16-byte vector per lane and row (lane = 4 g + t holds
// columns 8t..8t+7 of rows g and g + 8 of each 16-row block). The dot product does not care in which order k
// is summed, so these 8 columns are fed to two m16n8k16 MMAs as logical columns {2t, 2t+1, 2t+8, 2t+9}
// (columns 8t..8t+3, then 8t+4..8t+7); H's B fragments are the same 16 bytes of H's row g, read from shared
// memory. Warps (wm, wk): wm picks 16 MT rows of the block's BR = 16 MT MW rows, wk interleaves k-steps (KW
// warps read adjacent 64-byte pieces of each row); per chunk of KW SPC k-steps the block syncs once (H's
// chunk, double-buffered by cp.async), and W runs DEPTH chunks ahead in registers. The KW partial sums are
// added in shared memory at the end of each tile. Every config is checked against a CPU dot product first.
// Timing: each config alternates with the flat floor kernel (same process, same data), median of 20 each.
// Results (H200, 2026-11-26): bench/results/2026-11-26-s26-h200.md; 1.09-1.13 x floor at N = 1-32, 1.9 x at
// N = 64, all slower than the staged kernels (BENCHMARKS.md session 26).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>

#include "probe_util.cuh"

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp_async16(void* s, const void* g, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(s)), "l"(g), "r"(ok ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void mma16816(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                         unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__global__ void flat(const uint4* w, long long n16, unsigned* out) {
  unsigned acc = 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 7 * stride < n16; i += 8 * stride) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = ldg_stream(w + i + u * stride);
#pragma unroll
    for (int u = 0; u < 8; ++u) acc ^= v[u].x ^ v[u].w;
  }
  for (; i < n16; i += stride) acc ^= ldg_stream(w + i).x;
  if (acc == 0x12345678u) out[0] = acc;
}

template <int MT, int NT, int MW, int KW, int SPC, int DEPTH>
struct Cfg {
  static constexpr int THREADS = 32 * MW * KW;
  static constexpr int BR = 16 * MT * MW;           // rows of W per tile
  static constexpr int KC = 32 * KW * SPC;          // columns per chunk
  static constexpr int HROW = KC * 2 + 64;          // bytes per H row in shared memory (padded: no conflicts)
  static constexpr int HROWS = 8 * NT;
  static constexpr int HBYTES = 2 * HROWS * HROW;   // two chunk buffers
  static constexpr int RED = KW > 1 ? MW * MT * NT * 4 * 32 * 4 : 0;
  static constexpr int SMEM = HBYTES + RED;
  static_assert((KW * SPC) % 2 == 0, "KW * SPC even keeps the B-fragment loads conflict-free");
};

// out (CHECK): logits [V][N]; otherwise each lane's max over everything goes to sink (keeps the work alive).
template <int MT, int NT, int MW, int KW, int SPC, int DEPTH, bool CHECKMODE>
__global__ void __launch_bounds__(32 * MW * KW) direct(const __nv_bfloat16* __restrict__ W,
                                                       const __nv_bfloat16* __restrict__ H, int V, int d, int N,
                                                       float* out, unsigned* sink) {
  using C = Cfg<MT, NT, MW, KW, SPC, DEPTH>;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* hs = smem;
  float* red = reinterpret_cast<float*>(smem + C::HBYTES);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp % MW, wk = warp / MW;
  const int g = lane >> 2, t = lane & 3;
  const int ntiles = (V + C::BR - 1) / C::BR;
  if ((int)blockIdx.x >= ntiles) return;
  const int my_tiles = (ntiles - 1 - blockIdx.x) / gridDim.x + 1;
  const int cpt = d / C::KC;  // chunks per tile
  const long long total = (long long)my_tiles * cpt;

  // Row pointers (bytes) of this lane for the tile: rows g and g + 8 of each 16-row block; clamped past V.
  auto row_ptr = [&](int tile, int mi, int h) {
    int r = tile * C::BR + wm * 16 * MT + mi * 16 + g + 8 * h;
    r = r < V ? r : V - 1;
    return reinterpret_cast<const char*>(W) + (long long)r * d * 2;
  };
  uint4 wb[DEPTH + 1][SPC][MT][2];
  auto load_w = [&](uint4 (&b)[SPC][MT][2], long long x) {
    const int tile = blockIdx.x + (int)(x / cpt) * gridDim.x, c = (int)(x % cpt);
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const char* rp = row_ptr(tile, mi, h) + (c * C::KC + wk * 32 + 8 * t) * 2;
#pragma unroll
        for (int jj = 0; jj < SPC; ++jj) b[jj][mi][h] = ldg_stream(rp + jj * KW * 64);
      }
  };
  auto load_h = [&](long long x) {
    const int c = (int)(x % cpt);
    unsigned char* dst = hs + (x & 1) * C::HROWS * C::HROW;
    constexpr int PIECES = C::HROWS * (C::KC / 8);
    for (int i = threadIdx.x; i < PIECES; i += C::THREADS) {
      const int r = i / (C::KC / 8), q = i % (C::KC / 8);
      const bool ok = r < N;
      cp_async16(dst + r * C::HROW + q * 16, H + (long long)(ok ? r : 0) * d + c * C::KC + q * 8, ok);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };

  float acc[MT][NT][4];
  // f(mi, j, q, accumulator) for every accumulator of the lane, fully unrolled.
  auto each = [&](auto f) {
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) f(mi, j, q, acc[mi][j][q]);
  };
  each([](int, int, int, float& a) { a = 0.f; });
  float keep = -INFINITY;

#pragma unroll
  for (int u = 0; u < DEPTH; ++u)
    if (u < total) load_w(wb[u], u);
  load_h(0);

  for (long long x0 = 0; x0 < total; x0 += DEPTH + 1) {
#pragma unroll
    for (int u = 0; u < DEPTH + 1; ++u) {
      const long long x = x0 + u;
      if (x < total) {
        if (x + DEPTH < total) load_w(wb[(u + DEPTH) % (DEPTH + 1)], x + DEPTH);
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
        if (x + 1 < total) load_h(x + 1);
        const unsigned char* hb = hs + (x & 1) * C::HROWS * C::HROW;
#pragma unroll
        for (int jj = 0; jj < SPC; ++jj) {
          uint4 hf[NT];
#pragma unroll
          for (int j = 0; j < NT; ++j)
            hf[j] = *reinterpret_cast<const uint4*>(hb + (j * 8 + g) * C::HROW + (jj * KW + wk) * 64 + 16 * t);
#pragma unroll
          for (int mi = 0; mi < MT; ++mi) {
            const uint4 lo = wb[u][jj][mi][0], hi = wb[u][jj][mi][1];
#pragma unroll
            for (int j = 0; j < NT; ++j) {
              mma16816(acc[mi][j], lo.x, hi.x, lo.y, hi.y, hf[j].x, hf[j].y);
              mma16816(acc[mi][j], lo.z, hi.z, lo.w, hi.w, hf[j].z, hf[j].w);
            }
          }
        }
        if (x % cpt == cpt - 1) {  // tile complete: add the KW partial sums
          const int tile = blockIdx.x + (int)(x / cpt) * gridDim.x;
          if (KW > 1) {
            float* rb = red + wm * MT * NT * 4 * 32;
            auto slot = [&](int mi, int j, int q) -> float& { return rb[((mi * NT + j) * 4 + q) * 32 + lane]; };
            if (wk == 0) each([&](int mi, int j, int q, float& a) { slot(mi, j, q) = a; });
            __syncthreads();
            if (wk != 0) each([&](int mi, int j, int q, float& a) { atomicAdd(&slot(mi, j, q), a); });
            __syncthreads();
            if (wk == 0) each([&](int mi, int j, int q, float& a) { a = slot(mi, j, q); });
          }
          if (wk == 0)
            each([&](int mi, int j, int q, float& a) {
              if (CHECKMODE) {
                const int r = tile * C::BR + wm * 16 * MT + mi * 16 + g + 8 * (q >> 1);
                const int n = j * 8 + 2 * t + (q & 1);
                if (r < V && n < N) out[(long long)r * N + n] = a;
              } else {
                keep = fmaxf(keep, a);
              }
            });
          each([](int, int, int, float& a) { a = 0.f; });
        }
      }
    }
  }
  if (!CHECKMODE && keep == 1234.5f) sink[0] = 1;
}

__global__ void fill(__nv_bfloat16* p, long long n, unsigned seed, float scale) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    x *= 3266489917u;
    x ^= x >> 16;
    p[i] = __float2bfloat16(((x >> 8) * (1.0f / 16777216.0f) - 0.5f) * scale);
  }
}

struct Ctx {
  __nv_bfloat16 *W, *H;
  float* out;
  unsigned* sink;
  int sms;
  int flat_grid;
};

template <int MT, int NT, int MW, int KW, int SPC, int DEPTH>
void run(const Ctx& cx, int V, int d, int N) {
  using C = Cfg<MT, NT, MW, KW, SPC, DEPTH>;
  char name[64];
  std::snprintf(name, sizeof name, "mt%d nt%d mw%d kw%d spc%d dep%d", MT, NT, MW, KW, SPC, DEPTH);
  if (N > 8 * NT) return;
  auto kc = direct<MT, NT, MW, KW, SPC, DEPTH, true>;
  auto kt = direct<MT, NT, MW, KW, SPC, DEPTH, false>;
  CHECK(cudaFuncSetAttribute(kc, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM));
  CHECK(cudaFuncSetAttribute(kt, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM));
  int occ = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kt, C::THREADS, C::SMEM));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, kt));
  if (occ < 1) {
    std::printf("%-34s N=%-3d does not fit\n", name, N);
    return;
  }
  // Check on a small problem (V = 1000, d = 2 KC): every logit against a CPU dot product.
  {
    const int v = 1000, dd = 2 * C::KC * 2;
    std::vector<__nv_bfloat16> w((size_t)v * dd), h((size_t)N * dd);
    CHECK(cudaMemcpy(w.data(), cx.W, w.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h.data(), cx.H, h.size() * 2, cudaMemcpyDeviceToHost));
    // cx.W holds W as [V][d] of the big shape; use the first v*dd elements as a [v][dd] matrix (and H likewise).
    CHECK(cudaMemset(cx.out, 0xff, (size_t)v * N * 4));
    kc<<<std::min(occ * cx.sms, (v + C::BR - 1) / C::BR), C::THREADS, C::SMEM>>>(cx.W, cx.H, v, dd, N, cx.out,
                                                                                cx.sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float> o((size_t)v * N);
    CHECK(cudaMemcpy(o.data(), cx.out, o.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int r = 0; r < v; ++r)
      for (int n = 0; n < N; ++n) {
        double s = 0, a = 0;
        for (int k = 0; k < dd; ++k) {
          const double p = (double)__bfloat162float(w[(size_t)r * dd + k]) * __bfloat162float(h[(size_t)n * dd + k]);
          s += p;
          a += std::fabs(p);
        }
        const double e = std::fabs(o[(size_t)r * N + n] - s) / (a + 1e-30);
        worst = std::isfinite(e) && std::isfinite(worst) ? std::max(worst, e) : INFINITY;  // unwritten: NaN
      }
    if (!(worst < 1e-5)) {
      std::printf("%-34s N=%-3d CHECK FAILED (rel err %.3g)\n", name, N, worst);
      return;
    }
  }
  const int grid = std::min(occ * cx.sms, (V + C::BR - 1) / C::BR);
  const long long n16 = (long long)V * d / 8;
  EventTimer timer;
  std::vector<float> tf, tk;
  for (int i = 0; i < 25; ++i) {
    const float f = timer.us([&] { flat<<<cx.flat_grid, 256>>>(reinterpret_cast<const uint4*>(cx.W), n16, cx.sink); });
    const float k = timer.us([&] { kt<<<grid, C::THREADS, C::SMEM>>>(cx.W, cx.H, V, d, N, cx.out, cx.sink); });
    if (i >= 5) tf.push_back(f), tk.push_back(k);
  }
  const float f = median(tf), k = median(tk);
  std::printf("%-34s V=%-6d d=%-4d N=%-3d %3d regs occ %d  direct %7.1f us  floor %7.1f us  x floor %.3f\n", name, V,
              d, N, fa.numRegs, occ, k, f, k / f);
  std::fflush(stdout);
}

// The configs timed for each N (N <= 8 * NT): the same five shapes of warp work for NT <= 4; for NT = 8 the
// 64-row warps' accumulators and W registers would spill, so two of them are replaced.
template <int NT>
void run_set(const Ctx& cx, int V, int d, int N) {
  if constexpr (NT < 8) run<2, NT, 4, 1, 4, 1>(cx, V, d, N);
  else run<2, NT, 4, 2, 2, 1>(cx, V, d, N);
  run<2, NT, 2, 4, 2, 1>(cx, V, d, N);
  run<1, NT, 4, 4, 2, 2>(cx, V, d, N);
  if constexpr (NT < 8) {
    run<4, NT, 4, 2, 2, 1>(cx, V, d, N);
    run<4, NT, 2, 4, 2, 1>(cx, V, d, N);
  } else {
    run<2, NT, 8, 1, 2, 1>(cx, V, d, N);
  }
}

int main(int argc, char** argv) {
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  Ctx cx;
  cx.sms = prop.multiProcessorCount;
  const long long wmax = 151936LL * 4096 > 128256LL * 8192 ? 151936LL * 4096 : 128256LL * 8192;
  CHECK(cudaMalloc(&cx.W, wmax * 2));
  CHECK(cudaMalloc(&cx.H, 64LL * 8192 * 2));
  CHECK(cudaMalloc(&cx.out, 151936LL * 64 * 4));
  CHECK(cudaMalloc(&cx.sink, 4096));
  fill<<<1024, 256>>>(cx.W, wmax, 1u, 4.0f);
  fill<<<64, 256>>>(cx.H, 64LL * 8192, 7u, 0.06f);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  // The floor's grid: best of a few sizes, once.
  {
    const long long n16 = 151936LL * 4096 / 8;
    float best = 1e30f;
    EventTimer timer;
    for (int mult : {2, 4, 8, 16}) {
      std::vector<float> t;
      for (int i = 0; i < 15; ++i) {
        const float us = timer.us([&] { flat<<<mult * cx.sms, 256>>>(reinterpret_cast<const uint4*>(cx.W), n16, cx.sink); });
        if (i >= 5) t.push_back(us);
      }
      if (median(t) < best) best = median(t), cx.flat_grid = mult * cx.sms;
    }
  }
  const int only = argc > 1 ? std::atoi(argv[1]) : 0;  // 0: both shapes; 1: small; 2: large
  for (int shape = 1; shape <= 2; ++shape) {
    if (only && only != shape) continue;
    const int V = shape == 1 ? 151936 : 128256, d = shape == 1 ? 4096 : 8192;
    for (int N : {1, 16, 32, 64}) {
      if (N <= 8) run_set<1>(cx, V, d, N);
      else if (N <= 16) run_set<2>(cx, V, d, N);
      else if (N <= 32) run_set<4>(cx, V, d, N);
      else run_set<8>(cx, V, d, N);
    }
  }
  return 0;
}
