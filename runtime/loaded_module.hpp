// loaded_module.hpp: a compiled kernel set loaded into a context, with its
// two entry points: fs_fused_kernel (the whole sample, one launch) and
// fs_stream_kernel (the bandwidth floor's W-streaming kernel).
#pragma once
#include <cuda.h>

#include <memory>

#include "fusedsample/compiler.hpp"

namespace fusedsample::runtime {

class Context;

class LoadedModule {
 public:
  // Loads the CUBIN when it was built for this device's arch, else the PTX.
  LoadedModule(const Context& ctx, std::shared_ptr<const CompiledKernel> kernel);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  CUfunction fused() const { return fused_; }
  CUfunction stream() const { return stream_; }
  const KernelSpec& spec() const { return kernel_->spec; }
  const CompiledKernel& kernel() const { return *kernel_; }
  // Blocks of the fused kernel resident on the whole GPU at once (for a
  // cluster spec: whole clusters that fit at once, times the cluster size).
  int resident_blocks() const { return resident_blocks_; }
  int fused_registers() const;
  int fused_local_bytes() const;

 private:
  // The entry points, the shared-memory limit and the resident blocks of the
  // loaded module.
  void init_functions(const Context& ctx);
  std::shared_ptr<const CompiledKernel> kernel_;
  CUmodule module_ = nullptr;
  CUfunction fused_ = nullptr, stream_ = nullptr;
  int resident_blocks_ = 0;
};

}  // namespace fusedsample::runtime
