#include "tests/support/gpu_test_support.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "fusedsample/numeric.hpp"

namespace fusedsample::testing {

std::uint64_t fresh_seed() {
  if (const char* s = std::getenv("FUSEDSAMPLE_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  const std::uint64_t seed =
      std::random_device{}() ^ std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::printf("[ seed     ] FUSEDSAMPLE_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

std::vector<std::uint8_t> random_storage(DType dtype, std::size_t n, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<float> dist(0.0f, float(stddev));
  std::vector<std::uint8_t> out(n * dtype_size(dtype));
  for (std::size_t i = 0; i < n; ++i) {
    const float f = dist(rng);
    if (dtype == DType::fp32) {
      std::memcpy(&out[i * 4], &f, 4);
    } else {
      const std::uint16_t h = dtype == DType::bf16 ? float_to_bf16(f) : float_to_fp16(f);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

TestDevice test_device() {
  const DeviceInfo dev = list_devices().at(0);
  return {dev, DeviceIdentity{dev.name, dev.multiprocessors, dev.cc_major, dev.cc_minor},
          arch_for_compute_capability(dev.cc_major, dev.cc_minor)};
}

}  // namespace fusedsample::testing
