// cuda_driver.hpp: the CUDA driver API, loaded at run time with dlopen so
// every binary starts on a machine without a driver. libcuda.so.1 is looked
// up by the dynamic loader; FUSEDSAMPLE_LIBCUDA overrides the path.
#pragma once
#include <cuda.h>

#include <string>

namespace fusedsample::driver {

#define FS_CU_STR2(x) #x
#define FS_CU_STR(x) FS_CU_STR2(x)

// X(name): every entry point the library uses. cuda.h maps some names to
// versioned symbols (cuMemAlloc -> cuMemAlloc_v2); FS_CU_STR expands that.
#define FS_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                         \
  X(cuDriverGetVersion)             \
  X(cuGetErrorName)                 \
  X(cuGetErrorString)               \
  X(cuDeviceGetCount)               \
  X(cuDeviceGet)                    \
  X(cuDeviceGetName)                \
  X(cuDeviceGetAttribute)           \
  X(cuDeviceTotalMem)               \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuDevicePrimaryCtxRelease)      \
  X(cuCtxGetCurrent)                \
  X(cuCtxSetCurrent)                \
  X(cuCtxGetDevice)                 \
  X(cuCtxSynchronize)               \
  X(cuModuleLoadData)               \
  X(cuModuleUnload)                 \
  X(cuModuleGetFunction)            \
  X(cuFuncSetAttribute)             \
  X(cuFuncGetAttribute)             \
  X(cuLaunchKernel)                 \
  X(cuTensorMapEncodeTiled)         \
  X(cuMemAlloc)                     \
  X(cuMemFree)                      \
  X(cuMemcpyHtoD)                   \
  X(cuMemcpyDtoH)                   \
  X(cuMemcpyDtoHAsync)              \
  X(cuMemsetD8)                     \
  X(cuPointerGetAttributes)         \
  X(cuMemsetD8Async)                \
  X(cuMemAllocAsync)                \
  X(cuMemFreeAsync)                 \
  X(cuMemcpyDtoDAsync)              \
  X(cuMemAddressReserve)            \
  X(cuMemAddressFree)               \
  X(cuMemCreate)                    \
  X(cuMemRelease)                   \
  X(cuMemMap)                       \
  X(cuMemUnmap)                     \
  X(cuMemSetAccess)                 \
  X(cuMemGetAllocationGranularity)  \
  X(cuMemsetD32Async)               \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy)                \
  X(cuStreamSynchronize)            \
  X(cuStreamBeginCapture)           \
  X(cuStreamEndCapture)             \
  X(cuStreamIsCapturing)            \
  X(cuGraphInstantiate)             \
  X(cuGraphLaunch)                  \
  X(cuGraphDestroy)                 \
  X(cuGraphExecDestroy)             \
  X(cuGraphGetNodes)                \
  X(cuEventCreate)                  \
  X(cuEventDestroy)                 \
  X(cuEventRecord)                  \
  X(cuEventSynchronize)             \
  X(cuEventElapsedTime)             \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuOccupancyMaxActiveClusters)

struct Api {
#define FS_CU_MEMBER(name) decltype(&::name) name = nullptr;
  FS_CUDA_DRIVER_FUNCTIONS(FS_CU_MEMBER)
#undef FS_CU_MEMBER
};

// The loaded and initialised driver. Throws NoGpu (with the reason: library
// not found, symbol missing, cuInit error, no device) on first use.
const Api& api();
// Like api() but returns nullptr and fills *why instead of throwing.
const Api* try_api(std::string* why);

// "CUDA_ERROR_X (description)" for a CUresult.
std::string error_text(CUresult r);
// Throw CudaError naming the call unless r == CUDA_SUCCESS.
void check(CUresult r, const char* call);
// Whether r leaves the context unusable: every later call returns an error
// too, so a caller stops instead of trying the next thing on it (the errors
// cuda.h documents as leaving the process or context in an inconsistent
// state: device exceptions, asserts, a contained error, an MPS client
// terminated).
bool is_sticky(CUresult r);

// Which capture a call on `stream` that allocates, frees or synchronizes the
// context would break: `stream`'s own, or that of a blocking stream of the
// current context (seen through the legacy stream, whose query answers
// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT then and leaves that capture valid).
// A capture of another non-blocking stream cannot be seen: the driver has no
// query for it.
enum class CaptureInProgress { none, on_this_stream, on_a_blocking_stream };
CaptureInProgress capture_in_progress(CUstream stream);

}  // namespace fusedsample::driver

// FS_CU(cuCall(args)): call through the loaded table and check the result.
#define FS_CU(call) ::fusedsample::driver::check(::fusedsample::driver::api().call, #call)
