// search_space.cpp: the candidate kernel configs the tuner times for one
// (dtype, arch, batch rows).
//
// 1. Grid: tile_v {32, 64, 128, 256} x tile_n {8, ..., 256; rows fitted to a
//    multiple of 8 between 128 and 256} x tile_d {32, 64,
//    128} x stages {2..6} x warps {1,2,4,8,12,16,20} x {1,2,4} x every variant except
//    `logits` (enumerated from the Variant enum, so new variants join on their
//    own).
// 2. Pruning: KernelSpec::validate() (its exceptions mean "not a kernel we can
//    build"), dynamic shared memory <= the opt-in limit, and tile_n within
//    [min_tile_n(rows), max_tile_n(rows)] (tuner.hpp). wgmma_coop also with
//    its epilogue options re and re pp (kEpilogueOptions); the TMA-fed
//    variants also without L2 promotion (kL2Promotions). Each spec's arch is
//    target_arch(variant, arch), as the Sampler compiles it (wgmma: sm_90a).
// 3. Ranking by estimated_cost(), a two-term roofline (below), then a cap:
//    default_spec() first, then the best-ranked specs, at most two per
//    (variant, tile_v, tile_n, tile_d) family in a first pass so the cap is
//    not spent on pipeline depths of one tile shape (re specs, their sk
//    twins, and each L2 promotion, are a family of their own), then the rest
//    by rank.
//    Several samples per row (SearchSpaceOptions::samples > 1): no pp, not
//    even as the incumbent (tuner.hpp says why).
// 4. With the launch's vocabulary and the GPU's multiprocessors known
//    (SearchSpaceOptions::vocab, multiprocessors), each re spec (not pp) whose
//    last wave of tiles is at most 80 % full also has its stream-K twin (sk;
//    of the default L2 promotion only), at the same estimated cost (the model
//    has no waves).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuner.hpp"

namespace fusedsample {
namespace {

constexpr int kTileV[] = {32, 64, 128, 256};
constexpr int kTileN[] = {8, 16, 32, 64, 128, 256};
// The batch tiles tried for `rows`: kTileN, and between 128 and 256 rows also
// the tile fitted to them (rounded up to 8, as fit_batch_tile fits the
// Sampler's: a multiple of 32 until session 65): a 256-column tile or two
// 128-column ones would spend MMAs on rows past N (the buckets 160, 192 and
// 224, tuning_db.hpp).
std::vector<int> tile_ns(std::int64_t rows) {
  std::vector<int> out(std::begin(kTileN), std::end(kTileN));
  if (rows > 128 && rows < 256) out.push_back(int((rows + 7) / 8 * 8));
  return out;
}
constexpr int kTileD[] = {32, 64, 128};
constexpr int kStages[] = {2, 3, 4, 5, 6};
constexpr int kWarpsM[] = {1, 2, 4, 8, 12, 16, 20};  // 12: wgmma_ws; 16, 20: wgmma_coop (+ epilogue warpgroups)
constexpr int kWarpsN[] = {1, 2, 4};
// wgmma_coop's epilogue options (reg_epilogue, ping_pong): staged logits and
// epilogue warps; the consumers sampling their accumulators ("re"); and "re
// pp". validate() keeps them to the tiles they exist for (w12x1; the search
// offers re only with T_N >= 128, below which it exists for the Sampler's
// fitted tiles).
// Clusters and l2 are spec options the tuner does not search (measured
// slower than the tables, sessions 9-15); stream-K only as the twin of an re
// spec whose last wave is underfull (last_wave_underfull); the eager stage
// release (er) only as the twin of a bandwidth-bound cooperative spec (T_N <=
// 64, staged epilogue, l2p0; on the H200 0.2-0.8 % faster at N = 16-64 in
// most rounds, at most 0.3 % slower in the others, session 58).
constexpr std::pair<bool, bool> kEpilogueOptions[] = {{false, false}, {true, false}, {true, true}};
// The TMA-fed variants' L2 promotion (KernelSpec::l2_promotion): the default
// 256 bytes, and none (0), which streamed W 4-8 % faster on the H200 at N <= 64
// (session 27). Not in the cost model (it does not change the kernel): each
// promotion is a family of its own in the cap's first pass.
constexpr int kL2Promotions[] = {256, 0};

// W bytes in flight per SM that keep DRAM busy: bandwidth x loaded latency /
// SMs, about 4.8 TB/s x 1.3 us / 132 on an H200 (A100: 2 TB/s x 2 us / 108).
constexpr double kInflightTarget = 48.0 * 1024;
// Sustained math per byte of DRAM bandwidth (flop/byte): tensor cores through
// mma.sync on A100/H100-class parts, and the fp32 FMA pipes for simt.
constexpr double kTensorBalance = 150;
constexpr double kSimtBalance = 10;
// A re-read of W that hits L2, relative to a DRAM pass (L2 has ~3x DRAM's bandwidth).
constexpr double kL2Reread = 0.3;

// Every Variant value that names itself and round-trips through the parser.
std::vector<Variant> fused_variants() {
  std::vector<Variant> out;
  for (int i = 0; i < 32; ++i) {
    const auto v = static_cast<Variant>(i);
    const std::string_view name = to_string(v);
    if (name == "?" || v == Variant::logits) continue;
    try {
      if (parse_variant(name) == v) out.push_back(v);
    } catch (const Error&) {
    }
  }
  return out;
}

// `s` compiled for what a device of `arch` runs it as (target_arch: sm_90a
// for wgmma on sm_90), or nullopt if it cannot be built there.
std::optional<KernelSpec> buildable(KernelSpec s, Arch arch) {
  try {
    s.arch = target_arch(s.variant, arch);
    s.validate();
    return s;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

int max_tile_n(std::int64_t rows) { return int(std::clamp<std::int64_t>(2 * rows, 8, 256)); }

int min_tile_n(std::int64_t rows) { return int(std::max<std::int64_t>(8, std::min<std::int64_t>(rows, 256) / 8)); }

// Cost in units of "one pass over W at full DRAM bandwidth":
//   memory  = traffic / (mlp x segment x stage), where
//     traffic = 1 + kL2Reread x (passes - 1): every batch tile (passes =
//               ceil(rows / tile_n)) reads all of W, but the batch tiles of one
//               W tile run side by side, so only the first read comes from DRAM
//               and the others mostly from L2;
//     mlp     = min(1, F / kInflightTarget), F = W bytes in flight per SM =
//               resident blocks per SM x (stages - 1) x tile_v x tile_d x
//               element size, resident blocks limited by shared memory and
//               threads; times 1 + 0.05 x (1 - min(1, F / (2 x target))): some
//               slack beyond the target absorbs latency jitter;
//     segment = 1 - 0.05 s (s + 1) / 2 with s = log2(256 B / (tile_d x element
//               size)) >= 0: short row segments per stage use DRAM lines and
//               cp.async worse (256 B: 1, 128 B: 0.95, 64 B: 0.85, 32 B: 0.7);
//     stage   = B / (B + 1 KiB), B = W bytes per stage: the fixed cost of a
//               pipeline step (wait + barrier) per byte moved;
//   compute = (2 x padded rows / element size) flop per W byte / balance,
//             divided by the warp-tile efficiency m / (m + 256) (m = outputs
//             per warp: small warp tiles reload more fragments) and by
//             min(1, resident warps per SM / 8) (too few warps to issue);
//   cost    = max(memory, compute) + 0.1 x min(...) (imperfect overlap)
//             + 0.02 x shared bytes / limit (at equal cost, leave headroom)
//             + wgmma_coop only: 0.04 / epilogue warps (3 for w12x1, 4 for
//               w16x1, 8 for w20x1): the same MMAs, with the Gumbel epilogue
//               of a tile spread over more warps (w20x1 measured fastest at
//               N = 128-256 on both GPUs, sessions 6-13; without this term the
//               three tied and the spec string's order dropped w20x1); with
//               "re" (the consumers sample their accumulators) as w20x1's:
//               measured as fast or faster at N = 128-256 (session 18).
double estimated_cost(const KernelSpec& spec, std::int64_t rows, std::size_t max_shared_bytes) {
  // wgmma_ws: its two consumers' tiles are in flight at once, with 8 MMA
  // warps between them: costed as one tile of 2 x tile_v rows and 8 warps;
  // wgmma_coop: one tile of tile_v rows and 8 MMA warps.
  KernelSpec s = spec;
  if (spec.variant == Variant::wgmma_ws) {
    s.tile_v = 2 * spec.tile_v;
    s.warps_m = 8;
  } else if (spec.variant == Variant::wgmma_coop) {
    s.warps_m = 8;
  }
  const double esize = double(dtype_size(s.dtype));
  const std::int64_t passes = (std::max<std::int64_t>(rows, 1) + s.tile_n - 1) / s.tile_n;
  const double padded = double(passes * s.tile_n);
  const double smem = double(spec.shared_bytes());
  const double limit = double(max_shared_bytes ? max_shared_bytes : shared_memory_limit(s.arch));
  const int by_smem = int((limit + 1024) / (smem + 1024));
  const int by_threads = 2048 / s.threads();
  const int per_sm = std::max(1, std::min({by_smem, by_threads, 32}));

  const double traffic = 1.0 + kL2Reread * double(passes - 1);
  const double stage_bytes = double(s.tile_v) * s.tile_d * esize;
  const double inflight = double(per_sm) * double(s.stages - 1) * stage_bytes;
  const double mlp = std::min(1.0, inflight / kInflightTarget) /
                     (1.0 + 0.05 * (1.0 - std::min(1.0, inflight / (2.0 * kInflightTarget))));
  const double steps = std::max(0.0, std::log2(256.0 / (s.tile_d * esize)));
  const double segment = std::max(0.3, 1.0 - 0.05 * steps * (steps + 1.0) / 2.0);
  const double stage = stage_bytes / (stage_bytes + 1024.0);
  const double memory = traffic / (mlp * segment * stage);

  const double balance = s.dtype == DType::fp32 ? kSimtBalance : kTensorBalance;
  const double m = double(s.tile_v / s.warps_m) * double(s.tile_n / s.warps_n);
  const double warps = std::min(1.0, double(per_sm * s.warps_m * s.warps_n) / 8.0);
  const double compute = (2.0 * padded / esize) / balance / (m / (m + 256.0)) / warps;
  double epilogue = 0;
  if (spec.variant == Variant::wgmma_coop)
    epilogue = spec.reg_epilogue ? 0.04 / 8.0 : 0.04 / (spec.warps_m == 12 ? 3.0 : spec.warps_m == 16 ? 4.0 : 8.0);
  return std::max(memory, compute) + 0.1 * std::min(memory, compute) + 0.02 * smem / limit + epilogue;
}

namespace {

// Whether the search may take `spec` on its own (the grid, the incumbent):
// not ping-pong above one sample per row (tuner.hpp, SearchSpaceOptions::
// samples). The caller's extra specs are taken regardless.
bool searched(const KernelSpec& spec, const SearchSpaceOptions& options) {
  return !(spec.ping_pong && options.samples > 1);
}

}  // namespace

bool last_wave_underfull(const KernelSpec& spec, std::int64_t vocab, std::int64_t rows, int multiprocessors) {
  if (vocab < 1 || rows < 1 || multiprocessors < 1) return false;
  const std::int64_t tiles = (vocab + spec.tile_v - 1) / spec.tile_v * ((rows + spec.tile_n - 1) / spec.tile_n);
  const std::int64_t last = tiles % multiprocessors;
  return tiles > multiprocessors && last != 0 && 5 * last <= 4 * std::int64_t(multiprocessors);
}

std::vector<KernelSpec> search_space(DType dtype, Arch arch, std::int64_t rows, const SearchSpaceOptions& options) {
  if (rows < 1) throw InvalidArgument(fmt::format("search_space: rows must be >= 1, got {}", rows));
  if (options.samples < 1)
    throw InvalidArgument(fmt::format("search_space: samples must be >= 1, got {}", options.samples));
  if (options.max_candidates < 1)
    throw InvalidArgument(fmt::format("search_space: max_candidates must be >= 1, got {}", options.max_candidates));
  const std::size_t limit = options.max_shared_bytes ? options.max_shared_bytes : shared_memory_limit(arch);
  const KernelSpec baseline = default_spec(dtype, arch, rows);
  const int lo = min_tile_n(rows), hi = max_tile_n(rows);

  const std::vector<int> tns = tile_ns(rows);
  std::vector<std::pair<double, KernelSpec>> ranked;
  std::set<std::string> seen{baseline.to_string()};
  for (Variant variant : fused_variants())
    for (int tv : kTileV)
      for (int tn : tns) {
        if (tn < lo || tn > hi) continue;
        for (int td : kTileD)
          for (int st : kStages)
            for (int wm : kWarpsM)
              for (int wn : kWarpsN) {
                for (const auto& [re, pp] : kEpilogueOptions)
                  for (int promotion : kL2Promotions) {
                    if (re && variant != Variant::wgmma_coop) continue;
                    // re below 128 rows only as the Sampler's fit of a bucket-128 winner (fit_batch_tile), not as a
                    // candidate: tn64 re read 1.047-1.086 x the floor at N = 56/64 against 1.030-1.037 for the
                    // tables' staged er specs (H200, session 66).
                    if (re && tn < 128) continue;
                    if (promotion != 256 && !uses_tma(variant)) continue;
                    const KernelSpec s{.tile_v = tv, .tile_n = tn, .tile_d = td, .stages = st, .warps_m = wm,
                                       .warps_n = wn, .reg_epilogue = re, .ping_pong = pp, .l2_promotion = promotion,
                                       .dtype = dtype, .variant = variant};
                    if (!searched(s, options)) continue;
                    const auto ok = buildable(s, arch);
                    if (!ok || ok->shared_bytes() > limit || !seen.insert(ok->to_string()).second) continue;
                    const double cost = estimated_cost(*ok, rows, limit);
                    ranked.emplace_back(cost, *ok);
                    // (Twins of the default promotion only: l2p0 is neutral at N >= 128, session 27.)
                    if (re && !pp && promotion == 256 &&
                        last_wave_underfull(*ok, options.vocab, rows, options.multiprocessors)) {
                      KernelSpec twin = *ok;
                      twin.stream_k = true;
                      const auto sk = buildable(twin, arch);
                      if (sk && sk->shared_bytes() <= limit && seen.insert(sk->to_string()).second)
                        ranked.emplace_back(cost, *sk);
                    }
                    // The eager stage release's twin (er) of the bandwidth-bound cooperative tiles (T_N <= 64,
                    // staged epilogue) without L2 promotion, the promotion those batches run best with.
                    if (ok->variant == Variant::wgmma_coop && !re && tn <= 64 && promotion == 0) {
                      KernelSpec twin = *ok;
                      twin.eager_release = true;
                      const auto er = buildable(twin, arch);
                      if (er && seen.insert(er->to_string()).second) ranked.emplace_back(cost, *er);
                    }
                  }
              }
      }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second.to_string() < b.second.to_string();
  });

  std::vector<KernelSpec> out{baseline};
  const auto want = std::size_t(options.max_candidates);
  // A requested spec (the incumbent, then each extra) goes right after the
  // default, and leaves the ranking, where it builds for the arch, has the
  // dtype, fits shared memory (extras also the rows' tile_n bounds) and is
  // not a candidate already.
  auto take = [&](const KernelSpec& requested, bool within_tile_bounds) {
    if (out.size() >= want) return;
    const auto s = buildable(requested, arch);
    if (!s || s->dtype != dtype || s->shared_bytes() > limit) return;
    if (within_tile_bounds && (s->tile_n < lo || s->tile_n > hi)) return;
    const std::string text = s->to_string();
    if (std::any_of(out.begin(), out.end(), [&](const KernelSpec& o) { return o.to_string() == text; })) return;
    out.push_back(*s);
    const auto it = std::find_if(ranked.begin(), ranked.end(), [&](const auto& r) { return r.second.to_string() == text; });
    if (it != ranked.end()) ranked.erase(it);
  };
  if (options.incumbent && searched(*options.incumbent, options)) take(*options.incumbent, false);
  for (const KernelSpec& requested : options.extra) take(requested, true);
  // A family: the variant and its epilogue and schedule options (re, sk, er), the tile, the L2 promotion.
  using Family = std::tuple<Variant, bool, bool, bool, int, int, int, int>;
  std::map<Family, int> per_family;
  std::vector<bool> taken(ranked.size(), false);
  for (std::size_t i = 0; i < ranked.size() && out.size() < want; ++i) {
    const KernelSpec& s = ranked[i].second;
    int& n = per_family[Family{s.variant, s.reg_epilogue, s.stream_k, s.eager_release, s.tile_v, s.tile_n, s.tile_d,
                               s.l2_promotion}];
    if (n >= 2) continue;
    ++n;
    taken[i] = true;
    out.push_back(s);
  }
  for (std::size_t i = 0; i < ranked.size() && out.size() < want; ++i)
    if (!taken[i]) out.push_back(ranked[i].second);
  return out;
}

}  // namespace fusedsample
