// errors.hpp: typed exceptions thrown by the library. Every message names the
// problem and its context (the call, the CUDA/NVRTC error name, the config).
#pragma once
#include <stdexcept>
#include <string>

namespace fusedsample {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller-supplied argument is wrong (shape, pointer, temperature, spec...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// The requested dtype/arch/variant combination is not supported.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// No usable CUDA driver or GPU on this machine.
class NoGpu : public Error {
 public:
  using Error::Error;
};

// A CUDA driver API call failed. Holds the CUresult value and its name.
class CudaError : public Error {
 public:
  CudaError(int code, std::string name, const std::string& message)
      : Error(message), code_(code), name_(std::move(name)) {}
  int code() const { return code_; }
  const std::string& name() const { return name_; }
  // Whether the error left the CUDA context unusable (a device fault such as
  // an illegal address, an assert, a contained error): every later CUDA call
  // of the process fails too, so a server restarts the process rather than
  // retrying. Other errors (out of memory, a bad argument) leave it usable.
  bool sticky() const;

 private:
  int code_;
  std::string name_;
};

// NVRTC failed. Holds the compile log, the options and the rendered source.
class CompileError : public Error {
 public:
  CompileError(const std::string& message, std::string log, std::string options, std::string source)
      : Error(message), log_(std::move(log)), options_(std::move(options)), source_(std::move(source)) {}
  const std::string& log() const { return log_; }
  const std::string& options() const { return options_; }
  const std::string& source() const { return source_; }

 private:
  std::string log_, options_, source_;
};

// A cache or config file is unreadable, corrupt or of the wrong version.
class FileError : public Error {
 public:
  using Error::Error;
};

}  // namespace fusedsample
