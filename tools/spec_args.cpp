#include "tools/spec_args.hpp"

#include <fmt/format.h>

#include <tuple>

#include "compiler/int_pair.hpp"
#include "fusedsample/errors.hpp"

namespace fusedsample::cli {
namespace {

// Runs a library parser on --name's value; its error becomes a UsageError.
template <typename F>
auto parse_with(const Args& args, const std::string& name, F&& parse) {
  const std::string text = *args.get(name);
  try {
    return parse(text);
  } catch (const fusedsample::Error& e) {
    throw UsageError(fmt::format("invalid value '{}' for {}: {}", text, option_text(name), e.what()));
  }
}

}  // namespace

DType dtype_arg(const Args& args, DType fallback) {
  if (!args.has("dtype")) return fallback;
  return parse_with(args, "dtype", [](const std::string& t) { return parse_dtype(t); });
}

Arch arch_arg(const Args& args, Arch fallback) {
  if (!args.has("arch")) return fallback;
  return parse_with(args, "arch", [](const std::string& t) { return parse_arch(t); });
}

KernelSpec spec_text_arg(const Args& args) {
  const KernelSpec s = parse_with(args, "spec", [](const std::string& t) { return KernelSpec::parse(t); });
  try {
    s.validate();
  } catch (const fusedsample::Error& e) {
    throw UsageError(fmt::format("invalid value '{}' for --spec: {}", *args.get("spec"), e.what()));
  }
  return s;
}

std::vector<KernelSpec> spec_list_arg(const Args& args, const char* name) {
  std::vector<KernelSpec> out;
  const auto text = args.get(name);
  if (!text) return out;
  for (const std::string& one : split_spec_list(*text)) {
    try {
      const KernelSpec s = KernelSpec::parse(one);
      s.validate();
      // A candidate computes the matmul: `logits` samples given logits (the
      // Sampler, import and demo refuse it; until session 40 --also passed it
      // on to fail as a candidate).
      if (s.variant == Variant::logits)
        throw InvalidArgument("the 'logits' variant samples logits already in memory; a candidate must compute the matmul");
      out.push_back(s);
    } catch (const fusedsample::Error& e) {
      throw UsageError(fmt::format("invalid spec '{}' in --{}: {}", one, name, e.what()));
    }
  }
  if (out.empty()) throw UsageError(fmt::format("--{} names no spec (want \"spec;spec\")", name));
  return out;
}

void add_spec_options(ArgParser& p) {
  p.option("dtype", "T", "storage type of W and H: bf16, fp16, fp32", "bf16")
      .option("arch", "ARCH", "target: sm_80, sm_86, sm_89, sm_90, sm_90a", "sm_90")
      .option("variant", "V", "kernel body: mma_sync (bf16/fp16), simt (fp32), logits, wgmma, wgmma_ws, wgmma_coop (bf16/fp16, sm_90a)", "the --rows default spec's: wgmma (sm_90a) on sm_90, mma_sync on sm_8x, simt for fp32")
      .option("tile-v", "N", "vocabulary rows per block (T_V)")
      .option("tile-n", "N", "batch rows per block (T_N)")
      .option("tile-d", "N", "depth of one pipeline stage (T_d)")
      .option("stages", "N", "cp.async pipeline depth")
      .option("warps", "MxN", "warps along vocabulary x batch, e.g. 4x1")
      .option("cluster", "N", "blocks per thread-block cluster (wgmma_coop: 1, 2 or 4)")
      .option("rows", "N", "start from the library's default spec for N batch rows", "16")
      .option("spec", "TEXT", "start from a full spec, e.g. \"bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1\"");
}

KernelSpec spec_from_args(const Args& args) {
  KernelSpec s;
  Arch arch = Arch::sm_90;  // the GPU's architecture the spec is for
  if (args.has("spec")) {
    if (args.has("rows")) throw UsageError("--rows and --spec both choose the starting spec; give one");
    s = parse_with(args, "spec", [](const std::string& t) { return KernelSpec::parse(t); });
    s.dtype = dtype_arg(args, s.dtype);
    if (args.has("arch")) {  // the target the spec's variant compiles for on that GPU (target_arch)
      arch = arch_arg(args, s.arch);
      s.arch = target_arch(s.variant, arch);
    } else {
      arch = s.arch == Arch::sm_90a ? Arch::sm_90 : s.arch;  // sm_90a is an sm_90 GPU's arch-specific target
    }
  } else {
    const DType dtype = dtype_arg(args, DType::bf16);
    arch = arch_arg(args, Arch::sm_90);
    s = default_spec(dtype, arch, args.get_int("rows", 16, 1, (std::int64_t(1) << 31) - 1));
  }
  // A variant given replaces the default's, and the arch is then the one the
  // Sampler compiles that variant for on `arch` (target_arch: wgmma needs
  // sm_90a, mma_sync on an sm_90 GPU is sm_90). Until session 41 `--arch sm_90
  // --variant mma_sync` kept the default wgmma spec's sm_90a: a module the
  // Sampler never loads.
  if (args.has("variant")) {
    s.variant = parse_with(args, "variant", [](const std::string& t) { return parse_variant(t); });
    s.arch = target_arch(s.variant, arch);
  }
  const int big = 1 << 20;
  s.tile_v = int(args.get_int("tile-v", s.tile_v, 1, big));
  s.tile_n = int(args.get_int("tile-n", s.tile_n, 1, big));
  s.tile_d = int(args.get_int("tile-d", s.tile_d, 1, big));
  s.stages = int(args.get_int("stages", s.stages, 1, big));
  s.cluster = int(args.get_int("cluster", s.cluster, 1, big));
  if (const auto w = args.get("warps")) {
    const auto mn = detail::parse_int_pair(*w, 'x');  // 4294967300x1 is refused, not read as 4x1
    if (!mn || mn->first < 1 || mn->second < 1)
      throw UsageError(fmt::format("invalid value '{}' for --warps: expected MxN, e.g. 4x1", *w));
    std::tie(s.warps_m, s.warps_n) = *mn;
  }
  try {
    s.validate();
  } catch (const fusedsample::Error& e) {
    throw UsageError(e.what());
  }
  return s;
}

}  // namespace fusedsample::cli
