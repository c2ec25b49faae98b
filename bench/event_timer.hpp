// event_timer.hpp: median device time of a launch sequence, with CUDA events.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "autotune/kernel_timer.hpp"

namespace fusedsample::bench {

// Runs `enqueue` `warmup` times, then `reps` times each bracketed by events
// on `stream`; returns every repetition's time in microseconds.
std::vector<double> time_us(const std::function<void()>& enqueue, CUstream stream, int warmup, int reps);

// One timed call of an ordered run: which pipeline, which pipeline ran just
// before it (for the first call the last warm-up call, or kNoCall without
// warm-up), and its time in µs.
inline constexpr std::size_t kNoCall = static_cast<std::size_t>(-1);
struct TimedCall {
  std::size_t line = 0, after = kNoCall;
  double us = 0;
};

// Times several pipelines under the same conditions: `warmup` calls of each
// (0 .. n-1), then the calls of `order` (call_order.hpp), all enqueued back to
// back with an event pair around each (no host gaps). Under a power or
// thermal limit the clock follows the work of the last few milliseconds, so
// the order decides what each pipeline is measured after.
std::vector<TimedCall> time_in_order_us(const std::vector<std::function<void()>>& calls,
                                        const std::vector<std::size_t>& order, CUstream stream, int warmup);
// The median: the tuner's (autotune/kernel_timer.hpp), one definition for both.
using autotune::median;

}  // namespace fusedsample::bench
