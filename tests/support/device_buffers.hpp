// device_buffers.hpp: the CUDA side of the Sampler GPU tests
// (tests/runtime/sampler_*_gpu_test.cpp): a process-wide CUDA context,
// device buffers from host vectors (and poisoned ones), and RAII for
// streams and graphs.
#pragma once
#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"

namespace fusedsample::testing {

// ---------------------------------------------------------------------------
// Context and device buffers
// ---------------------------------------------------------------------------

// Retains device 0's primary context once for the life of the process and
// makes it current on the calling thread, as an application using the CUDA
// runtime would; Samplers adopt it. Buffers the tests allocate then never
// depend on how a Sampler manages the context (that is tested on its own, in
// a child process: SamplerContextGpu.SamplerLifetimeKeepsContextUsable).
inline void use_process_context() {
  static const CUcontext ctx = [] {
    CUdevice dev = 0;
    FS_CU(cuDeviceGet(&dev, 0));
    CUcontext c = nullptr;
    FS_CU(cuDevicePrimaryCtxRetain(&c, dev));
    return c;
  }();
  CUcontext current = nullptr;
  FS_CU(cuCtxGetCurrent(&current));
  if (current != ctx) FS_CU(cuCtxSetCurrent(ctx));
}

template <typename T>
runtime::DeviceMemory to_device(const std::vector<T>& host) {
  runtime::DeviceMemory m(std::max<std::size_t>(host.size() * sizeof(T), 16));
  m.upload(host.data(), host.size() * sizeof(T));
  return m;
}

inline runtime::DeviceMemory to_device_bytes(const void* host, std::size_t bytes) {
  runtime::DeviceMemory m(std::max<std::size_t>(bytes, 16));
  m.upload(host, bytes);
  return m;
}

template <typename T>
std::vector<T> from_device(const runtime::DeviceMemory& m, std::size_t count) {
  std::vector<T> host(count);
  m.download(host.data(), count * sizeof(T));
  return host;
}

// Fills the whole buffer with 0xAB bytes.
inline constexpr std::uint8_t kPoisonByte = 0xAB;
inline constexpr std::int64_t kPoison64 = std::int64_t(0xABABABABABABABABull);
inline constexpr std::int32_t kPoison32 = std::int32_t(0xABABABABu);
inline void poison(const runtime::DeviceMemory& m) { FS_CU(cuMemsetD8(m.get(), kPoisonByte, m.size())); }

// Whether the current context's GPU reads pageable host memory directly
// (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS): there the Sampler accepts
// buffers no CUDA allocation holds.
inline bool gpu_reads_pageable_memory() {
  CUdevice dev;
  FS_CU(cuCtxGetDevice(&dev));
  int pageable = 0;
  FS_CU(cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev));
  return pageable != 0;
}

// ---------------------------------------------------------------------------
// CUDA stream / graph RAII
// ---------------------------------------------------------------------------

struct StreamGuard {
  CUstream s = nullptr;
  explicit StreamGuard(unsigned flags = CU_STREAM_DEFAULT) { FS_CU(cuStreamCreate(&s, flags)); }
  ~StreamGuard() {
    if (const auto* cu = driver::try_api(nullptr); cu && s) cu->cuStreamDestroy(s);
  }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  Stream get() const { return reinterpret_cast<Stream>(s); }
};

struct GraphGuard {
  CUgraph g = nullptr;
  ~GraphGuard() {
    if (const auto* cu = driver::try_api(nullptr); cu && g) cu->cuGraphDestroy(g);
  }
};

struct GraphExecGuard {
  CUgraphExec e = nullptr;
  ~GraphExecGuard() {
    if (const auto* cu = driver::try_api(nullptr); cu && e) cu->cuGraphExecDestroy(e);
  }
};

}  // namespace fusedsample::testing
