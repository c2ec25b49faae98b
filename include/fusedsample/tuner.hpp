// tuner.hpp: the autotuner. For one LM-head shape (V, d, dtype) and a list of
// batch buckets it enumerates candidate kernel configs (search_space), compiles
// them all in parallel into the on-disk module cache, checks each on
// exact-arithmetic inputs against the bucket's default config, times the
// survivors on the GPU with CUDA events (L2 flushed between repetitions), then
// re-times each bucket's fastest few back to back in one interleaved sequence
// (the finalist round: the benchmark's conditions), and records every timed
// config in the tuning database (<cache dir>/tuning.json), each time with its
// method (tuning_db.hpp: TimingMethod).
// docs/architecture.md ("Autotuning") describes the method.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fusedsample {

// ---------------------------------------------------------------------------
// Search space (autotune/search_space.cpp)
// ---------------------------------------------------------------------------

struct SearchSpaceOptions {
  // Specs needing more dynamic shared memory are pruned; 0: shared_memory_limit(arch).
  std::size_t max_shared_bytes = 0;
  // At most this many specs per bucket (>= 1), default_spec included.
  int max_candidates = 24;
  // The config that runs now for these rows (the tuner passes tuned_spec():
  // user database, built-in table or default): always a candidate, right
  // after the default, so a re-tune measures what it would replace even when
  // the cost model ranks it out. Skipped if it does not validate for the arch
  // or fit max_shared_bytes.
  std::optional<KernelSpec> incumbent;
  // Specs the caller asks to measure as well (fusedsample tune --also), e.g.
  // options the grid does not search (clusters): candidates right after the
  // incumbent, in this order, each where it validates for the arch, fits
  // max_shared_bytes and the rows' tile_n bounds (min_tile_n..max_tile_n).
  // They count toward max_candidates.
  std::vector<KernelSpec> extra;
  // The launch's vocabulary rows and the GPU's multiprocessors (0: unknown).
  // With both, the grid also offers the stream-K twin (`sk`) of each register
  // epilogue spec (`re`, not `pp`) whose tiles, ceil(vocab / T_V) x
  // ceil(rows / T_N) on one block per multiprocessor, leave its last wave at
  // most 80 % full: there stream-K deals the last waves' k-steps evenly
  // (session 28: large shape, N = 256, 7.59 waves, 3-4 % faster), and where
  // the waves are whole it only costs (~1-2 %). Twins of the default L2
  // promotion only; a twin is a family of its own in the cap.
  std::int64_t vocab = 0;
  int multiprocessors = 0;
  // Samples per row the bucket is tuned for (its sample bucket's count). With
  // more than one, ping-pong (`re pp`) is left out, the incumbent too: at
  // S = 4 its time moved by up to 1.5 x from run to run and with the inputs
  // (session 38, one H200: 303 us in a tune, 310-473 us in benches of one
  // set of inputs, 0.80-1.16 x the unfused pipeline, where `tv256 tn128 ...
  // re` stayed at 318-324 us; sessions 36-37 saw the same). The cause, a wait
  // for every block's leads per sample (BENCHMARKS.md session 38; no wait at all
  // since session 47), is fixed since;
  // after it, in three processes each (session 39, 200 calls back to back),
  // `pp` took 340-352 us against `re`'s 334-340 at S = 4 (fp16: 415-424
  // against 401-410), its calls' range 1.4-7.6 x re's, though it still won 13
  // of 108 of the tuner's interleaved rounds. An explicit extra still runs.
  int samples = 1;
};

// Whether `spec` (a register-epilogue spec) leaves the last of its waves of
// tiles at most 80 % full: more tiles than blocks (one per multiprocessor),
// and the last wave's tiles, T mod B, in 1 .. 0.8 B. search_space() offers the
// `sk` twin of such specs.
bool last_wave_underfull(const KernelSpec& spec, std::int64_t vocab, std::int64_t rows, int multiprocessors);

// The batch tile bounds the search keeps for `rows` rows:
//   max: max(8, 2 * rows) (capped at 256) -- a tile much taller than the batch
//        only multiplies zero rows;
//   min: max(8, min(rows, 256) / 8) -- W is streamed once per batch tile, so a
//        large batch in tiny tiles re-reads W up to 8 times and no more.
int min_tile_n(std::int64_t rows);
int max_tile_n(std::int64_t rows);

// The heuristic cost (lower is better, in units of "one pass over W") used to
// rank candidates before the cap. See search_space.cpp for the model.
double estimated_cost(const KernelSpec& spec, std::int64_t rows, std::size_t max_shared_bytes);

// Candidate specs for (dtype, arch, rows): a grid over tile_v {32..256},
// tile_n {8..256}, tile_d {32, 64, 128}, stages {2..6}, warps {1,2,4,8}x{1,2,4}
// and every variant but `logits`, pruned by KernelSpec::validate(), the shared
// memory limit and the tile_n bounds, ranked by estimated_cost() and capped.
// On sm_90 a variant that only validates for sm_90a is offered as sm_90a.
// default_spec(dtype, arch, rows) always comes first, then the incumbent if
// given, then the extra specs that fit. Throws InvalidArgument for rows < 1
// or max_candidates < 1.
std::vector<KernelSpec> search_space(DType dtype, Arch arch, std::int64_t rows, const SearchSpaceOptions& options = {});

// ---------------------------------------------------------------------------
// Batch lists (autotune/batch_list.cpp)
// ---------------------------------------------------------------------------

// (The rows a bucket is tuned at: bucket_rows, tuning_db.hpp.)
// "1-256" -> every bucket that serves a batch size in the range
// (batch_bucket: past 256 rows the bucket of a part); "1,8,64" -> those
// buckets; a plain "N" -> batch_bucket(N). Sorted, without duplicates.
// Throws InvalidArgument naming the bad part.
std::vector<int> parse_batch_list(std::string_view text);

// ---------------------------------------------------------------------------
// The tuner (autotune/tuner.cpp; result types in autotune/tune_report.cpp)
// ---------------------------------------------------------------------------

struct TuneOptions {
  std::int64_t vocab = 0;   // V
  std::int64_t hidden = 0;  // d
  DType dtype = DType::bf16;
  std::vector<int> buckets;  // batch_bucket() indices
  // sample_bucket() index: every call is timed with bucket_samples() samples
  // per row, and recorded under this sample bucket.
  int samples_bucket = 0;
  int device = -1;           // CUDA ordinal; -1: current context's device (or 0)
  int reps = 15;             // timed repetitions per config (median)
  int warmup = 3;            // untimed calls before them
  // Wall-clock budget of the whole run (compilation included), in seconds;
  // <= 0: none. Once spent, no new candidate is timed; every bucket's default
  // config is timed first, so each bucket still gets a result.
  double budget_s = 600;
  int max_candidates = 24;   // per bucket (SearchSpaceOptions::max_candidates)
  std::vector<KernelSpec> extra_candidates;  // per bucket where they fit (SearchSpaceOptions::extra)
  // The finalist round: each bucket's `finalists` fastest screened configs
  // (>= 2 of them timed; 0 or 1: no round) are called back to back in a
  // balanced order (autotune/call_order.hpp), at least `reps` calls each
  // after `warmup` calls each, no L2 flush; their medians are recorded as
  // interleaved measurements, which outrank the screening's flushed ones.
  int finalists = 4;
  bool save = true;          // merge the measurements into tuning_db_path()
  // One line per event (compile progress, each candidate checked/timed).
  std::function<void(const std::string& line)> progress;
};

enum class CandidateStatus {
  timed,          // checked and timed: recorded
  mismatch,       // its samples differ from the default config's: rejected
  failed,         // did not compile, load or launch: rejected
  over_budget,    // never timed: the budget ran out
};
std::string_view to_string(CandidateStatus);

struct CandidateResult {
  KernelSpec spec;
  CandidateStatus status = CandidateStatus::over_budget;
  double median_us = 0;  // timed only (screening: flushed)
  int reps = 0;          // repetitions behind the median
  double final_us = 0;   // finalists only: median of the interleaved round
  int final_calls = 0;   // its calls of this config
  std::string detail;    // why it was rejected
};

struct BucketResult {
  int bucket = 0;
  std::int64_t rows = 0;
  KernelSpec default_spec;
  std::vector<CandidateResult> candidates;  // default first, then by rank
  // The finalist with the smallest final_us, else (no finalist round) the
  // fastest timed; nullptr if none.
  const CandidateResult* best() const;
  const CandidateResult* baseline() const;  // the default's result if timed
  int count(CandidateStatus s) const;
};

struct TuneReport {
  DeviceIdentity device;
  Arch arch = Arch::sm_90;
  double floor_us = 0;  // the stream-weights kernel reading W once
  std::vector<BucketResult> buckets;
  int compiled = 0;          // distinct candidates compiled (or loaded from the disk cache)
  int compile_failures = 0;
  int spilling = 0;          // compiled, but fs_fused_kernel spills registers (or ptxas serialized its wgmma): not candidates
  double compile_s = 0, total_s = 0;
  bool budget_exhausted = false;
  TuningDb db;                                 // what was recorded
  std::optional<std::filesystem::path> saved;  // where it was merged, if saved
};

// Runs the tuner. Throws InvalidArgument for bad options (before touching the
// driver), NoGpu without a GPU, CudaError if the context breaks (after saving
// what was measured).
TuneReport tune(const TuneOptions& options);

}  // namespace fusedsample
