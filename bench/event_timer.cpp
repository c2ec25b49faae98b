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

std::vector<TimedCall> time_in_order_us(const std::vector<std::function<void()>>& calls,
                                        const std::vector<std::size_t>& order, CUstream stream, int warmup) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& c : calls) c();
  std::vector<CUevent> ev(2 * order.size());
  for (auto& e : ev) FS_CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  for (std::size_t i = 0; i < order.size(); ++i) {
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
  for (auto& e : ev) FS_CU(cuEventDestroy(e));
  return out;
}

}  // namespace fusedsample::bench
