// event_timer.hpp: median device time of a launch sequence, with CUDA events.
#pragma once
#include <cuda.h>

#include <functional>
#include <vector>

#include "autotune/kernel_timer.hpp"

namespace fusedsample::bench {

// Runs `enqueue` `warmup` times, then `reps` times each bracketed by events
// on `stream`; returns every repetition's time in microseconds.
std::vector<double> time_us(const std::function<void()>& enqueue, CUstream stream, int warmup, int reps);

// Times several pipelines under the same conditions: after `warmup` calls of
// each, `rounds` rounds that call every pipeline once, the order rotating by
// one each round, all enqueued back to back with an event pair around each
// call (no host gaps). Returns µs per call, [pipeline][round]. Under a power
// or thermal limit the clock follows the work of the last few milliseconds;
// interleaving gives every pipeline the same mix of predecessors, where
// timing them one after the other would give each its own clock.
std::vector<std::vector<double>> time_interleaved_us(const std::vector<std::function<void()>>& calls, CUstream stream,
                                                     int warmup, int rounds);
// The median: the tuner's (autotune/kernel_timer.hpp), one definition for both.
using autotune::median;

}  // namespace fusedsample::bench
