#include "runtime/context.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "fusedsample/errors.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {
namespace {

// The device's primary context, retained once for the life of the process
// (as the CUDA runtime does): releasing it when a Sampler dies would destroy
// it under every other user on the thread.
CUcontext primary_context(CUdevice dev) {
  static std::mutex mu;
  static std::map<CUdevice, CUcontext> retained;
  std::lock_guard<std::mutex> lock(mu);
  auto it = retained.find(dev);
  if (it != retained.end()) return it->second;
  CUcontext ctx = nullptr;
  FS_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  retained.emplace(dev, ctx);
  return ctx;
}

}  // namespace

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
    ctx_ = primary_context(dev_);
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
  pageable_ = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0;
  arch_ = arch_for_compute_capability(cc_major_, cc_minor_);
  char name[256] = {};
  FS_CU(cuDeviceGetName(name, sizeof name, dev_));
  name_ = name;
}

Context::~Context() = default;

CUcontext Context::make_current() const {
  CUcontext current = nullptr;
  FS_CU(cuCtxGetCurrent(&current));
  if (current != ctx_) FS_CU(cuCtxSetCurrent(ctx_));
  return current;
}

KeepCallerContext::KeepCallerContext() { FS_CU(cuCtxGetCurrent(&caller_)); }

KeepCallerContext::KeepCallerContext(const Context& ctx) : caller_(ctx.make_current()), made_(ctx.handle()) {}

KeepCallerContext::~KeepCallerContext() {
  if (!caller_ || caller_ == made_) return;
  const auto* cu = driver::try_api(nullptr);
  if (!cu) return;
  CUcontext now = made_;
  if (!now && cu->cuCtxGetCurrent(&now) != CUDA_SUCCESS) return;
  if (now != caller_) cu->cuCtxSetCurrent(caller_);
}

}  // namespace fusedsample::runtime
