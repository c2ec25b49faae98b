#include "runtime/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "fusedsample/errors.hpp"

namespace fusedsample::driver {
namespace {

struct Loaded {
  Api api;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  const char* override_path = std::getenv("FUSEDSAMPLE_LIBCUDA");
  const bool from_env = override_path && *override_path;  // an empty value is no override
  const char* path = from_env ? override_path : "libcuda.so.1";
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    l.why = fmt::format("no CUDA driver: cannot load {} ({}){}", path, err ? err : "unknown error",
                        from_env ? " [from FUSEDSAMPLE_LIBCUDA]" : "");
    return l;
  }
#define FS_CU_LOAD(name)                                                                       \
  l.api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, FS_CU_STR(name)));            \
  if (!l.api.name) {                                                                           \
    l.why = fmt::format("CUDA driver {} lacks the symbol {}; driver too old?", path, FS_CU_STR(name)); \
    return l;                                                                                  \
  }
  FS_CUDA_DRIVER_FUNCTIONS(FS_CU_LOAD)
#undef FS_CU_LOAD
  const CUresult r = l.api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    l.api.cuGetErrorName(r, &name);
    // The toolkit's stub libcuda.so answers CUDA_ERROR_STUB_LIBRARY and names no error (session 48).
    if (!name && r == CUDA_ERROR_STUB_LIBRARY) name = "CUDA_ERROR_STUB_LIBRARY";
    l.why = fmt::format("no GPU: cuInit failed with {}{} (driver library {})", name ? name : std::to_string(int(r)),
                        r == CUDA_ERROR_STUB_LIBRARY ? ": the CUDA toolkit's stub, not a driver" : "", path);
    return l;
  }
  int count = 0;
  if (l.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l.why = "no GPU: the CUDA driver reports no device";
    return l;
  }
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();  // thread-safe one-time initialisation
  return l;
}

}  // namespace

const Api* try_api(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok) {
    if (why) *why = l.why;
    return nullptr;
  }
  return &l.api;
}

const Api& api() {
  const Loaded& l = loaded();
  if (!l.ok) throw NoGpu(l.why);
  return l.api;
}

std::string error_text(CUresult r) {
  std::string why;
  const Api* a = try_api(&why);
  const char* name = nullptr;
  const char* desc = nullptr;
  if (a) {
    a->cuGetErrorName(r, &name);
    a->cuGetErrorString(r, &desc);
  }
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", int(r)), desc ? desc : "no description");
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (const Api* a = try_api(nullptr)) a->cuGetErrorName(r, &name);
  throw CudaError(int(r), name ? name : std::to_string(int(r)),
                  fmt::format("{} failed: {}{}", call, error_text(r),
                              is_sticky(r) ? "; the CUDA context is unusable from here on (restart the process)" : ""));
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
      return true;
    default:
      return false;
  }
}

CaptureInProgress capture_in_progress(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = api().cuStreamIsCapturing(stream, &status);  // `stream` may be the legacy stream
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return CaptureInProgress::on_a_blocking_stream;
  check(r, "cuStreamIsCapturing(stream, &status)");
  if (status != CU_STREAM_CAPTURE_STATUS_NONE) return CaptureInProgress::on_this_stream;
  status = CU_STREAM_CAPTURE_STATUS_NONE;
  r = api().cuStreamIsCapturing(CU_STREAM_LEGACY, &status);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return CaptureInProgress::on_a_blocking_stream;
  check(r, "cuStreamIsCapturing(CU_STREAM_LEGACY, &status)");
  return CaptureInProgress::none;  // the legacy stream itself is never captured
}

}  // namespace fusedsample::driver

namespace fusedsample {

bool CudaError::sticky() const { return driver::is_sticky(static_cast<CUresult>(code_)); }

}  // namespace fusedsample
