// tuning_db.hpp: measured kernel configs per GPU model, problem shape and
// batch bucket, with CLBlast-style fallback (exact GPU model -> same compute
// capability -> built-in heuristic), JSON export/import and persistence to
// <cache dir>/tuning.json.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample {

// Batch buckets: rows 1, 2, 4, ..., 128, then 160, 192, 224, 256 (index
// 0..11). Rows between buckets use the next bucket up.
// Above 128 rows the steps are 32 rows: a batch of 129..255 rows in the next
// power of two's config ran up to 1.9 x the unfused pipeline's time on an
// H200 (a second batch tile, or one of 256 columns, most of them past N;
// BENCHMARKS.md, session 34), so those batches get tiles fitted to them.
// A batch of more than 256 rows is k = ceil(rows / 256) equal parts of
// batch_part_rows(rows) <= 256 rows and uses the bucket of one part: its
// config's batch tiles, fitted to a part, cover the batch with as few rows
// past it (until session 35 a ">256" bucket, untuned on the H200, ran
// N = 257..1024 at 1.5-2.2 x the unfused pipeline's time). Files of older
// versions may still hold ">256" entries: they are skipped when read.
inline constexpr int kNumBatchBuckets = 12;
inline constexpr std::int64_t kMaxBucketRows = 256;
std::int64_t batch_part_rows(std::int64_t rows);  // rows, or ceil(rows / k) for k = ceil(rows / 256) parts; throws for rows < 1
int batch_bucket(std::int64_t rows);              // bucket of batch_part_rows(rows); throws InvalidArgument for rows < 1
int batch_bucket_max(std::int64_t rows);          // the largest bucket of any batch of 1..rows rows
std::string_view batch_bucket_label(int bucket);  // "1", "2", ..., "128", "160", "192", "224", "256"
int parse_batch_bucket(std::string_view label);  // inverse; throws InvalidArgument
// The rows a bucket stands for (and is tuned at): its label.
// Throws InvalidArgument for an index outside [0, kNumBatchBuckets).
std::int64_t bucket_rows(int bucket);

// Sample buckets: samples per row (SampleArgs::num_samples) 1, 2..4 and 5 or
// more (index 0..2; labels "1", "4", "16", the samples each is tuned at).
// Every tile draws S noise values per logit, so the epilogue's share of a
// tile grows with S and the S = 1 winners stop being the fastest: at S = 4
// the S = 1 table's ping-pong spec ran the small shape's N = 128 at up to
// 1.11 x the unfused pipeline's time, where the same kernel without
// ping-pong took 0.79 x; at S = 16 other forced specs ran 7-17 % faster than
// the S = 1 winners at N = 1 and 16 (H200, BENCHMARKS.md session 36). Much
// of the ping-pong figure was the register epilogue waiting for every block
// once per sample, fixed in session 38 (BENCHMARKS.md session 38; since session
// 47 no block waits for the others' leads at all).
inline constexpr int kNumSampleBuckets = 3;
int sample_bucket(int samples);                  // throws InvalidArgument for samples < 1
std::string_view sample_bucket_label(int bucket);  // "1", "4", "16"
int parse_sample_bucket(std::string_view label);  // inverse; throws InvalidArgument
int bucket_samples(int bucket);                   // the samples a bucket is tuned at: its label

// A GPU model: what the driver reports. Two GPUs with the same name and SM
// count are the same model.
struct DeviceIdentity {
  std::string name;  // e.g. "NVIDIA H200"
  int multiprocessors = 0;
  int cc_major = 0, cc_minor = 0;
  bool operator==(const DeviceIdentity&) const = default;
};

// How a config was timed (autotune/tuner.cpp):
//   flushed      alone, L2 flushed before each repetition, idle between them
//                (the tuner's screening of every candidate);
//   interleaved  back to back with the bucket's other finalists, no flush, no
//                gaps (the tuner's finalist round: the benchmark's conditions,
//                the GPU's clock under the power limit set by this very work).
// Times of different methods are not comparable (on an H200 a flushed time was
// up to 20 % below an interleaved one), so an entry ranks its configs by
// method first, interleaved before flushed, then by median.
enum class TimingMethod { flushed, interleaved };
std::string_view to_string(TimingMethod);
TimingMethod parse_timing_method(std::string_view text);  // throws InvalidArgument

// One timed config.
struct Measurement {
  std::string spec;        // KernelSpec::to_string()
  double median_us = 0;    // median of the timed runs
  double floor_us = 0;     // fastest run (or the roofline floor the tuner reports)
  std::string timestamp;   // ISO 8601 UTC, e.g. "2026-11-21T10:00:00Z"
  TimingMethod method = TimingMethod::flushed;
};

// Whether `a` ranks before `b` in one entry: an interleaved time before a
// flushed one, then the smaller median, then (equal times) the smaller spec
// text, as BucketResult::best() breaks ties.
bool ranks_before(const Measurement& a, const Measurement& b);

struct TuningKey {
  DeviceIdentity device;
  DType dtype = DType::bf16;
  std::int64_t vocab = 0;    // V
  std::int64_t d_model = 0;  // d
  int bucket = 0;            // batch_bucket()
  int samples_bucket = 0;    // sample_bucket(): 0 for one sample per row
  bool operator==(const TuningKey&) const = default;
};

// Every config measured for one key, not just the winner.
struct TuningEntry {
  TuningKey key;
  std::vector<Measurement> configs;
  // The config that ranks first (ranks_before); nullptr if none.
  const Measurement* best() const;
};

// Where the process measured (recorded in exports).
struct TuningEnvironment {
  std::string gpu_name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  int sm_clock_khz = 0, memory_clock_khz = 0;
  std::string driver_version, cuda_version, nvrtc_version, generator_version;
};

// Where a tuned config came from, in lookup order: this GPU model and shape;
// this GPU model, the tuned shape closest in V*d (the timings of one model
// carry over between shapes better than between models: for seven untuned
// shapes on an H200 the H100's configs ran 5.9 % slower on average at N <= 64
// than the H200's closest shape's, BENCHMARKS.md session 33); any GPU of the same compute capability, the same shape first, then the
// closest; default_spec().
// At each level a dtype's own entries come first, then its twin's
// (tuning_twin), before the next level. The levels are searched with the
// entries of the samples' own sample bucket, then again with each smaller
// sample bucket's, down to one sample per row: a model's S = 1 table stands
// in where S was not tuned.
enum class MatchLevel { exact_device, nearest_shape, same_arch, builtin_default };
std::string_view to_string(MatchLevel);

// The dtype whose tuned configs stand in for `dtype` where it has none:
// fp16 <-> bf16 (same element size, same tensor-core instruction shapes and
// peak rate; their kernels differ only in the MMA's operand type; on the H200
// an fp16 head on the bf16 table's kernels ran within 1.05 x the floor at
// N <= 64 and 2-10 % slower than bf16 at N = 128/256, as cuBLAS's fp16 GEMM
// did against its bf16 one), none for fp32. Without it an fp16 head took default_spec() wherever only bf16
// was tuned, the built-in H100/H200 tables included (BENCHMARKS.md session 36).
std::optional<DType> tuning_twin(DType dtype);

struct TunedSpec {
  KernelSpec spec;  // of the dtype asked for
  MatchLevel level = MatchLevel::builtin_default;
  DType tuned_as = DType::bf16;  // the entries' dtype: the one asked for, or its twin
  int samples_bucket = 0;        // the entries' sample bucket: the samples', or a smaller one (builtin_default: 0)
};

class TuningDb {
 public:
  const std::vector<TuningEntry>& entries() const { return entries_; }
  TuningEnvironment environment;
  bool empty() const { return entries_.empty(); }

  // Adds one measurement; keeps the faster (smaller median) per (key, spec, method).
  // Constant time on average (hashed indexes), so imports grow linearly.
  void record(const TuningKey& key, const Measurement& m);
  // Merges every measurement of `other` with record(). Keeps this environment
  // unless it is empty.
  void merge(const TuningDb& other);
  const TuningEntry* find(const TuningKey& key) const;

  // The best stored spec for this device and shape, else for this device and
  // the closest V*d, else for any device of the same compute capability (same
  // V and d preferred, then the closest V*d); nullopt if none. At each level
  // entries of `dtype` first, then of its twin (tuning_twin), whose spec
  // takes `dtype`. The levels are searched with sample_bucket(samples)'s
  // entries first, then with each smaller sample bucket's. The spec's arch is
  // set to `arch`; specs that do not validate for it are skipped.
  std::optional<TunedSpec> lookup(const DeviceIdentity& device, DType dtype, std::int64_t vocab,
                                  std::int64_t d_model, std::int64_t rows, Arch arch, int samples = 1) const;
  // One level and sample_bucket(samples)'s entries only: exact_device,
  // nearest_shape or same_arch (builtin_default: nullopt).
  std::optional<TunedSpec> lookup_at(MatchLevel level, const DeviceIdentity& device, DType dtype, std::int64_t vocab,
                                     std::int64_t d_model, std::int64_t rows, Arch arch, int samples = 1) const;

 private:
  std::vector<TuningEntry> entries_;
  // Where each key's entry is in entries_, and each (key, spec, method)'s
  // measurement in its entry's configs (keys: tuning_db.cpp's index_key).
  std::unordered_map<std::string, std::size_t> entry_at_;
  std::unordered_map<std::string, std::size_t> config_at_;
};

// The built-in table (measured winners, see autotune/builtin_tuning.cpp).
const TuningDb& builtin_tuning_db();

// JSON (schema "fusedsample-tuning", version 1). from_json throws FileError
// naming `source` and the JSON path of the first bad field. With
// `invalid_specs` (a database read for use: the cache dir's, the built-in
// tables), a config whose spec this build parses but does not accept
// (KernelSpec::validate: e.g. a spec an older build tuned that now needs more
// shared memory than a block has) is kept instead, as lookup() skips it, and
// a message naming it appended to *invalid_specs.
std::string tuning_db_to_json(const TuningDb& db);
TuningDb tuning_db_from_json(std::string_view text, std::string_view source = "<json>",
                             std::vector<std::string>* invalid_specs = nullptr);
// Reads a file (FileError if missing/unreadable/invalid) / writes atomically
// (FileError on failure).
TuningDb import_tuning_file(const std::filesystem::path& path);
void export_tuning_file(const TuningDb& db, const std::filesystem::path& path);

// <cache dir>/tuning.json from the environment (nullopt if the cache is off).
std::optional<std::filesystem::path> tuning_db_path();
// The persisted database: empty (with one warning) if the file is corrupt
// or cannot be read, empty if absent; configs whose specs this build does
// not accept are kept, unused (with one warning listing them). Never throws.
TuningDb load_tuning_db(const std::filesystem::path& path);
// Merges `db` into the file at `path` (atomic write). A file there that
// cannot be read is renamed to <path>.unreadable-<UTC time> first (with a
// warning), not overwritten. Returns false with a warning if the directory
// is not writable or such a file cannot be moved.
bool save_tuning_db(const TuningDb& db, const std::filesystem::path& path);

// What the sampler should run for `rows` rows of `samples` samples each:
// the user database (tuning.json in the cache dir, re-read when it changes)
// and the built-in table, level by level (MatchLevel: exact device and
// shape, this device's closest shape, same arch), the user's entry first
// where both answer for the same shape; the levels with the samples' own
// sample bucket first, then each smaller one; then default_spec().
TunedSpec tuned_spec(const DeviceIdentity& device, DType dtype, std::int64_t vocab, std::int64_t d_model,
                     std::int64_t rows, Arch arch, int samples = 1);
// The same with an explicit user database (tests, tools).
TunedSpec tuned_spec(const TuningDb& user, const DeviceIdentity& device, DType dtype, std::int64_t vocab,
                     std::int64_t d_model, std::int64_t rows, Arch arch, int samples = 1);

}  // namespace fusedsample
