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

std::vector<std::vector<double>> time_interleaved_us(const std::vector<std::function<void()>>& calls, CUstream stream,
                                                     int warmup, int rounds) {
  const std::size_t n = calls.size();
  for (int i = 0; i < warmup; ++i)
    for (const auto& c : calls) c();
  std::vector<CUevent> ev(2 * n * std::size_t(rounds));
  for (auto& e : ev) FS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  std::vector<std::size_t> order;  // pipeline of each timed call
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t p = (std::size_t(r) + k) % n, i = order.size();
      FS_CU(cuEventRecord(ev[2 * i], stream));
      calls[p]();
      FS_CU(cuEventRecord(ev[2 * i + 1], stream));
      order.push_back(p);
    }
  FS_CU(cuStreamSynchronize(stream));
  std::vector<std::vector<double>> out(n);
  for (std::size_t i = 0; i < order.size(); ++i) {
    float ms = 0;
    FS_CU(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    out[order[i]].push_back(ms * 1000.0);
  }
  for (auto& e : ev) FS_CU(cuEventDestroy(e));
  return out;
}

}  // namespace fusedsample::bench
