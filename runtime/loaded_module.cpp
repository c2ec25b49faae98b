#include "runtime/loaded_module.hpp"

#include <fmt/format.h>

#include "fusedsample/errors.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {
namespace {

int arch_cc(Arch a) {
  switch (a) {
    case Arch::sm_80: return 80;
    case Arch::sm_86: return 86;
    case Arch::sm_89: return 89;
    case Arch::sm_90:
    case Arch::sm_90a: return 90;
  }
  return 0;
}

}  // namespace

LoadedModule::LoadedModule(const Context& ctx, std::shared_ptr<const CompiledKernel> kernel)
    : kernel_(std::move(kernel)) {
  const KernelSpec& spec = kernel_->spec;
  const int cc = ctx.cc_major() * 10 + ctx.cc_minor();
  if (spec.arch == Arch::sm_90a && cc != 90)
    throw Unsupported(fmt::format("spec [{}] needs an sm_90 GPU (this one is sm_{})", spec.to_string(), cc));
  if (arch_cc(spec.arch) > cc)
    throw Unsupported(fmt::format("spec [{}] was compiled for a newer GPU than this sm_{}", spec.to_string(), cc));
  ctx.make_current();
  const void* image = arch_cc(spec.arch) == cc ? static_cast<const void*>(kernel_->cubin.data())
                                               : static_cast<const void*>(kernel_->ptx.c_str());
  FS_CU(cuModuleLoadData(&module_, image));
  // A constructor that throws runs no destructor: unload the module here.
  try {
    init_functions(ctx);
  } catch (...) {
    driver::api().cuModuleUnload(module_);
    throw;
  }
}

void LoadedModule::init_functions(const Context& ctx) {
  const KernelSpec& spec = kernel_->spec;
  FS_CU(cuModuleGetFunction(&fused_, module_, "fs_fused_kernel"));
  FS_CU(cuModuleGetFunction(&stream_, module_, "fs_stream_kernel"));
  const std::size_t smem = spec.shared_bytes();
  if (smem > std::size_t(ctx.max_shared_optin()))
    throw Unsupported(fmt::format("spec [{}] needs {} bytes of shared memory; this GPU allows {}", spec.to_string(),
                                  smem, ctx.max_shared_optin()));
  FS_CU(cuFuncSetAttribute(fused_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(smem)));
  int per_sm = 0;
  FS_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_, spec.threads(), smem));
  if (per_sm < 1)
    throw Unsupported(fmt::format("spec [{}] cannot run on this GPU: no block fits on a multiprocessor", spec.to_string()));
  resident_blocks_ = per_sm * ctx.multiprocessors();
  if (spec.cluster > 1) {
    // Clusters sit inside one GPC each, so GPCs whose multiprocessor count the
    // cluster size does not divide leave some idle: ask the driver.
    CUlaunchConfig config{};
    config.gridDimX = unsigned(resident_blocks_ / spec.cluster * spec.cluster);
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = unsigned(spec.threads());
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = unsigned(smem);
    int clusters = 0;
    FS_CU(cuOccupancyMaxActiveClusters(&clusters, fused_, &config));
    if (clusters < 1)
      throw Unsupported(fmt::format("spec [{}] cannot run on this GPU: no cluster of {} blocks fits", spec.to_string(),
                                    spec.cluster));
    resident_blocks_ = clusters * spec.cluster;
  }
}

LoadedModule::~LoadedModule() {
  if (module_) {
    if (const auto* cu = driver::try_api(nullptr)) cu->cuModuleUnload(module_);
  }
}

int LoadedModule::fused_registers() const {
  int v = 0;
  FS_CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, fused_));
  return v;
}

int LoadedModule::fused_local_bytes() const {
  int v = 0;
  FS_CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fused_));
  return v;
}

}  // namespace fusedsample::runtime
