#include "fusedsample/kernel_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <set>
#include <sstream>

#include "fusedsample/errors.hpp"
#include "templates/epilogue_registers_smem.cuh"
#include "templates/epilogue_rows.cuh"

namespace fusedsample {
namespace {

template <typename E, std::size_t K>
E parse_enum(std::string_view text, const std::array<std::pair<std::string_view, E>, K>& table, const char* what) {
  std::string choices;
  for (const auto& [name, value] : table) {
    if (name == text) return value;
    choices += choices.empty() ? "" : ", ";
    choices += name;
  }
  throw Unsupported(fmt::format("unsupported {} '{}' (supported: {})", what, text, choices));
}

constexpr std::array<std::pair<std::string_view, DType>, 3> kDTypes{
    {{"bf16", DType::bf16}, {"fp16", DType::fp16}, {"fp32", DType::fp32}}};
constexpr std::array<std::pair<std::string_view, Arch>, 5> kArchs{{{"sm_80", Arch::sm_80},
                                                                   {"sm_86", Arch::sm_86},
                                                                   {"sm_89", Arch::sm_89},
                                                                   {"sm_90", Arch::sm_90},
                                                                   {"sm_90a", Arch::sm_90a}}};
constexpr std::array<std::pair<std::string_view, Variant>, 6> kVariants{{{"mma_sync", Variant::mma_sync},
                                                                         {"simt", Variant::simt},
                                                                         {"logits", Variant::logits},
                                                                         {"wgmma", Variant::wgmma},
                                                                         {"wgmma_ws", Variant::wgmma_ws},
                                                                         {"wgmma_coop", Variant::wgmma_coop}}};

template <typename E, std::size_t K>
std::string_view name_of(E e, const std::array<std::pair<std::string_view, E>, K>& table) {
  for (const auto& [name, value] : table)
    if (value == e) return name;
  return "?";
}

bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

}  // namespace

std::string_view to_string(DType d) { return name_of(d, kDTypes); }
std::string_view to_string(Arch a) { return name_of(a, kArchs); }
std::string_view to_string(Variant v) { return name_of(v, kVariants); }
DType parse_dtype(std::string_view s) { return parse_enum(s, kDTypes, "dtype"); }
Arch parse_arch(std::string_view s) { return parse_enum(s, kArchs, "arch"); }
Variant parse_variant(std::string_view s) { return parse_enum(s, kVariants, "variant"); }

std::size_t dtype_size(DType d) { return d == DType::fp32 ? 4 : 2; }

Arch arch_for_compute_capability(int major, int minor) {
  // Bounded before the product (429496730.86 wrapped to sm_90 until session 40; 8.10 read as 9.0).
  if (major < 1 || major > 99 || minor < 0 || minor > 9)
    throw Unsupported(fmt::format("compute capability {}.{} is not one (want major 1-99, minor 0-9)", major, minor));
  const int cc = major * 10 + minor;
  if (cc == 90) return Arch::sm_90;
  if (cc == 89) return Arch::sm_89;
  if (cc == 86 || cc == 87) return Arch::sm_86;
  if (cc == 80) return Arch::sm_80;
  if (cc > 90) return Arch::sm_90;  // newer GPUs: the runtime loads the PTX, which the driver JIT-compiles
  throw Unsupported(fmt::format("compute capability {}.{} is not supported (need 8.0 or newer)", major, minor));
}

bool is_wgmma(Variant variant) {
  return variant == Variant::wgmma || variant == Variant::wgmma_ws || variant == Variant::wgmma_coop;
}

bool uses_tma(Variant variant) { return variant == Variant::wgmma_ws || variant == Variant::wgmma_coop; }

Arch target_arch(Variant variant, Arch device_arch) {
  if (is_wgmma(variant) && device_arch == Arch::sm_90) return Arch::sm_90a;
  return device_arch;
}

Arch compile_arch(Variant variant, Arch spec_arch, Arch device_arch) {
  return target_arch(variant, is_wgmma(variant) && spec_arch == Arch::sm_90a ? spec_arch : device_arch);
}

Variant default_variant(DType d) { return d == DType::fp32 ? Variant::simt : Variant::mma_sync; }

std::size_t KernelSpec::shared_bytes() const {
  const std::size_t ldl = std::size_t(tile_v) + 4;
  const std::size_t epilogue = std::size_t(tile_n) * ldl * 4;
  switch (variant) {
    case Variant::mma_sync:  // pipeline stages, then the staged logit tile
      return std::size_t(stages) * (tile_v + tile_n) * tile_d * 2 + epilogue;
    case Variant::simt:
      return std::size_t(stages) * (tile_v + tile_n) * (tile_d + 4) * 4 + epilogue;
    case Variant::logits:  // a ring of staged logit tiles
      return std::size_t(stages) * epilogue;
    case Variant::wgmma:  // stages, the staged logits (64 batch rows per pass), 1 KiB for 1024-byte alignment
      return std::size_t(stages) * (tile_v + tile_n) * tile_d * 2 + std::size_t(fs_wgmma_epilogue_rows(tile_n)) * ldl * 4 + 1024;
    case Variant::wgmma_ws:  // stages, two consumers' staged logits, barriers (full/empty per stage, 2 order), 1 KiB slack
      return std::size_t(stages) * (tile_v + tile_n) * tile_d * 2 + 2 * std::size_t(fs_ws_epilogue_rows(tile_n, tile_v)) * ldl * 4 +
             std::size_t(stages) * 16 + 16 + 1024;
    case Variant::wgmma_coop:  // stages, the whole tile's staged logits (unpadded, swizzled; none when they go
                               // through L2), barriers (full/empty per stage, lfull, lfree), 1 KiB slack
      // (stream-K with staged logits: and the staged tile's index; register epilogue: no staged tile, and
      // each consumer's group words, lead noise, row values, seeds and offsets for its 64-row blocks:
      // epilogue_registers_smem.cuh; ping-pong: whole tiles per consumer, and two order barriers)
      {
        const int consumer_blocks = tile_v / (ping_pong ? 64 : 128);
        return std::size_t(stages) * (tile_v + tile_n) * tile_d * 2 +
               (stage_in_l2 || reg_epilogue ? 0 : std::size_t(tile_n) * tile_v * 4) + std::size_t(stages) * 16 +
               16 + (stream_k && !reg_epilogue ? 16 : 0) +
               (reg_epilogue ? 2 * std::size_t(fs_re_bytes(consumer_blocks, tile_n)) : 0) + (ping_pong ? 16 : 0) + 1024;
      }
  }
  return epilogue;
}

void KernelSpec::validate() const {
  // Enum values out of range (an integer cast, e.g. through a binding) name no kernel: a variant past
  // wgmma_coop passed every check below, rendered fused_mma.cuh and was sized (shared_bytes) as `logits`.
  if (fusedsample::to_string(dtype) == "?") throw Unsupported(fmt::format("unsupported dtype value {}", int(dtype)));
  if (fusedsample::to_string(arch) == "?") throw Unsupported(fmt::format("unsupported arch value {}", int(arch)));
  if (fusedsample::to_string(variant) == "?")
    throw Unsupported(fmt::format("unsupported variant value {}", int(variant)));
  auto bad = [&](const std::string& why) { throw InvalidArgument(fmt::format("invalid kernel spec [{}]: {}", to_string(), why)); };
  if (tile_v < 16 || tile_v > 512 || tile_v % 16 != 0) bad("tile_v must be a multiple of 16 in [16, 512]");
  if (tile_n < 8 || tile_n > 256 || tile_n % 8 != 0) bad("tile_n must be a multiple of 8 in [8, 256]");
  if (cluster != 1 && cluster != 2 && cluster != 4) bad("cluster must be 1, 2 or 4 blocks");
  if (cluster != 1 && variant != Variant::wgmma_coop) bad("clusters (c2, c4) are for wgmma_coop only");
  if (stage_in_l2 && variant != Variant::wgmma_coop) bad("logits staged in L2 (l2) are for wgmma_coop only");
  if (stream_k && variant != Variant::wgmma_coop) bad("stream-K (sk) is for wgmma_coop only");
  if (stream_k && cluster != 1) bad("stream-K (sk) runs without clusters (c1)");
  if (reg_epilogue && variant != Variant::wgmma_coop) bad("the register epilogue (re) is for wgmma_coop only");
  if (reg_epilogue && (!fs_re_tile_n_ok(tile_n) || warps_m != 12 || stage_in_l2))
    bad("the register epilogue (re) needs tile_n a multiple of 8 from 64 to 256 (at most two batch columns per "
        "consumer thread) and w12x1 (no epilogue warps), without l2 (nothing is staged)");
  if (stream_k && ping_pong) bad("stream-K (sk) and ping-pong (pp) do not combine (pp deals whole tiles per consumer)");
  if (eager_release && !uses_tma(variant))
    bad("the eager stage release (er) is for the TMA-fed variants (wgmma_ws, wgmma_coop) only");
  if (l2_promotion != 0 && l2_promotion != 64 && l2_promotion != 128 && l2_promotion != 256)
    bad("the L2 promotion (l2pN) must be 0 (none), 64, 128 or 256 bytes");
  if (l2_promotion != 256 && !uses_tma(variant))
    bad("the L2 promotion (l2pN) is for the TMA-fed variants (wgmma_ws, wgmma_coop) only");
  if (ping_pong && (!reg_epilogue || tile_v != 128 || tile_n != 128))
    bad("ping-pong (pp) needs the register epilogue (re) and tile_v 128, tile_n 128 (each consumer multiplies whole "
        "128 x 128 tiles)");
  // Each factor is bounded before the product is formed (w65536x65536 wrapped to 0 in int and reached a
  // division by zero below).
  if (warps_m < 1 || warps_n < 1 || warps_m > 20 || warps_n > 20 ||
      warps_m * warps_n > (variant == Variant::wgmma_coop ? 20 : 16))
    bad(variant == Variant::wgmma_coop ? "warps_m * warps_n must be in [1, 20]" : "warps_m * warps_n must be in [1, 16]");
  if (stages < 2 || stages > 16) bad("stages must be in [2, 16]");
  if (variant != Variant::logits && (!is_pow2(tile_d) || tile_d < 16 || tile_d > 128))
    bad("tile_d must be 16, 32, 64 or 128");
  const int chunks_per_row = variant == Variant::simt ? tile_d / 4 : tile_d / 8;
  if (variant != Variant::logits && threads() % chunks_per_row != 0)
    bad(fmt::format("threads ({}) must be a multiple of the 16-byte chunks per row of a stage ({})", threads(), chunks_per_row));
  if (variant == Variant::mma_sync && (threads() / chunks_per_row) % 8 != 0)
    bad(fmt::format("threads / chunks per row ({}) must be a multiple of 8 for the swizzled layout", threads() / chunks_per_row));
  switch (variant) {
    case Variant::mma_sync:
      if (dtype == DType::fp32) throw Unsupported("variant mma_sync needs bf16 or fp16 (fp32 uses simt)");
      if ((tile_v / warps_m) % 16 != 0 || tile_v % warps_m != 0) bad("tile_v / warps_m must be a multiple of 16");
      if (tile_n % warps_n != 0 || (tile_n / warps_n) % 8 != 0) bad("tile_n / warps_n must be a multiple of 8");
      if ((tile_v / warps_m / 16) * (tile_n / warps_n / 8) > 64) bad("warp tile too large (> 64 mma tiles)");
      break;
    case Variant::simt:
      if (dtype != DType::fp32) throw Unsupported("variant simt is for fp32 only");
      if (tile_v % 32 != 0) bad("simt: tile_v must be a multiple of 32");
      if (tile_n % (warps_m * warps_n) != 0) bad("simt: tile_n must be a multiple of the warp count");
      if ((tile_v / 32) * (tile_n / (warps_m * warps_n)) > 128) bad("simt: too many accumulators per thread");
      break;
    case Variant::logits:
      // Each warp copies the part of the staged tile its lanes sample (templates/sample_logits.cuh): every
      // batch row of the tile, so 32 / T_N of its lanes per row.
      if (!is_pow2(tile_v))
        bad("logits: tile_v must be a power of two (16 to 512): its threads own whole noise groups of each row "
            "(epilogue_owner.cuh)");
      if (tile_n > 32 || 32 % tile_n != 0)
        bad("logits: tile_n must be 8, 16 or 32 (each warp copies and samples every batch row of a tile, 32 / T_N "
            "lanes per row)");
      // Fewer than 32 threads would sample a tile (T_N rows of T_V / 16 noise groups): warp 0's part would be
      // wider than the staged row and its zero-filling copies would overwrite the next rows and stages
      // (sample_logits.cuh's static_assert COLS <= FS_TV).
      if (tile_v * tile_n < 512)
        bad("logits: tile_v * tile_n must be at least 512 (each warp copies whole rows of 32 / T_N segments of "
            "16 values; tv16 tn8, tv16 tn16 and tv32 tn8 leave warp 0 too few)");
      break;
    case Variant::wgmma:
    case Variant::wgmma_ws:
    case Variant::wgmma_coop: {
      const std::string_view name = fusedsample::to_string(variant);
      if (dtype == DType::fp32) throw Unsupported(fmt::format("variant {} needs bf16 or fp16 (fp32 uses simt)", name));
      if (arch != Arch::sm_90a)
        throw Unsupported(fmt::format("variant {} needs arch sm_90a (Hopper's arch-specific target), not {}", name,
                                      fusedsample::to_string(arch)));
      // 64: one 128-byte swizzled row per stage; 128: two of them (wgmma, wgmma_coop); 32: 64-byte rows (wgmma_coop).
      const bool two_rows = variant != Variant::wgmma_ws, short_rows = variant == Variant::wgmma_coop;
      if (!(tile_d == 64 || (two_rows && tile_d == 128) || (short_rows && tile_d == 32)))
        bad(fmt::format("{}: tile_d must be 64 (one 128-byte swizzled row per stage){}{}", name,
                        two_rows ? (short_rows ? ", 128 (two of them)" : " or 128 (two of them)") : "",
                        short_rows ? " or 32 (64-byte swizzled rows)" : ""));
      if (variant == Variant::wgmma) {
        if (warps_n != 1 || warps_m % 4 != 0)
          bad("wgmma: warps must be whole warpgroups along the vocabulary (w4x1, w8x1, ...)");
        if (tile_v % (16 * warps_m) != 0) bad("wgmma: tile_v must be a multiple of 64 per warpgroup");
        // Its epilogue stages the logits of fs_wgmma_epilogue_rows(tile_n) = 64 batch rows per pass, which
        // must divide the tile (fused_wgmma.cuh's static_assert: tn160 and tn224, from the search space's
        // fitted tiles, passed this check and failed in NVRTC until session 37).
        if (tile_n % fs_wgmma_epilogue_rows(tile_n) != 0)
          bad(fmt::format("wgmma: tile_n above {0} must be a multiple of {0} (the batch rows its epilogue stages "
                          "per pass), not {1}",
                          fs_wgmma_epilogue_rows(tile_n), tile_n));
        const int accs = (tile_v / (16 * warps_m)) * tile_n / 2;
        if (accs > 128) bad("wgmma: more than 128 accumulators per thread");
        // ptxas needs about 30 registers beside the accumulators (measured: 128
        // accumulators in 128 registers, w16x1, cannot be assembled).
        const int regs = std::min(255, (65536 / threads()) & ~7);
        if (accs + 32 > regs)
          bad(fmt::format("wgmma: {} accumulators per thread do not fit the {} registers a thread of {} gets", accs, regs,
                          threads()));
      } else if (variant == Variant::wgmma_ws) {
        if (warps_m != 12 || warps_n != 1) bad("wgmma_ws: warps must be w12x1 (one producer, two consumer warpgroups)");
        if (tile_v != 64 && tile_v != 128) bad("wgmma_ws: tile_v (one consumer's rows) must be 64 or 128");
        if ((tile_v / 64) * tile_n / 2 > 128) bad("wgmma_ws: more than 128 accumulators per thread");
        if (stages < 3) bad("wgmma_ws: stages must be >= 3");
      } else {
        if ((warps_m != 12 && warps_m != 16 && warps_m != 20) || warps_n != 1)
          bad("wgmma_coop: warps must be w12x1 (producer warp and three epilogue warps), w16x1 or w20x1 (producer, "
              "two consumer and one or two epilogue warpgroups)");
        if (tile_v != 128 && tile_v != 256) bad("wgmma_coop: tile_v (both consumers' rows) must be 128 or 256");
        const int accs = (tile_v / 128) * tile_n / 2;
        if (accs > 128) bad("wgmma_coop: more than 128 accumulators per consumer thread");
        if (accs > 64 && warps_m == 20)
          bad("wgmma_coop: more than 64 accumulators per consumer thread need w16x1 or w12x1");
      }
      break;
    }
  }
  // The arch's own limit (until session 48 only Hopper's 227 KiB was checked: an sm_86 spec needing 181 KiB
  // compiled, and could never launch on any sm_86 GPU).
  if (const std::size_t limit = shared_memory_limit(arch); shared_bytes() > limit)
    bad(fmt::format("needs {} bytes of shared memory (> {} KiB on {})", shared_bytes(), limit / 1024,
                    fusedsample::to_string(arch)));
}

KernelSpec binary_spec(const KernelSpec& spec) {
  KernelSpec s = spec;
  s.l2_promotion = 256;
  if (s.variant == Variant::logits) {
    // sample_logits.cuh reads fp32 logits and FS_TV, FS_TN, FS_STAGES and the warps only (stream_weights.cuh
    // none of them): the storage dtype and T_d change no byte of it. Until session 60 each gave its own key (a
    // bf16 and an fp16 Sampler compiled and cached the same cubin twice). Until session 62 the kernel had no
    // stages either (one tile per block, read with scalar loads).
    const KernelSpec defaults;
    s.dtype = DType::fp32;
    s.tile_d = defaults.tile_d;
  }
  return s;
}

std::vector<std::string> split_spec_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto semi = text.find(';');
    std::string_view item = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    const auto first = item.find_first_not_of(' ');
    if (first == std::string_view::npos) continue;
    item = item.substr(first, item.find_last_not_of(' ') - first + 1);
    out.emplace_back(item);
  }
  return out;
}

std::string KernelSpec::to_string() const {
  return fmt::format("{} {} {} tv{} tn{} td{} s{} w{}x{}{}{}{}{}{}{}{}", fusedsample::to_string(dtype),
                     fusedsample::to_string(arch), fusedsample::to_string(variant), tile_v, tile_n, tile_d, stages,
                     warps_m, warps_n, cluster == 1 ? std::string() : fmt::format(" c{}", cluster),
                     stage_in_l2 ? " l2" : "", stream_k ? " sk" : "", reg_epilogue ? " re" : "", ping_pong ? " pp" : "",
                     eager_release ? " er" : "", l2_promotion == 256 ? std::string() : fmt::format(" l2p{}", l2_promotion));
}

KernelSpec KernelSpec::parse(std::string_view text) {
  KernelSpec s;
  std::istringstream in{std::string(text)};
  std::string tok;
  auto num = [&](std::string_view t, std::size_t skip) {
    int v = 0;
    auto [p, ec] = std::from_chars(t.data() + skip, t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size()) throw InvalidArgument(fmt::format("bad number in spec token '{}'", t));
    return v;
  };
  // The field an optional token sets (a field given twice was last-wins until session 48; now an error).
  auto field_of = [](std::string_view t) -> std::string_view {
    if (t.starts_with("l2p")) return "l2p";
    if (t == "l2" || t == "sk" || t == "re" || t == "pp" || t == "er") return t;
    if (t.starts_with("tv") || t.starts_with("tn") || t.starts_with("td")) return t.substr(0, 2);
    return t.substr(0, 1);  // s, c, w
  };
  int fields = 0;
  std::set<std::string, std::less<>> seen;
  while (in >> tok) {
    std::string_view t = tok;
    if (fields >= 3 && !seen.emplace(field_of(t)).second)
      throw InvalidArgument(fmt::format("spec token '{}' in '{}' gives a field a second time", t, text));
    if (fields == 0) s.dtype = parse_dtype(t);
    else if (fields == 1) s.arch = parse_arch(t);
    else if (fields == 2) s.variant = parse_variant(t);
    else if (t == "l2") s.stage_in_l2 = true;
    else if (t.starts_with("l2p")) s.l2_promotion = num(t, 3);
    else if (t == "sk") s.stream_k = true;
    else if (t == "re") s.reg_epilogue = true;
    else if (t == "pp") s.ping_pong = true;
    else if (t == "er") s.eager_release = true;
    else if (t.starts_with("tv")) s.tile_v = num(t, 2);
    else if (t.starts_with("tn")) s.tile_n = num(t, 2);
    else if (t.starts_with("td")) s.tile_d = num(t, 2);
    else if (t.starts_with("s")) s.stages = num(t, 1);
    else if (t.starts_with("c")) s.cluster = num(t, 1);
    else if (t.starts_with("w")) {
      const auto x = t.find('x');
      if (x == std::string_view::npos) throw InvalidArgument(fmt::format("bad warp token '{}' (want wMxN)", t));
      try {  // the message names the whole token, not the half of it that failed ('1x1' of 'w4x1x1')
        s.warps_m = num(t.substr(0, x), 1);
        s.warps_n = num(t.substr(x + 1), 0);
      } catch (const InvalidArgument&) {
        throw InvalidArgument(fmt::format("bad warp token '{}' (want wMxN)", t));
      }
    } else throw InvalidArgument(fmt::format("unknown spec token '{}' in '{}'", t, text));
    ++fields;
  }
  if (fields < 3) throw InvalidArgument(fmt::format("spec '{}' needs at least 'dtype arch variant'", text));
  return s;
}

}  // namespace fusedsample
