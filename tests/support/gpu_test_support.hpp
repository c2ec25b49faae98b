// gpu_test_support.hpp: helpers for tests that need a GPU.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/device.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuning_db.hpp"

// Skip (never fail, never pass silently) when no GPU is usable.
#define FS_REQUIRE_GPU()                                                              \
  do {                                                                                \
    std::string fs_why_;                                                              \
    if (!::fusedsample::gpu_available(&fs_why_)) GTEST_SKIP() << "GPU test skipped: " << fs_why_; \
  } while (0)

namespace fusedsample::testing {

// A seed drawn fresh for each run (printed so a failure can be replayed with
// FUSEDSAMPLE_TEST_SEED=<value>).
std::uint64_t fresh_seed();

// n values of `dtype` storage (2 or 4 bytes each) drawn from N(0, stddev^2).
std::vector<std::uint8_t> random_storage(DType dtype, std::size_t n, double stddev, std::mt19937_64& rng);

// Device 0 (call after FS_REQUIRE_GPU): what list_devices() says, its
// identity in the tuning database, and the arch its kernels compile for.
struct TestDevice {
  DeviceInfo info;
  DeviceIdentity id;
  Arch arch;
};
TestDevice test_device();

}  // namespace fusedsample::testing
