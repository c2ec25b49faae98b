// stream_pattern.cu: a session-25 probe, not part of the library or its build. Does reading W in
// (R rows x C bytes) passes, as the fused kernels' stages do, stream slower than reading it flat?
//   nvcc -O3 -arch=sm_90 -std=c++17 -o stream_pattern bench/probes/stream_pattern.cu && ./stream_pattern
// (W = 151936 x 4096 bf16; tiled passes keep 8 16-byte loads per thread in flight, flat 4; median of 20 launches
// after 5 warm-ups; exits 1 with the CUDA error's name if a call fails, e.g. without a GPU.)
// Results: bench/results/2026-11-22-s25-h200.md.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cstdlib>
#include <cuda_runtime.h>

#include "probe_util.cuh"

__global__ void flat(const uint4* w, long long n16, unsigned* out) {
  unsigned acc = 0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 a = ldg_stream(w + i), b = ldg_stream(w + i + stride), c = ldg_stream(w + i + 2 * stride),
          d = ldg_stream(w + i + 3 * stride);
    acc ^= a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < n16; i += stride) acc ^= ldg_stream(w + i).x;
  if (acc == 0x12345678u) out[0] = acc;
}

// Row blocks of R rows; each block walks its row blocks, and within one, the
// row's columns in chunks of C bytes: a pass loads R x C bytes (like a stage).
template <int R, int C>
__global__ void tiled(const uint4* w, int rows, int row16, unsigned* out) {
  constexpr int V16 = C / 16;                  // vectors per row chunk
  constexpr int PER = R * V16 / 256;           // vectors per thread per chunk (256 threads)
  static_assert(PER >= 1, "");
  unsigned acc = 0;
  const int nblk = rows / R;
  for (int rb = blockIdx.x; rb < nblk; rb += gridDim.x) {
    const uint4* base = w + (long long)rb * R * row16;
    constexpr int U = PER >= 8 ? 1 : 8 / PER;  // chunks per round: 8 loads in flight per thread
    for (int c0 = 0; c0 < row16; c0 += U * V16) {
      uint4 v[PER * U];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < PER; ++j) {
          const int e = j * 256 + threadIdx.x, r = e / V16, c = e % V16;
          v[u * PER + j] = ldg_stream(base + (long long)r * row16 + c0 + u * V16 + c);
        }
#pragma unroll
      for (int q = 0; q < PER * U; ++q) acc ^= v[q].y;
    }
  }
  if (acc == 0x12345678u) out[0] = acc;
}

template <class F>
float time_it(F f) {
  EventTimer timer;
  std::vector<float> ts;
  for (int i = 0; i < 25; ++i) {
    const float us = timer.us(f);
    if (i >= 5) ts.push_back(us);
  }
  return median(ts);
}

int main() {
  const int rows = 151936, d = 4096, row16 = d * 2 / 16;
  const long long bytes = (long long)rows * d * 2, n16 = bytes / 16;
  uint4* w; unsigned* out;
  CHECK(cudaMalloc(&w, bytes));
  CHECK(cudaMalloc(&out, 4));
  CHECK(cudaMemset(w, 1, bytes));
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs, W %.3f GB\n", prop.name, sms, bytes / 1e9);
  for (int rep = 0; rep < 2; ++rep) {
    for (int k : {2, 4, 8}) {
      float us = time_it([&] { flat<<<sms * k, 256>>>(w, n16, out); });
      printf("flat grid %dx: %.1f us  %.0f GB/s\n", k, us, bytes / us / 1e3);
    }
#define T(R, C)                                                                                    \
  for (int k : {2, 4, 8}) {                                                                        \
    float us = time_it([&] { tiled<R, C><<<sms * k, 256>>>(w, rows, row16, out); });               \
    printf("tiled R=%d C=%d grid %dx: %.1f us  %.0f GB/s\n", R, C, k, us, bytes / us / 1e3);       \
  }
    T(64, 128) T(64, 256) T(64, 512) T(64, 1024) T(64, 2048)
    T(128, 128) T(128, 256) T(128, 512) T(128, 1024)
    T(16, 1024) T(16, 2048) T(8, 8192)
  }
  CHECK(cudaFree(w));
  CHECK(cudaFree(out));
  return 0;
}
