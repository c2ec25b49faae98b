// cmd_info.cpp: `fusedsample info` -- versions and the GPUs the driver reports.
#include <fmt/format.h>

#include "fusedsample/compiler.hpp"
#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
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
  fmt::print("NVRTC                  {}\n", nvrtc_version());
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
