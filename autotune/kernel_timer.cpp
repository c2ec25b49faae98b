// kernel_timer.cpp: see kernel_timer.hpp.
#include "autotune/kernel_timer.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/cuda_driver.hpp"

namespace fusedsample::autotune {

FlushedTimer::FlushedTimer(CUstream stream, std::size_t l2_bytes, CUfunction stream_kernel, int multiprocessors)
    : stream_(stream),
      flush_(std::max<std::size_t>(2 * l2_bytes, std::size_t(256) << 20)),
      reader_(stream_kernel),
      reader_blocks_(4 * std::max(multiprocessors, 1)),
      sink_(std::size_t(reader_blocks_) * sizeof(std::uint32_t)) {
  FS_CU(cuEventCreate(&start_, CU_EVENT_DEFAULT));
  FS_CU(cuEventCreate(&stop_, CU_EVENT_DEFAULT));
  FS_CU(cuMemsetD8Async(flush_.get(), 0, flush_.size(), stream_));  // defined contents, then only read
  FS_CU(cuStreamSynchronize(stream_));
}

FlushedTimer::~FlushedTimer() {
  if (const auto* cu = driver::try_api(nullptr)) {
    if (start_) cu->cuEventDestroy(start_);
    if (stop_) cu->cuEventDestroy(stop_);
  }
}

std::vector<double> FlushedTimer::time_us(const std::function<void()>& enqueue, int warmup, int reps, int min_reps,
                                          const std::function<bool()>& stop) {
  for (int i = 0; i < warmup; ++i) enqueue();
  FS_CU(cuStreamSynchronize(stream_));
  std::vector<double> out;
  out.reserve(std::size_t(std::max(reps, 0)));
  for (int i = 0; i < reps; ++i) {
    if (i >= min_reps && stop && stop()) break;
    flush();
    FS_CU(cuEventRecord(start_, stream_));
    enqueue();
    FS_CU(cuEventRecord(stop_, stream_));
    FS_CU(cuEventSynchronize(stop_));
    float ms = 0;
    FS_CU(cuEventElapsedTime(&ms, start_, stop_));
    out.push_back(double(ms) * 1000.0);
  }
  return out;
}

void FlushedTimer::flush() {
  CUdeviceptr buf = flush_.get(), out = sink_.get();
  std::int64_t n16 = std::int64_t(flush_.size() / 16);
  void* params[] = {&buf, &n16, &out};
  FS_CU(cuLaunchKernel(reader_, unsigned(reader_blocks_), 1, 1, 256, 1, 1, 0, stream_, params, nullptr));
}

std::vector<TimedCall> time_in_order_us(const std::vector<std::function<void()>>& calls,
                                        const std::vector<std::size_t>& order, CUstream stream, int warmup,
                                        const std::function<void()>& before) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& c : calls) c();
  std::vector<CUevent> ev(2 * order.size());
  for (auto& e : ev) FS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  struct Destroy {
    std::vector<CUevent>& ev;
    ~Destroy() {
      if (const auto* cu = driver::try_api(nullptr))
        for (auto e : ev)
          if (e) cu->cuEventDestroy(e);
    }
  } destroy{ev};
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (before) before();
    FS_CU(cuEventRecord(ev[2 * i], stream));
    calls.at(order[i])();
    FS_CU(cuEventRecord(ev[2 * i + 1], stream));
  }
  FS_CU(cuStreamSynchronize(stream));
  std::vector<TimedCall> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    float ms = 0;
    FS_CU(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    out[i] = {order[i], i > 0 ? order[i - 1] : (warmup > 0 && !calls.empty() ? calls.size() - 1 : kNoCall),
              ms * 1000.0};
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double stream_floor_us(CUfunction stream_kernel, CUdeviceptr weights, std::size_t bytes, int multiprocessors,
                       FlushedTimer& timer, int reps) {
  runtime::DeviceMemory sink(std::size_t(multiprocessors) * 16 * sizeof(std::uint32_t));
  CUdeviceptr w = weights, out = sink.get();
  std::int64_t n16 = std::int64_t(bytes / 16);
  void* params[] = {&w, &n16, &out};
  double best = 0;
  for (int per_sm : {2, 4, 8, 16}) {
    const unsigned blocks = unsigned(multiprocessors * per_sm);
    auto launch = [&] {
      FS_CU(cuLaunchKernel(stream_kernel, blocks, 1, 1, 256, 1, 1, 0, timer.stream(), params, nullptr));
    };
    const double us = median(timer.time_us(launch, 2, reps));
    if (best == 0 || us < best) best = us;
  }
  return best;
}

}  // namespace fusedsample::autotune
