// gpu_timer.hpp: times work enqueued on a stream with CUDA events (driver API).
#pragma once
#include <cuda.h>

#include <functional>
#include <vector>

namespace fusedsample::cli {

// Runs `enqueue` `warmup` times untimed, then `iters` times back to back with
// an event recorded between consecutive calls, and returns each call's GPU
// time in milliseconds (event to event). Synchronizes the stream.
std::vector<double> time_on_stream(CUstream stream, int warmup, int iters, const std::function<void()>& enqueue);

// The median of `v` (by value).
double median(std::vector<double> v);

}  // namespace fusedsample::cli
