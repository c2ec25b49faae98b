// compiler.hpp: renders a KernelSpec to CUDA C++ from the embedded templates
// and compiles it with NVRTC. Works without a GPU or driver.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample {

// A rendered translation unit: the source NVRTC compiles and the names of
// the embedded headers it includes.
struct RenderedKernel {
  KernelSpec spec;
  std::string source;
  std::vector<std::string> options;
};

struct CompiledKernel {
  KernelSpec spec;
  std::string source;
  std::vector<std::string> options;
  std::string ptx;
  std::vector<char> cubin;  // SASS for spec.arch
  std::string log;          // NVRTC's log (warnings)
  std::string cache_key;    // hash of everything that changes the binary
};

// Version of the generator (templates + rendering rules); part of cache keys.
const char* generator_version();
// "major.minor" of the linked NVRTC.
std::string nvrtc_version();
// NVRTC's build, from the PTX header of an empty kernel compiled once per
// process, e.g. "CL-36424714; release 13.0, V13.0.88": a toolkit update
// within 13.0 changes it ("unknown" if NVRTC gives no such header).
std::string nvrtc_build();

RenderedKernel render_kernel(const KernelSpec& spec);
// Render + compile, memoized for the life of the process (thread-safe).
std::shared_ptr<const CompiledKernel> compile_kernel(const KernelSpec& spec);
// Compile without the memo (tests, tools).
CompiledKernel compile_uncached(const RenderedKernel& rendered);
// What compile_uncached passes to NVRTC: the rendered options, and with
// NVRTC 12.9+ `--no-cache` (its own cache returns programs without ptxas's
// -v report; nvrtc_compiler.cpp).
std::vector<std::string> nvrtc_options(const RenderedKernel& rendered);
// Whether a compile log holds ptxas's -v report (what kernel_resources reads).
bool has_ptxas_report(const std::string& log);
// The key of a rendered kernel: XXH3-128 over source, options, arch, the
// embedded templates, NVRTC's version and build and the generator version,
// as 32 hex digits.
std::string kernel_cache_key(const RenderedKernel& rendered);
// The same with the NVRTC version and build given (the one above passes
// nvrtc_version() and nvrtc_build()).
std::string kernel_cache_key(const RenderedKernel& rendered, std::string_view nvrtc_version,
                             std::string_view nvrtc_build);

// What ptxas reported for one kernel of a compiled module (from the log of
// --ptxas-options=-v); nullopt if the log does not name the kernel.
struct KernelResources {
  int registers = 0;
  int stack_bytes = 0;
  int spill_store_bytes = 0, spill_load_bytes = 0;
  int shared_static_bytes = 0;  // the dynamic part is KernelSpec::shared_bytes()
  // ptxas reported (advisory C7515, C7511, ...) that it serialized this
  // kernel's wgmma.mma_async instructions (each waits for the one before):
  // a session-28 stream-K experiment that did so ran 30-40 % slower at
  // N = 256 (BENCHMARKS.md). Such a kernel is exact but not a tuning candidate.
  bool wgmma_serialized = false;
};
std::optional<KernelResources> kernel_resources(const CompiledKernel& k, const std::string& kernel = "fs_fused_kernel");

// Names and contents of the templates embedded at build time.
struct EmbeddedFile {
  const char* name;
  const char* data;
  std::size_t size;
};
const std::vector<EmbeddedFile>& embedded_templates();
// The built-in tuning tables (autotune/builtin/*.json) embedded at build time.
const std::vector<EmbeddedFile>& embedded_tuning_files();

}  // namespace fusedsample
