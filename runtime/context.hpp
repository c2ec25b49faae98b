// context.hpp: the CUDA context the library works in. If the calling thread
// has a current context (PyTorch, the CUDA runtime, the caller's own), that
// one is used; otherwise the device's primary context, which the CUDA
// runtime shares, is retained and made current.
#pragma once
#include <cuda.h>

#include <string>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::runtime {

class Context {
 public:
  // device < 0: the current context's device, or device 0.
  explicit Context(int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Make this context current on the calling thread if it is not; returns
  // the context that was current (nullptr: none).
  CUcontext make_current() const;
  CUcontext handle() const { return ctx_; }
  CUdevice device() const { return dev_; }
  int cc_major() const { return cc_major_; }
  int cc_minor() const { return cc_minor_; }
  int multiprocessors() const { return sms_; }
  int max_shared_optin() const { return smem_optin_; }
  // Whether kernels may read pageable host memory (HMM or ATS): then a pointer
  // no CUDA allocation holds may still be valid (buffer_extents.hpp).
  bool pageable_memory_access() const { return pageable_; }
  Arch arch() const { return arch_; }
  const std::string& name() const { return name_; }

 private:
  CUcontext ctx_ = nullptr;
  CUdevice dev_ = 0;
  int cc_major_ = 0, cc_minor_ = 0, sms_ = 0, smem_optin_ = 0;
  bool pageable_ = false;
  Arch arch_ = Arch::sm_80;
  std::string name_;
};

// Gives the calling thread back, when it goes out of scope (exceptions
// included), the context that was current when it was made, if there was one
// (a thread that had none keeps what the library made current). The Sampler's
// calls run in one: a caller on another context (cudaSetDevice(1), then a
// Sampler of device 0) keeps its device.
class KeepCallerContext {
 public:
  // Only remembers the current context (the Sampler's constructor, whose
  // Context then makes its own current).
  KeepCallerContext();
  // Also makes `ctx` current (Context::make_current: cuCtxSetCurrent only
  // where another context was current, then once more on the way out; a
  // caller already on ctx pays one cuCtxGetCurrent, as before session 60).
  explicit KeepCallerContext(const Context& ctx);
  ~KeepCallerContext();
  KeepCallerContext(const KeepCallerContext&) = delete;
  KeepCallerContext& operator=(const KeepCallerContext&) = delete;

 private:
  CUcontext caller_ = nullptr;
  CUcontext made_ = nullptr;  // what the second constructor made current; nullptr: unknown, ask the driver
};

}  // namespace fusedsample::runtime
