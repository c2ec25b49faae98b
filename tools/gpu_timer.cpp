#include "tools/gpu_timer.hpp"

#include <algorithm>

#include "runtime/cuda_driver.hpp"

namespace fusedsample::cli {
namespace {

struct Events {
  std::vector<CUevent> e;
  explicit Events(std::size_t n) {
    e.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      CUevent ev = nullptr;
      FS_CU(cuEventCreate(&ev, CU_EVENT_DEFAULT));
      e.push_back(ev);
    }
  }
  ~Events() {
    if (const auto* cu = driver::try_api(nullptr))
      for (CUevent ev : e) cu->cuEventDestroy(ev);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

}  // namespace

std::vector<double> time_on_stream(CUstream stream, int warmup, int iters, const std::function<void()>& enqueue) {
  for (int i = 0; i < warmup; ++i) enqueue();
  FS_CU(cuStreamSynchronize(stream));
  Events ev(std::size_t(iters) + 1);
  FS_CU(cuEventRecord(ev.e[0], stream));
  for (int i = 0; i < iters; ++i) {
    enqueue();
    FS_CU(cuEventRecord(ev.e[std::size_t(i) + 1], stream));
  }
  FS_CU(cuEventSynchronize(ev.e.back()));
  std::vector<double> ms(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    float t = 0;
    FS_CU(cuEventElapsedTime(&t, ev.e[std::size_t(i)], ev.e[std::size_t(i) + 1]));
    ms[std::size_t(i)] = t;
  }
  return ms;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace fusedsample::cli
