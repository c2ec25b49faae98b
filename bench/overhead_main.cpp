// overhead_main.cpp: host-side cost of the runtime JIT path, for one shape
// (default V=151936, d=4096, bf16, N=8):
//   (a) cold first call: a fresh, empty cache directory ($FUSEDSAMPLE_CACHE_DIR
//       set to a new temp dir before anything else), a new Sampler, the host
//       time of its first sample() (NVRTC compile + disk store + module load
//       + workspace + launch);
//   (b) warm first call: the same cache directory in a new process (this
//       binary re-executed with --child-warm, so the in-process memo is empty):
//       the first sample() loads the module from disk (cuModuleLoadData);
//       also a second Sampler in the first process (memo hit) for comparison;
//   (c) steady state: K back-to-back sample() calls on a stream, each timed on
//       the host (steady_clock) without synchronisation; the stream is
//       synchronised every 256 launches (sample() is one kernel launch)
//       outside the timed calls so the launch queue never fills. The same for
//       a bare cuLaunchKernel of an empty kernel, the driver's own floor.
// Prints markdown tables. Without a GPU it says why and exits 1.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/sampler.hpp"
#include "runtime/buffer_extents.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"

namespace fs = fusedsample;
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kLaunchesPerSync = 256;

struct Options {
  std::int64_t vocab = 151936, hidden = 4096, rows = 8;
  int iters = 10000;
  bool child_warm = false;
};

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// W, H (zeros: values do not change host cost), out and a stream in the
// current context.
struct Buffers {
  fs::runtime::DeviceMemory w, h, out;
  CUstream stream = nullptr;
  explicit Buffers(const Options& o)
      : w(std::size_t(o.vocab * o.hidden) * 2), h(std::size_t(o.rows * o.hidden) * 2), out(std::size_t(o.rows) * 8) {
    FS_CU(cuMemsetD8(w.get(), 0, w.size()));
    FS_CU(cuMemsetD8(h.get(), 0, h.size()));
    FS_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  }
  ~Buffers() {
    if (const auto* cu = fs::driver::try_api(nullptr)) cu->cuStreamDestroy(stream);
  }
  fs::SampleArgs args(const Options& o) const {
    fs::SampleArgs a;
    a.weights = w.as<void>();
    a.hidden_states = h.as<void>();
    a.rows = o.rows;
    a.seed = 42;
    a.out = out.as<void>();
    return a;
  }
};

fs::SamplerOptions sampler_options(const Options& o) {
  fs::SamplerOptions so;
  so.vocab = o.vocab;
  so.hidden = o.hidden;
  so.dtype = fs::DType::bf16;
  return so;
}

struct FirstCall {
  double construct_us = 0, first_call_us = 0;
};

// A new Sampler and the host time of its first sample().
FirstCall first_call(const Options& o, const Buffers& b) {
  FirstCall r;
  auto t0 = Clock::now();
  fs::Sampler s(sampler_options(o));
  r.construct_us = us_since(t0);
  const fs::SampleArgs a = b.args(o);
  t0 = Clock::now();
  s.sample(a, reinterpret_cast<fs::Stream>(b.stream));
  r.first_call_us = us_since(t0);
  FS_CU(cuStreamSynchronize(b.stream));
  return r;
}

struct Stats {
  double median = 0, p99 = 0, mean = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  s.p99 = v[std::min(v.size() - 1, std::size_t(0.99 * double(v.size())))];
  for (double x : v) s.mean += x;
  s.mean /= double(v.size());
  return s;
}

// Host time of each of `iters` calls; the stream is synchronised (untimed)
// every `sync_every` calls.
std::vector<double> per_call_us(int iters, int sync_every, CUstream stream, const std::function<void()>& call) {
  for (int i = 0; i < 100; ++i) call();  // warm-up
  FS_CU(cuStreamSynchronize(stream));
  std::vector<double> out;
  out.reserve(std::size_t(iters));
  for (int i = 0; i < iters; ++i) {
    if (i % sync_every == 0) FS_CU(cuStreamSynchronize(stream));
    const auto t0 = Clock::now();
    call();
    out.push_back(us_since(t0));
  }
  FS_CU(cuStreamSynchronize(stream));
  return out;
}

// An empty kernel, compiled with NVRTC for this GPU.
CUfunction empty_kernel(const fs::runtime::Context& ctx, CUmodule* module) {
  fs::RenderedKernel r;
  r.spec = fs::default_spec(fs::DType::bf16, ctx.arch(), 1);
  r.source = "extern \"C\" __global__ void fs_empty_kernel() {}\n";
  r.options = {fmt::format("--gpu-architecture={}", fs::to_string(ctx.arch())), "-default-device"};
  const fs::CompiledKernel k = fs::compile_uncached(r);
  const auto& cu = fs::driver::api();
  if (cu.cuModuleLoadData(module, k.cubin.data()) != CUDA_SUCCESS) FS_CU(cuModuleLoadData(module, k.ptx.c_str()));
  CUfunction f = nullptr;
  FS_CU(cuModuleGetFunction(&f, *module, "fs_empty_kernel"));
  return f;
}

int run_child(const Options& o) {
  fs::runtime::Context ctx(-1);
  Buffers b(o);
  const FirstCall r = first_call(o, b);
  std::printf("FS_WARM %.3f %.3f\n", r.construct_us, r.first_call_us);
  return 0;
}

// Re-executes this binary with --child-warm (same environment: the same
// cache directory) and returns its measurement.
FirstCall warm_in_new_process(const Options& o) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = fmt::format("'{}' --child-warm --vocab={} --hidden={} --rows={}", self, o.vocab, o.hidden, o.rows);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw fs::Error("popen failed for the warm-start child");
  FirstCall r;
  char line[256];
  bool got = false;
  while (std::fgets(line, sizeof line, pipe))
    if (std::sscanf(line, "FS_WARM %lf %lf", &r.construct_us, &r.first_call_us) == 2) got = true;
  const int status = pclose(pipe);
  if (!got || status != 0) throw fs::Error(fmt::format("the warm-start child failed (status {})", status));
  return r;
}

int run_parent(const Options& o) {
  auto t0 = Clock::now();
  fs::runtime::Context ctx(-1);
  const double context_us = us_since(t0);
  Buffers b(o);
  const FirstCall cold = first_call(o, b);
  const FirstCall memo = first_call(o, b);  // second Sampler, same process: memo hit
  const FirstCall warm = warm_in_new_process(o);

  fs::Sampler s(sampler_options(o));
  const fs::SampleArgs a = b.args(o);
  const auto stream = reinterpret_cast<fs::Stream>(b.stream);
  const Stats lib = stats(per_call_us(o.iters, kLaunchesPerSync, b.stream, [&] { s.sample(a, stream); }));
  CUmodule module = nullptr;
  const CUfunction empty = empty_kernel(ctx, &module);
  const Stats bare = stats(per_call_us(o.iters, kLaunchesPerSync, b.stream, [&] {
    FS_CU(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, b.stream, nullptr, nullptr));
  }));
  fs::driver::api().cuModuleUnload(module);
  // The buffer extent checks alone, as sample() above makes them
  // (runtime/buffer_extents.hpp: the needs, then one cuPointerGetAttributes
  // per buffer, W, H and out here).
  const fs::SamplerOptions so = sampler_options(o);
  const Stats extents = stats(per_call_us(o.iters, kLaunchesPerSync, b.stream, [&] {
    fs::runtime::check_buffer_extents(fs::runtime::buffer_needs(so, a), ctx.pageable_memory_access(), b.stream);
  }));

  fmt::print("GPU: {}, driver {}, NVRTC {}; V={} d={} bf16, N={}; kernel [{}]\n\n", ctx.name(), fs::driver_version(),
             fs::nvrtc_version(), o.vocab, o.hidden, o.rows, s.spec_for(o.rows).to_string());
  fmt::print("| first call (host time) | Sampler() | first sample() |\n|---|---:|---:|\n");
  fmt::print("| (a) cold: empty cache dir, NVRTC compile + store + load | {:.1f} µs | {:.1f} ms |\n", cold.construct_us,
             cold.first_call_us / 1e3);
  fmt::print("| (b) warm: new process, module from the disk cache | {:.1f} µs | {:.1f} ms |\n", warm.construct_us,
             warm.first_call_us / 1e3);
  fmt::print("| same process, new Sampler (memo hit: module load only) | {:.1f} µs | {:.1f} ms |\n", memo.construct_us,
             memo.first_call_us / 1e3);
  fmt::print("\n(context creation before these: {:.1f} ms, not included)\n\n", context_us / 1e3);
  fmt::print("| (c) steady state, {} calls, host µs per call | median | p99 | mean |\n|---|---:|---:|---:|\n", o.iters);
  fmt::print("| Sampler::sample() (1 kernel launch) | {:.2f} | {:.2f} | {:.2f} |\n", lib.median, lib.p99, lib.mean);
  fmt::print("| bare cuLaunchKernel, empty kernel | {:.2f} | {:.2f} | {:.2f} |\n", bare.median, bare.p99, bare.mean);
  fmt::print("| of which the buffer extent checks (3 buffers) | {:.2f} | {:.2f} | {:.2f} |\n", extents.median,
             extents.p99, extents.mean);
  fmt::print("| library overhead: sample() - bare launch | {:.2f} | - | {:.2f} |\n", lib.median - bare.median,
             lib.mean - bare.mean);
  fmt::print("\n(stream synchronised every {} launches, outside the timed calls)\n", kLaunchesPerSync);
  return 0;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> std::optional<long long> {
      const std::string prefix = std::string("--") + name + "=";
      if (a.rfind(prefix, 0) != 0) return std::nullopt;
      return std::stoll(a.substr(prefix.size()));
    };
    if (a == "--child-warm") o.child_warm = true;
    else if (auto v = value("iters")) o.iters = int(*v);
    else if (auto v = value("vocab")) o.vocab = *v;
    else if (auto v = value("hidden")) o.hidden = *v;
    else if (auto v = value("rows")) o.rows = *v;
    else throw fs::InvalidArgument(fmt::format("unknown argument '{}' (options: --iters=K --vocab=V --hidden=D --rows=N)", a));
  }
  if (o.iters < 1 || o.vocab < 1 || o.hidden < 8 || o.rows < 1)
    throw fs::InvalidArgument("--iters, --vocab, --rows must be >= 1 and --hidden >= 8");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusedsample_overhead: %s\n", e.what());
    return 2;
  }
  if (o.child_warm) {
    try {
      return run_child(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusedsample_overhead (warm child): error: %s\n", e.what());
      return 1;
    }
  }
  // A fresh, empty cache directory before anything can touch the cache.
  std::string dir = (std::filesystem::temp_directory_path() / "fs-overhead-XXXXXX").string();
  if (!::mkdtemp(dir.data())) {
    std::perror("fusedsample_overhead: mkdtemp");
    return 1;
  }
  ::setenv("FUSEDSAMPLE_CACHE_DIR", dir.c_str(), 1);
  ::unsetenv("FUSEDSAMPLE_CACHE_DISABLE");
  int rc = 1;
  std::string why;
  if (!fs::gpu_available(&why)) {
    std::fprintf(stderr, "fusedsample_overhead needs a GPU: %s\n", why.c_str());
  } else {
    try {
      rc = run_parent(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusedsample_overhead: error: %s\n", e.what());
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
