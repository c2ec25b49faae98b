// device_memory.hpp: an owning device allocation.
#pragma once
#include <cuda.h>

#include <cstddef>

namespace fusedsample::runtime {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& o) noexcept;
  DeviceMemory& operator=(DeviceMemory&& o) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  CUdeviceptr get() const { return ptr_; }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(ptr_); }
  std::size_t size() const { return bytes_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  void release();
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace fusedsample::runtime
