#include <fmt/format.h>

#include "fusedsample/device.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample {

bool gpu_available(std::string* why_not) { return driver::try_api(why_not) != nullptr; }

std::string driver_version() {
  int v = 0;
  FS_CU(cuDriverGetVersion(&v));
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::vector<DeviceInfo> list_devices() {
  int count = 0;
  FS_CU(cuDeviceGetCount(&count));
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    FS_CU(cuDeviceGet(&dev, i));
    DeviceInfo d;
    d.ordinal = i;
    char name[256] = {};
    FS_CU(cuDeviceGetName(name, sizeof name, dev));
    d.name = name;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      FS_CU(cuDeviceGetAttribute(&v, a, dev));
      return v;
    };
    d.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d.memory_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d.max_shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    size_t bytes = 0;
    FS_CU(cuDeviceTotalMem(&bytes, dev));
    d.global_memory_bytes = (long long)bytes;
    out.push_back(d);
  }
  return out;
}

}  // namespace fusedsample
