// probe_util.cuh: what the standalone probes in bench/probes/ share: a checked CUDA call that names the error
// and exits 1 (e.g. without a GPU: cudaErrorInsufficientDriver), the floor's 16-byte streaming load, and
// event timing of single launches with medians.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s: %s failed: %s (%s)\n", __FILE__, #call, cudaGetErrorName(e_),     \
                   cudaGetErrorString(e_));                                                        \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// 16 bytes through L2 only (no L1 allocation), as the floor kernel (templates/stream_weights.cuh) loads W.
__device__ __forceinline__ uint4 ldg_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

inline float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times one launch at a time with a pair of CUDA events (µs); checks the launch's error.
struct EventTimer {
  cudaEvent_t a, b;
  EventTimer() {
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
  }
  ~EventTimer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  template <class F>
  float us(F launch) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000;
  }
};
