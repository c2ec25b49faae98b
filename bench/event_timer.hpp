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

// The interleaved timer and its call record: the tuner's (autotune/kernel_timer.hpp),
// shared with its finalist round.
using autotune::kNoCall;
using autotune::TimedCall;
using autotune::time_in_order_us;
// The median: the tuner's (autotune/kernel_timer.hpp), one definition for both.
using autotune::median;

}  // namespace fusedsample::bench
