// cmd_demo.cpp: `fusedsample demo` -- sample from a random LM head on the GPU,
// check the samples against the CPU reference and time the fused sampler.
// Without a GPU: compile the kernels, run the CPU reference, say why the GPU
// part was skipped.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "fusedsample/compiler.hpp"
#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/reference.hpp"
#include "fusedsample/sampler.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands.hpp"
#include "tools/demo_check.hpp"
#include "tools/demo_data.hpp"
#include "tools/gpu_timer.hpp"
#include "tools/spec_args.hpp"

namespace fusedsample::cli {
namespace {

// Work the CPU reference does by default: rows are checked while V*d*rows
// stays within this many multiply-adds (at least one row).
constexpr double kCheckBudgetMac = 4e9;
constexpr int kWarmup = 3;
constexpr int kShownRows = 4, kShownSamples = 8;

struct DemoConfig {
  std::int64_t vocab, hidden, rows;
  DType dtype;
  int samples, iters;
  float temperature;
  std::uint64_t seed;
  std::int64_t check_rows;
  std::optional<KernelSpec> spec;
  Arch arch;  // compile target without a GPU
  bool arch_given = false;  // --arch given (beside --spec: replaces its arch without a GPU)
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Inputs {
  std::vector<std::uint8_t> weights, hidden;  // dtype storage, [V, d] and [N, d]
};

// H ~ N(0, 1), W ~ N(0, 9/d): logits of standard deviation about 3.
Inputs make_inputs(const DemoConfig& c) {
  const auto t0 = std::chrono::steady_clock::now();
  Inputs in;
  in.weights = random_normal(c.dtype, std::size_t(c.vocab * c.hidden), 3.0 / std::sqrt(double(c.hidden)), c.seed, 0);
  in.hidden = random_normal(c.dtype, std::size_t(c.rows * c.hidden), 1.0, c.seed, 1);
  fmt::print("inputs: W [{} x {}] ~ N(0, 9/d), H [{} x {}] ~ N(0, 1), {}, seed {} ({:.1f} s)\n", c.vocab, c.hidden,
             c.rows, c.hidden, to_string(c.dtype), c.seed, seconds_since(t0));
  return in;
}

// The reference for the first c.check_rows rows (the noise does not depend on
// a row's position in the batch, so a prefix is checked on its own).
std::vector<ReferenceResult> run_reference(const DemoConfig& c, const Inputs& in) {
  const std::int64_t k = c.check_rows;
  const std::string which = k == 1 ? std::string("row 0") : fmt::format("rows 0..{}", k - 1);
  fmt::print("CPU reference on {} of {} (full vocabulary, double-precision logits)...\n", which, c.rows);
  if (k < c.rows)
    fmt::print("  only the first {} of {} rows are checked (--check-rows N changes this; each row costs V*d = {:.3g} "
               "multiply-adds)\n",
               k, c.rows, double(c.vocab) * double(c.hidden));
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ReferenceRowParams> params(std::size_t(k), ReferenceRowParams{c.temperature, c.seed, 0});
  auto ref = reference_sample(in.weights.data(), in.hidden.data(), c.dtype, c.vocab, c.hidden, k, params, c.samples);
  fmt::print("CPU reference done ({:.1f} s)\n", seconds_since(t0));
  return ref;
}

void print_samples(const char* what, const std::vector<std::int64_t>& idx, std::int64_t rows, int samples) {
  fmt::print("{} samples (row: token indices):\n", what);
  const std::int64_t shown_rows = std::min<std::int64_t>(rows, kShownRows);
  for (std::int64_t n = 0; n < shown_rows; ++n) {
    std::string line;
    const int shown = std::min(samples, kShownSamples);
    for (int s = 0; s < shown; ++s) line += fmt::format("{}{}", s ? " " : "", idx[std::size_t(n * samples + s)]);
    if (shown < samples) line += fmt::format(" ... ({} more)", samples - shown);
    fmt::print("  row {}: {}\n", n, line);
  }
  if (shown_rows < rows) fmt::print("  ... ({} more rows)\n", rows - shown_rows);
}

int run_without_gpu(const DemoConfig& c, const std::string& why) {
  KernelSpec spec = c.spec ? *c.spec : default_spec(c.dtype, c.arch, c.rows);
  // Without a GPU, --arch beside --spec is the target the spec's variant is
  // compiled for on that arch (target_arch), as in `compile`; until session 41
  // it was ignored. (With a GPU --arch is not used: the Sampler compiles the
  // spec for the GPU's arch, or keeps an sm_90a spec's on an sm_90 GPU.)
  if (c.spec && c.arch_given) {
    spec.arch = target_arch(spec.variant, c.arch);
    try {
      spec.validate();
    } catch (const Error& e) {
      throw UsageError(fmt::format("--spec with --arch {}: {}", to_string(c.arch), e.what()));
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto k = compile_kernel(spec);
  fmt::print("compiled [{}]: CUBIN {} bytes, PTX {} bytes, cache key {} ({:.2f} s)\n", spec.to_string(),
             k->cubin.size(), k->ptx.size(), k->cache_key, seconds_since(t0));
  if (c.check_rows > 0) {
    const Inputs in = make_inputs(c);
    const auto ref = run_reference(c, in);
    std::vector<std::int64_t> idx;
    for (const auto& r : ref) idx.push_back(r.index);
    print_samples("CPU reference", idx, c.check_rows, c.samples);
  }
  fmt::print("GPU execution skipped: {}\n", why);
  return kExitOk;
}

int run_with_gpu(const DemoConfig& c) {
  SamplerOptions opts;
  opts.vocab = c.vocab;
  opts.hidden = c.hidden;
  opts.dtype = c.dtype;
  opts.spec = c.spec;
  Sampler sampler(opts);  // makes its context current on this thread

  const auto devices = list_devices();
  CUdevice dev = 0;
  FS_CU(cuCtxGetDevice(&dev));
  double peak_gbs = 0;  // DRAM peak: double data rate x memory clock x bus width
  for (const auto& d : devices)
    if (d.ordinal == int(dev)) {
      peak_gbs = 2.0 * double(d.memory_clock_khz) * 1e3 * (d.memory_bus_width_bits / 8.0) / 1e9;
      fmt::print("device {}: {} (compute capability {}.{}, {} SMs)\n", d.ordinal, d.name, d.cc_major, d.cc_minor,
                 d.multiprocessors);
    }

  const Inputs in = make_inputs(c);
  const std::size_t esize = dtype_size(c.dtype);
  runtime::DeviceMemory w(in.weights.size()), h(in.hidden.size()),
      out(std::size_t(c.rows) * std::size_t(c.samples) * sizeof(std::int64_t));
  w.upload(in.weights.data(), in.weights.size());
  h.upload(in.hidden.data(), in.hidden.size());

  CUstream stream = nullptr;
  FS_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  struct StreamGuard {
    CUstream s;
    ~StreamGuard() {
      if (const auto* cu = driver::try_api(nullptr)) cu->cuStreamDestroy(s);
    }
  } guard{stream};

  const auto t0 = std::chrono::steady_clock::now();
  sampler.reserve(c.rows, c.samples);
  fmt::print("kernel: [{}] (reserve: compile, load, workspace: {:.2f} s)\n",
             sampler.spec_for(c.rows, c.samples).to_string(), seconds_since(t0));

  SampleArgs a;
  a.weights = w.as<void>();
  a.hidden_states = h.as<void>();
  a.rows = c.rows;
  a.temperature = c.temperature;
  a.seed = c.seed;
  a.num_samples = c.samples;
  a.out = out.as<void>();
  const auto s = reinterpret_cast<Stream>(stream);
  sampler.sample(a, s);
  FS_CU(cuStreamSynchronize(stream));
  std::vector<std::int64_t> got(std::size_t(c.rows) * std::size_t(c.samples));
  out.download(got.data(), got.size() * sizeof(std::int64_t));
  print_samples("GPU", got, c.rows, c.samples);

  CheckReport report;
  if (c.check_rows > 0) {
    report = check_samples(got, run_reference(c, in), c.samples);
    fmt::print("check: {} (row, sample) pairs: {} equal, {} close (reference's top two within tolerance), {} mismatches\n",
               report.exact + report.close + report.mismatches, report.exact, report.close, report.mismatches);
    for (const auto& line : report.details) fmt::print("  {}\n", line);
    const std::int64_t unlisted = report.close + report.mismatches - std::int64_t(report.details.size());
    if (unlisted > 0) fmt::print("  ... ({} more not listed)\n", unlisted);
  } else {
    fmt::print("check: skipped (--check-rows 0)\n");
  }

  const std::vector<double> ms = time_on_stream(stream, kWarmup, c.iters, [&] { sampler.sample(a, s); });
  const double med = median(ms);
  const double w_bytes = double(c.vocab) * double(c.hidden) * double(esize);
  fmt::print("timing: {} calls after {} warm-up calls: median {:.1f} us (min {:.1f}, max {:.1f})\n", c.iters, kWarmup,
             med * 1e3, *std::min_element(ms.begin(), ms.end()) * 1e3, *std::max_element(ms.begin(), ms.end()) * 1e3);
  const double gbs = w_bytes / (med * 1e-3) / 1e9;
  fmt::print("bandwidth: W is {:.1f} MB; {:.0f} GB/s achieved (bytes of W / median time){}\n", w_bytes / 1e6, gbs,
             peak_gbs > 0 ? fmt::format(", {:.0f}% of the {:.0f} GB/s DRAM peak", 100.0 * gbs / peak_gbs, peak_gbs)
                          : std::string());
  if (report.mismatches > 0) {
    fmt::print(stderr, "error: {} sample(s) disagree with the CPU reference\n", report.mismatches);
    return kExitMismatch;
  }
  return kExitOk;
}

}  // namespace

int cmd_demo(const std::vector<std::string>& argv) {
  ArgParser parser("fusedsample demo [options]",
                   "Samples the next token for `rows` random hidden states from a random LM head\n"
                   "(fused matmul + Gumbel-max on the GPU), checks every (row, sample) of the\n"
                   "first rows against the CPU reference and times the sampler with CUDA events.\n"
                   "Without a GPU it compiles the kernels, runs the CPU reference and says why the\n"
                   "GPU part was skipped.");
  parser.option("vocab", "V", "vocabulary size", "151936")
      .option("hidden", "D", "hidden size, a multiple of 8", "4096")
      .option("rows", "N", "batch rows (hidden states)", "8")
      .option("dtype", "T", "storage type of W and H: bf16, fp16, fp32", "bf16")
      .option("samples", "S", "independent samples per row", "1")
      .option("temperature", "TAU", "sampling temperature: 0 (greedy) or >= 2^-64", "1.0")
      .option("seed", "SEED", "seed of the random inputs and of the sampler's noise", "42")
      .option("iters", "N", "timed calls", "20")
      .option("check-rows", "N",
              "rows checked against the CPU reference, 0 for none (default: as many as fit in 4e9 "
              "multiply-adds, at least 1; without a GPU 1)")
      .option("spec", "TEXT", "force one kernel spec; its dtype is the default for --dtype, its arch is replaced by the GPU's")
      .option("arch", "ARCH", "target to compile for when there is no GPU (replaces the --spec's)", "sm_90")
      .epilog(
          "exit codes: 0 ok (also when there is no GPU), 1 library error, 2 bad command line,\n"
          "3 a GPU sample disagrees with the reference beyond the accumulation tolerance.");
  const Args args = parser.parse(argv);
  if (args.help_requested()) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  constexpr std::int64_t kIntMax = 0x7fffffff;
  DemoConfig c;
  c.vocab = args.get_int("vocab", 151936, 1, kIntMax - 1024);
  c.hidden = args.get_int("hidden", 4096, 8, std::int64_t(1) << 24);
  if (c.hidden % 8 != 0)
    throw UsageError(fmt::format("invalid value '{}' for --hidden: must be a multiple of 8", c.hidden));
  c.rows = args.get_int("rows", 8, 1, kIntMax);
  c.dtype = dtype_arg(args, DType::bf16);  // or the --spec's, below
  c.samples = int(args.get_int("samples", 1, 1, kIntMax));
  const double tau = args.get_double("temperature", 1.0);
  // The library's rule (fs_temperature_valid: 0, or finite and >= 2^-64), checked on the value as given, so
  // that a positive value rounding to 0 in fp32 (1e-50) is not taken for greedy.
  if (tau < 0 || !std::isfinite(float(tau)) || (tau > 0 && !(float(tau) >= kMinTemperature)))
    throw UsageError(fmt::format("invalid value '{}' for --temperature: must be 0 (greedy) or in [2^-64, 3.4e38] "
                                 "(finite in fp32, at least {})",
                                 *args.get("temperature"), kMinTemperature));
  c.temperature = tau == 0.0 ? 0.0f : float(tau);  // -0 is greedy, printed as 0
  c.seed = args.get_u64("seed", 42);
  c.iters = int(args.get_int("iters", 20, 1, 1000000));
  c.arch = arch_arg(args, Arch::sm_90);
  if (args.has("spec")) {
    c.spec = spec_text_arg(args);
    if (!args.has("dtype")) c.dtype = c.spec->dtype;
    if (c.spec->dtype != c.dtype)
      throw UsageError(fmt::format("--spec has dtype {} but --dtype is {}", to_string(c.spec->dtype),
                                   to_string(c.dtype)));
    if (c.spec->variant == Variant::logits)
      throw UsageError("--spec: the demo needs a fused variant (mma_sync or simt), not 'logits'");
    c.arch_given = args.has("arch");
  }
  const double mac_per_row = double(c.vocab) * double(c.hidden);
  const std::int64_t auto_rows = std::clamp<std::int64_t>(std::int64_t(kCheckBudgetMac / mac_per_row), 1, c.rows);
  std::string why;
  const bool gpu = gpu_available(&why);
  // Without a GPU the reference only shows what the samples would be: one row.
  c.check_rows = args.get_int("check-rows", gpu ? auto_rows : 1, 0, c.rows);

  fmt::print("fusedsample demo: V={} d={} rows={} dtype={} samples={} temperature={} seed={}\n", c.vocab, c.hidden,
             c.rows, to_string(c.dtype), c.samples, c.temperature, c.seed);
  if (!gpu) return run_without_gpu(c, why);
  return run_with_gpu(c);
}

}  // namespace fusedsample::cli
