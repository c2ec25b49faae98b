// kernel_timer.hpp: GPU time of one launch sequence with CUDA events (driver
// API), the L2 cache flushed before every repetition, outside the events, so
// no repetition finds W (or anything else) in L2 from the one before. The
// flush reads a buffer of at least twice the L2 size with the streaming
// kernel, which leaves L2 holding clean lines. (A written flush buffer leaves
// L2 full of dirty lines whose write-back competes with the timed kernel's
// reads: measured on an H100, the W-streaming floor 427 us after a write flush
// against 402 us back to back, enough to rank bandwidth-bound configs
// differently from the benchmark.)
#pragma once
#include <cuda.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "runtime/device_memory.hpp"

namespace fusedsample::autotune {

class FlushedTimer {
 public:
  // `l2_bytes`: the device's L2 size; the flush buffer is max(2 x L2, 256 MiB).
  // `stream_kernel`: fs_stream_kernel of a module the caller keeps loaded,
  // which reads the flush buffer (4 blocks of 256 threads per multiprocessor).
  FlushedTimer(CUstream stream, std::size_t l2_bytes, CUfunction stream_kernel, int multiprocessors);
  ~FlushedTimer();
  FlushedTimer(const FlushedTimer&) = delete;
  FlushedTimer& operator=(const FlushedTimer&) = delete;

  // Runs `enqueue` `warmup` times, then up to `reps` repetitions of
  // [flush, event, enqueue, event], waiting for each. After `min_reps`, stops
  // early once `stop()` (optional) returns true. Returns each repetition's
  // time in microseconds.
  std::vector<double> time_us(const std::function<void()>& enqueue, int warmup, int reps, int min_reps = 3,
                              const std::function<bool()>& stop = {});

  std::size_t flush_bytes() const { return flush_.size(); }
  CUstream stream() const { return stream_; }
  // Enqueues one flush (the read of the flush buffer) on stream(), untimed
  // (the benchmark's --fs_flush, between its interleaved calls).
  void flush();

 private:
  CUstream stream_;
  runtime::DeviceMemory flush_;
  CUevent start_ = nullptr, stop_ = nullptr;
  CUfunction reader_;
  int reader_blocks_;
  runtime::DeviceMemory sink_;
};

// One timed call of an ordered run: which pipeline, which pipeline ran just
// before it (for the first call the last warm-up call, or kNoCall without
// warm-up), and its time in µs.
inline constexpr std::size_t kNoCall = static_cast<std::size_t>(-1);
struct TimedCall {
  std::size_t line = 0, after = kNoCall;
  double us = 0;
};

// Times several pipelines under the same conditions, as they run in a
// server: `warmup` calls of each (0 .. n-1), then the calls of `order`
// (call_order.hpp), all enqueued back to back with an event pair around each
// (no flush, no host gaps). Under a power or thermal limit the clock follows
// the work of the last few milliseconds, so the order decides what each
// pipeline is measured after. Used by the benchmark's interleaved lines and
// the tuner's finalist round. `before` (optional) is enqueued ahead of each
// timed call, outside its events (the benchmark's --fs_flush: an L2 flush).
std::vector<TimedCall> time_in_order_us(const std::vector<std::function<void()>>& calls,
                                        const std::vector<std::size_t>& order, CUstream stream, int warmup,
                                        const std::function<void()>& before = {});

// The median (by value); 0 for an empty vector.
double median(std::vector<double> v);

// The bandwidth floor: fs_stream_kernel (any loaded module has it) reading
// `bytes` of `weights` once on timer.stream(), as the benchmark's `floor` does: the best median
// over 2, 4, 8 and 16 blocks of 256 threads per multiprocessor.
double stream_floor_us(CUfunction stream_kernel, CUdeviceptr weights, std::size_t bytes, int multiprocessors,
                       FlushedTimer& timer, int reps);

}  // namespace fusedsample::autotune
