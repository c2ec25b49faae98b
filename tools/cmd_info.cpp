// cmd_info.cpp: `fusedsample info` -- versions and the GPUs the driver reports.
#include <fmt/format.h>

#include "fusedsample/compiler.hpp"
#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/disk_cache.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands.hpp"

namespace fusedsample::cli {
namespace {

std::string gib(long long bytes) { return fmt::format("{:.1f} GiB", double(bytes) / double(1ll << 30)); }

void print_device(const DeviceInfo& d) {
  std::string arch;
  try {
    arch = std::string(to_string(arch_for_compute_capability(d.cc_major, d.cc_minor)));
  } catch (const Unsupported& e) {
    arch = fmt::format("unsupported ({})", e.what());
  }
  // Peak DRAM bandwidth: double data rate x clock x bus width.
  const double peak_gbs = 2.0 * double(d.memory_clock_khz) * 1e3 * (d.memory_bus_width_bits / 8.0) / 1e9;
  fmt::print("GPU {}: {}\n", d.ordinal, d.name);
  fmt::print("  compute capability   {}.{} (kernels compiled for {})\n", d.cc_major, d.cc_minor, arch);
  fmt::print("  multiprocessors      {}\n", d.multiprocessors);
  fmt::print("  global memory        {}\n", gib(d.global_memory_bytes));
  fmt::print("  memory clock / bus   {} MHz / {} bits (peak {:.0f} GB/s)\n", d.memory_clock_khz / 1000,
             d.memory_bus_width_bits, peak_gbs);
  fmt::print("  SM clock             {} MHz\n", d.sm_clock_khz / 1000);
  fmt::print("  L2 cache             {:g} MiB\n", d.l2_bytes / double(1 << 20));
  fmt::print("  shared mem / block   {} KiB (opt-in)\n", d.max_shared_per_block_optin / 1024);
}

// Where compiled modules and tuned configs live, and what is there.
void print_cache() {
  const auto dir = disk_cache_enabled() ? cache_directory() : std::nullopt;
  if (!dir) {
    fmt::print("cache                  disabled\n");
    return;
  }
  std::size_t modules = 0;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(*dir / "modules", ec))
    if (f.path().extension() == ".fsmod") ++modules;
  fmt::print("cache                  {} ({} compiled modules)\n", dir->string(), modules);
  const auto db_path = tuning_db_path();
  const TuningDb user = db_path ? load_tuning_db(*db_path) : TuningDb{};
  fmt::print("tuned entries          {} in {}; {} built in\n", user.entries().size(),
             db_path ? db_path->string() : std::string("-"), builtin_tuning_db().entries().size());
  for (const TuningEntry& e : user.entries()) {
    const Measurement* best = e.best();
    const int sb = e.key.samples_bucket;  // samples per row: 1, 2..4, 5 or more
    const std::string samples = sb == 0                       ? "S=1"
                                : sb + 1 < kNumSampleBuckets ? fmt::format("S<={}", bucket_samples(sb))
                                                             : fmt::format("S>{}", bucket_samples(sb - 1));
    fmt::print("  {} ({} SMs) {} V={} d={} N<={} {}: {}{}\n", e.key.device.name, e.key.device.multiprocessors,
               to_string(e.key.dtype), e.key.vocab, e.key.d_model, batch_bucket_label(e.key.bucket), samples,
               best ? best->spec : "-",
               best && best->median_us > 0 ? fmt::format(" ({:.1f} us, {})", best->median_us, to_string(best->method)) : "");
  }
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
  ArgParser parser("fusedsample info",
                   "Prints the generator and NVRTC versions, the CUDA driver version and every GPU\n"
                   "the driver reports. Without a GPU it says why none is usable (exit code 0).");
  const Args args = parser.parse(argv);
  if (args.help_requested()) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  fmt::print("fusedsample generator  {}\n", generator_version());
  fmt::print("NVRTC                  {} ({})\n", nvrtc_version(), nvrtc_build());
  print_cache();
  std::string why;
  if (!gpu_available(&why)) {
    fmt::print("CUDA driver            not available\n");
    fmt::print("GPU                    none: {}\n", why);
    return kExitOk;
  }
  fmt::print("CUDA driver            {}\n", driver_version());
  for (const DeviceInfo& d : list_devices()) print_device(d);
  return kExitOk;
}

}  // namespace fusedsample::cli
