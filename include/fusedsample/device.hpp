// device.hpp: what the CUDA driver reports, for tools and the tuner.
#pragma once
#include <string>
#include <vector>

namespace fusedsample {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  long long global_memory_bytes = 0;
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int sm_clock_khz = 0;
  int l2_bytes = 0;
  int max_shared_per_block_optin = 0;
};

// True if libcuda loads and reports at least one device. Never throws.
bool gpu_available(std::string* why_not = nullptr);
// Driver version as "major.minor"; throws NoGpu without a driver.
std::string driver_version();
// Every device; throws NoGpu without a driver or device.
std::vector<DeviceInfo> list_devices();

}  // namespace fusedsample
