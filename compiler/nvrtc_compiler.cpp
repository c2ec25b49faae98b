// nvrtc_compiler.cpp: one rendered unit -> PTX + CUBIN with NVRTC. Failures
// throw CompileError carrying the NVRTC log, the options and the source.
#include <fmt/format.h>
#include <nvrtc.h>

#include <memory>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"

namespace fusedsample {
namespace {

// ptxas -v reports "Compile time = N ms" per kernel: drop it, so the same
// source always yields the same module (and the same disk-cache file).
std::string without_timing_lines(const std::string& log) {
  std::string out;
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    const std::string_view line(log.data() + pos, end - pos);
    if (line.find("Compile time =") == std::string_view::npos) {
      out.append(line);
      out += '\n';
    }
    pos = end + 1;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}


std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nvrtcDestroyProgram(p);
    delete p;
  }
};

// NVRTC 12.9 and later keep their own cache of compiled programs (in the
// driver's compute cache, ~/.nv/ComputeCache), and a program served from it
// has an empty log: no ptxas -v report, so kernel_resources() knew nothing
// and the tuner's spill screen passed spilling kernels (session 37: two
// shipped bf16 specs spilled). Our module cache is the cache; NVRTC's is
// turned off. Not part of the rendered options: it does not change the
// binary, so it stays out of the module cache's key.
bool nvrtc_has_own_cache() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return false;
  return major > 12 || (major == 12 && minor >= 9);
}

}  // namespace

std::vector<std::string> nvrtc_options(const RenderedKernel& rendered) {
  std::vector<std::string> options = rendered.options;
  static const bool own_cache = nvrtc_has_own_cache();
  if (own_cache) options.push_back("--no-cache");
  return options;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::string nvrtc_build() {
  // The PTX header of an empty kernel: "Compiler Build ID: CL-..." and
  // "Cuda compilation tools, release 13.0, V13.0.88". Once per process.
  static const std::string build = [] {
    nvrtcProgram prog = nullptr;
    if (nvrtcCreateProgram(&prog, "extern \"C\" __global__ void fs_probe() {}", "fs_probe.cu", 0, nullptr, nullptr) !=
        NVRTC_SUCCESS)
      return std::string("unknown");
    std::string ptx;
    if (nvrtcCompileProgram(prog, 0, nullptr) == NVRTC_SUCCESS) {
      std::size_t n = 0;
      if (nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
        ptx.resize(n);
        if (nvrtcGetPTX(prog, ptx.data()) != NVRTC_SUCCESS) ptx.clear();
      }
    }
    nvrtcDestroyProgram(&prog);
    std::string out;
    for (const char* tag : {"// Compiler Build ID: ", "// Cuda compilation tools, "}) {
      const auto at = ptx.find(tag);
      if (at == std::string::npos) continue;
      const auto from = at + std::string_view(tag).size();
      out += (out.empty() ? "" : "; ") + ptx.substr(from, ptx.find('\n', from) - from);
    }
    return out.empty() ? std::string("unknown") : out;
  }();
  return build;
}

CompiledKernel compile_uncached(const RenderedKernel& r) {
  const auto& headers = embedded_templates();
  std::vector<std::string> header_src;
  std::vector<const char*> header_ptrs, header_names;
  header_src.reserve(headers.size());
  for (const auto& h : headers) header_src.emplace_back(h.data, h.size);
  for (std::size_t i = 0; i < headers.size(); ++i) {
    header_ptrs.push_back(header_src[i].c_str());
    header_names.push_back(headers[i].name);
  }
  const std::string name = "fusedsample_kernel.cu";
  const std::vector<std::string> options = nvrtc_options(r);
  auto fail = [&](const std::string& what, nvrtcResult res, const std::string& log) -> CompileError {
    return CompileError(fmt::format("NVRTC {} failed for spec [{}]: {}\noptions: {}\nlog:\n{}", what, r.spec.to_string(),
                                    nvrtcGetErrorString(res), join(options), log),
                        log, join(options), r.source);
  };

  std::unique_ptr<nvrtcProgram, ProgramDeleter> prog(new nvrtcProgram{});
  nvrtcResult res = nvrtcCreateProgram(prog.get(), r.source.c_str(), name.c_str(), int(headers.size()),
                                       header_ptrs.data(), header_names.data());
  if (res != NVRTC_SUCCESS) {
    delete prog.release();
    throw fail("nvrtcCreateProgram", res, "");
  }
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  res = nvrtcCompileProgram(*prog, int(opts.size()), opts.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(*prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) nvrtcGetProgramLog(*prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  log = without_timing_lines(log);
  if (res != NVRTC_SUCCESS) throw fail("compilation", res, log);

  CompiledKernel out;
  out.spec = r.spec;
  out.source = r.source;
  out.options = r.options;
  out.log = log;
  std::size_t ptx_size = 0;
  if ((res = nvrtcGetPTXSize(*prog, &ptx_size)) != NVRTC_SUCCESS) throw fail("nvrtcGetPTXSize", res, log);
  out.ptx.resize(ptx_size);
  if ((res = nvrtcGetPTX(*prog, out.ptx.data())) != NVRTC_SUCCESS) throw fail("nvrtcGetPTX", res, log);
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  std::size_t cubin_size = 0;
  if ((res = nvrtcGetCUBINSize(*prog, &cubin_size)) != NVRTC_SUCCESS) throw fail("nvrtcGetCUBINSize", res, log);
  out.cubin.resize(cubin_size);
  if ((res = nvrtcGetCUBIN(*prog, out.cubin.data())) != NVRTC_SUCCESS) throw fail("nvrtcGetCUBIN", res, log);
  out.cache_key = kernel_cache_key(r);
  return out;
}

}  // namespace fusedsample
