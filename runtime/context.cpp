#include "runtime/context.hpp"

#include <fmt/format.h>

#include "fusedsample/errors.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {

Context::Context(int device) {
  const auto& cu = driver::api();
  CUcontext current = nullptr;
  FS_CU(cuCtxGetCurrent(&current));
  CUdevice current_dev = -1;
  if (current) FS_CU(cuCtxGetDevice(&current_dev));
  int count = 0;
  FS_CU(cuDeviceGetCount(&count));
  if (device >= count) throw InvalidArgument(fmt::format("device {} does not exist ({} device(s))", device, count));
  if (current && (device < 0 || current_dev == device)) {
    ctx_ = current;
    dev_ = current_dev;
  } else {
    FS_CU(cuDeviceGet(&dev_, device < 0 ? 0 : device));
    FS_CU(cuDevicePrimaryCtxRetain(&ctx_, dev_));
    retained_primary_ = true;
    FS_CU(cuCtxSetCurrent(ctx_));
  }
  (void)cu;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    FS_CU(cuDeviceGetAttribute(&v, a, dev_));
    return v;
  };
  cc_major_ = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor_ = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  sms_ = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  smem_optin_ = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  arch_ = arch_for_compute_capability(cc_major_, cc_minor_);
}

Context::~Context() {
  if (retained_primary_) {
    if (const auto* cu = driver::try_api(nullptr)) cu->cuDevicePrimaryCtxRelease(dev_);
  }
}

void Context::make_current() const {
  CUcontext current = nullptr;
  FS_CU(cuCtxGetCurrent(&current));
  if (current != ctx_) FS_CU(cuCtxSetCurrent(ctx_));
}

}  // namespace fusedsample::runtime
