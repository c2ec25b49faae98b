#include "runtime/device_memory.hpp"

#include <fmt/format.h>

#include <utility>

#include "fusedsample/errors.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {

DeviceMemory::DeviceMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes) FS_CU(cuMemAlloc(&ptr_, bytes));
}

DeviceMemory::~DeviceMemory() { release(); }

DeviceMemory::DeviceMemory(DeviceMemory&& o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceMemory::release() {
  if (ptr_) {
    if (const auto* cu = driver::try_api(nullptr)) cu->cuMemFree(ptr_);
    ptr_ = 0;
  }
}

void DeviceMemory::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_) throw InvalidArgument(fmt::format("upload of {} bytes into a {}-byte buffer", bytes, bytes_));
  if (bytes) FS_CU(cuMemcpyHtoD(ptr_, host, bytes));
}

void DeviceMemory::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_) throw InvalidArgument(fmt::format("download of {} bytes from a {}-byte buffer", bytes, bytes_));
  if (bytes) FS_CU(cuMemcpyDtoH(host, ptr_, bytes));
}

}  // namespace fusedsample::runtime
