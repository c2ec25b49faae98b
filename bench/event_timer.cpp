#include "bench/event_timer.hpp"


#include "runtime/cuda_driver.hpp"

namespace fusedsample::bench {

std::vector<double> time_us(const std::function<void()>& enqueue, CUstream stream, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) enqueue();
  std::vector<CUevent> ev(2 * reps);
  for (auto& e : ev) FS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  for (int i = 0; i < reps; ++i) {
    FS_CU(cuEventRecord(ev[2 * i], stream));
    enqueue();
    FS_CU(cuEventRecord(ev[2 * i + 1], stream));
  }
  FS_CU(cuStreamSynchronize(stream));
  std::vector<double> out(reps);
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    FS_CU(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    out[i] = ms * 1000.0;
  }
  for (auto& e : ev) FS_CU(cuEventDestroy(e));
  return out;
}

}  // namespace fusedsample::bench
