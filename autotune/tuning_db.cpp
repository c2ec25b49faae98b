// tuning_db.cpp: the in-memory tuning database: batch buckets, recording
// and merging measurements, and the lookup: this GPU model and shape -> this
// GPU model, the closest tuned shape -> the same compute capability -> default
// (at each level the dtype's own entries, then its twin's; the levels with the
// samples' own sample bucket, then each smaller one).
#include "fusedsample/tuning_db.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "fusedsample/errors.hpp"

namespace fusedsample {

namespace {

// Each bucket's rows (its label; it is tuned at them).
constexpr std::int64_t kBucketRows[kNumBatchBuckets] = {1, 2, 4, 8, 16, 32, 64, 128, 160, 192, 224, 256};
constexpr std::string_view kBucketLabels[kNumBatchBuckets] = {"1",  "2",   "4",   "8",   "16",  "32",
                                                              "64", "128", "160", "192", "224", "256"};
// Each sample bucket's samples (its label; it is tuned at them). Samples
// between two buckets use the next one up; past the last, the last.
constexpr int kBucketSamples[kNumSampleBuckets] = {1, 4, 16};
constexpr std::string_view kSampleBucketLabels[kNumSampleBuckets] = {"1", "4", "16"};

}  // namespace

std::int64_t batch_part_rows(std::int64_t rows) {
  if (rows < 1) throw InvalidArgument(fmt::format("batch rows must be >= 1 (got {})", rows));
  // Rounded up without forming rows + divisor - 1, which overflows near
  // INT64_MAX (it made batch_bucket(INT64_MAX) bucket 0 until session 40).
  const std::int64_t parts = rows / kMaxBucketRows + (rows % kMaxBucketRows != 0);
  return rows / parts + (rows % parts != 0);
}

int batch_bucket(std::int64_t rows) {
  const std::int64_t part = batch_part_rows(rows);
  return int(std::lower_bound(kBucketRows, kBucketRows + kNumBatchBuckets, part) - kBucketRows);
}

int batch_bucket_max(std::int64_t rows) {
  // Up to 256 rows the bucket grows with the rows; 256 itself is the last.
  return rows >= kMaxBucketRows ? kNumBatchBuckets - 1 : batch_bucket(rows);
}

std::string_view batch_bucket_label(int bucket) {
  if (bucket < 0 || bucket >= kNumBatchBuckets) throw InvalidArgument(fmt::format("no batch bucket {}", bucket));
  return kBucketLabels[bucket];
}

std::int64_t bucket_rows(int bucket) {
  if (bucket < 0 || bucket >= kNumBatchBuckets) throw InvalidArgument(fmt::format("no batch bucket {}", bucket));
  return kBucketRows[bucket];
}

int parse_batch_bucket(std::string_view label) {
  for (int b = 0; b < kNumBatchBuckets; ++b)
    if (kBucketLabels[b] == label) return b;
  throw InvalidArgument(
      fmt::format("unknown batch bucket '{}' (want 1, 2, 4, ..., 128, 160, 192, 224 or 256)", label));
}

int sample_bucket(int samples) {
  if (samples < 1) throw InvalidArgument(fmt::format("samples per row must be >= 1 (got {})", samples));
  for (int b = 0; b < kNumSampleBuckets - 1; ++b)
    if (samples <= kBucketSamples[b]) return b;
  return kNumSampleBuckets - 1;
}

std::string_view sample_bucket_label(int bucket) {
  if (bucket < 0 || bucket >= kNumSampleBuckets) throw InvalidArgument(fmt::format("no sample bucket {}", bucket));
  return kSampleBucketLabels[bucket];
}

int bucket_samples(int bucket) {
  if (bucket < 0 || bucket >= kNumSampleBuckets) throw InvalidArgument(fmt::format("no sample bucket {}", bucket));
  return kBucketSamples[bucket];
}

int parse_sample_bucket(std::string_view label) {
  for (int b = 0; b < kNumSampleBuckets; ++b)
    if (kSampleBucketLabels[b] == label) return b;
  throw InvalidArgument(fmt::format("unknown sample bucket '{}' (want 1, 4 or 16)", label));
}

std::optional<DType> tuning_twin(DType dtype) {
  switch (dtype) {
    case DType::bf16: return DType::fp16;
    case DType::fp16: return DType::bf16;
    case DType::fp32: return std::nullopt;
  }
  return std::nullopt;
}

std::string_view to_string(MatchLevel level) {
  switch (level) {
    case MatchLevel::exact_device: return "exact_device";
    case MatchLevel::nearest_shape: return "nearest_shape";
    case MatchLevel::same_arch: return "same_arch";
    case MatchLevel::builtin_default: return "builtin_default";
  }
  return "?";
}

std::string_view to_string(TimingMethod m) {
  switch (m) {
    case TimingMethod::flushed: return "flushed";
    case TimingMethod::interleaved: return "interleaved";
  }
  return "?";
}

TimingMethod parse_timing_method(std::string_view text) {
  for (TimingMethod m : {TimingMethod::flushed, TimingMethod::interleaved})
    if (to_string(m) == text) return m;
  throw InvalidArgument(fmt::format("unknown timing method '{}' (want flushed or interleaved)", text));
}

bool ranks_before(const Measurement& a, const Measurement& b) {
  if (a.method != b.method) return a.method == TimingMethod::interleaved;
  if (a.median_us != b.median_us) return a.median_us < b.median_us;
  // Equal times (event timings of short kernels tie often): the spec text
  // decides, as BucketResult::best() does, so the table and the tuner's
  // report name the same winner (they could differ by record order).
  return a.spec < b.spec;
}

const Measurement* TuningEntry::best() const {
  const Measurement* best = nullptr;
  for (const auto& m : configs)
    if (!best || ranks_before(m, *best)) best = &m;
  return best;
}

namespace {

// One string per key for the hashed indexes. The GPU name and the spec come
// from files and may hold any byte, so each is prefixed by its length: two
// keys give the same string only if every field is equal.
std::string index_key(const TuningKey& k) {
  return fmt::format("{}:{}|{}|{}.{}|{}|{}|{}|{}|{}", k.device.name.size(), k.device.name, k.device.multiprocessors,
                     k.device.cc_major, k.device.cc_minor, to_string(k.dtype), k.vocab, k.d_model, k.bucket,
                     k.samples_bucket);
}

std::string index_key(const std::string& entry_key, const Measurement& m) {
  return fmt::format("{}|{}:{}|{}", entry_key, m.spec.size(), m.spec, to_string(m.method));
}

}  // namespace

const TuningEntry* TuningDb::find(const TuningKey& key) const {
  const auto it = entry_at_.find(index_key(key));
  return it == entry_at_.end() ? nullptr : &entries_[it->second];
}

void TuningDb::record(const TuningKey& key, const Measurement& m) {
  const std::string ek = index_key(key);
  const auto [e, new_entry] = entry_at_.try_emplace(ek, entries_.size());
  if (new_entry) entries_.push_back(TuningEntry{key, {}});
  std::vector<Measurement>& configs = entries_[e->second].configs;
  const auto [c, new_config] = config_at_.try_emplace(index_key(ek, m), configs.size());
  if (new_config)
    configs.push_back(m);
  else if (m.median_us < configs[c->second].median_us)
    configs[c->second] = m;
}

void TuningDb::merge(const TuningDb& other) {
  for (const auto& e : other.entries_)
    for (const auto& m : e.configs) record(e.key, m);
  if (environment.gpu_name.empty() && environment.generator_version.empty()) environment = other.environment;
}

namespace {

// The fastest config of `e` that parses and validates for `arch`, as a
// kernel of `dtype` (e's own, or its twin's: tuning_twin).
std::optional<KernelSpec> best_valid(const TuningEntry& e, Arch arch, DType dtype) {
  std::vector<const Measurement*> order;
  for (const auto& m : e.configs) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(), [](const Measurement* a, const Measurement* b) { return ranks_before(*a, *b); });
  for (const Measurement* m : order) {
    try {
      KernelSpec s = KernelSpec::parse(m->spec);
      s.arch = target_arch(s.variant, arch);
      // Only fused kernels sample from W and H; a `logits` spec samples given logits and would read W as
      // such (check_spec rejects one on import; a database built in memory may still hold it).
      if (s.dtype != e.key.dtype || s.variant == Variant::logits) continue;
      s.dtype = dtype;
      s.validate();
      return s;
    } catch (const Error&) {
      continue;
    }
  }
  return std::nullopt;
}

// What one lookup asks for: the key's fields (the dtype is the one asked
// for; the entries searched may be its twin's) and the arch to build for.
struct Want {
  const DeviceIdentity& device;
  DType dtype;
  std::int64_t vocab, d_model;
  int bucket, samples_bucket;
  Arch arch;
};

// Whether entry key k, of dtype `tuned`, may answer at `level` (nearest_shape
// or same_arch).
bool admits(MatchLevel level, const TuningKey& k, const Want& w, DType tuned) {
  if (k.dtype != tuned || k.bucket != w.bucket || k.samples_bucket != w.samples_bucket) return false;
  if (level == MatchLevel::nearest_shape) return k.device == w.device;
  return level == MatchLevel::same_arch && k.device.cc_major == w.device.cc_major &&
         k.device.cc_minor == w.device.cc_minor;
}

// The entries of `dbs` (in order) that may answer at `level`, the same V and
// d first, then the closest problem size |log(V*d / V'*d')|; ties keep the
// order of `dbs` and of their entries.
std::vector<const TuningEntry*> shape_candidates(std::initializer_list<const TuningDb*> dbs, MatchLevel level,
                                                 const Want& w, DType tuned) {
  const auto log_size = [](std::int64_t v, std::int64_t d) {
    return std::log(double(std::max<std::int64_t>(v, 1)) * double(std::max<std::int64_t>(d, 1)));
  };
  const double want = log_size(w.vocab, w.d_model);
  std::vector<std::pair<double, const TuningEntry*>> found;
  for (const TuningDb* db : dbs)
    for (const auto& e : db->entries()) {
      const auto& k = e.key;
      if (!admits(level, k, w, tuned)) continue;
      const bool same_shape = k.vocab == w.vocab && k.d_model == w.d_model;
      found.emplace_back(same_shape ? -1.0 : std::fabs(log_size(k.vocab, k.d_model) - want), &e);
    }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const TuningEntry*> out;
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

// The first of `dbs`' answers at `level` from entries tuned with `tuned`,
// as a kernel of w.dtype.
std::optional<TunedSpec> lookup_tuned_as(std::initializer_list<const TuningDb*> dbs, MatchLevel level, const Want& w,
                                         DType tuned) {
  auto answer = [&](const TuningEntry& e) -> std::optional<TunedSpec> {
    if (auto s = best_valid(e, w.arch, w.dtype)) return TunedSpec{*s, level, tuned, w.samples_bucket};
    return std::nullopt;
  };
  if (level == MatchLevel::exact_device) {
    for (const TuningDb* db : dbs)
      if (const TuningEntry* e = db->find(TuningKey{w.device, tuned, w.vocab, w.d_model, w.bucket, w.samples_bucket}))
        if (auto s = answer(*e)) return s;
    return std::nullopt;
  }
  if (level != MatchLevel::nearest_shape && level != MatchLevel::same_arch) return std::nullopt;
  for (const TuningEntry* e : shape_candidates(dbs, level, w, tuned))
    if (auto s = answer(*e)) return s;
  return std::nullopt;
}

// The first of `dbs`' answers at `level`: entries of w.dtype, then of its
// twin (tuning_twin), so that an fp16 head on a GPU whose tables hold only
// bf16 runs the tuned kernels, not default_spec().
std::optional<TunedSpec> lookup_in(std::initializer_list<const TuningDb*> dbs, MatchLevel level, const Want& w) {
  if (auto s = lookup_tuned_as(dbs, level, w, w.dtype)) return s;
  if (const auto twin = tuning_twin(w.dtype)) return lookup_tuned_as(dbs, level, w, *twin);
  return std::nullopt;
}

constexpr MatchLevel kLookupOrder[] = {MatchLevel::exact_device, MatchLevel::nearest_shape, MatchLevel::same_arch};

// Every level with the samples' own sample bucket, then with each smaller one.
std::optional<TunedSpec> lookup_all(std::initializer_list<const TuningDb*> dbs, const DeviceIdentity& device,
                                    DType dtype, std::int64_t vocab, std::int64_t d_model, std::int64_t rows,
                                    Arch arch, int samples) {
  const int bucket = batch_bucket(rows);
  for (int sb = sample_bucket(samples); sb >= 0; --sb)
    for (MatchLevel level : kLookupOrder)
      if (auto s = lookup_in(dbs, level, Want{device, dtype, vocab, d_model, bucket, sb, arch})) return s;
  return std::nullopt;
}

}  // namespace

std::optional<TunedSpec> TuningDb::lookup_at(MatchLevel level, const DeviceIdentity& device, DType dtype,
                                             std::int64_t vocab, std::int64_t d_model, std::int64_t rows,
                                             Arch arch, int samples) const {
  return lookup_in({this}, level,
                   Want{device, dtype, vocab, d_model, batch_bucket(rows), sample_bucket(samples), arch});
}

std::optional<TunedSpec> TuningDb::lookup(const DeviceIdentity& device, DType dtype, std::int64_t vocab,
                                          std::int64_t d_model, std::int64_t rows, Arch arch, int samples) const {
  return lookup_all({this}, device, dtype, vocab, d_model, rows, arch, samples);
}

TunedSpec tuned_spec(const TuningDb& user, const DeviceIdentity& device, DType dtype, std::int64_t vocab,
                     std::int64_t d_model, std::int64_t rows, Arch arch, int samples) {
  // At each level the user's database and the built-in table are searched
  // together: the user's entry first for the same shape, else the closer shape.
  if (auto s = lookup_all({&user, &builtin_tuning_db()}, device, dtype, vocab, d_model, rows, arch, samples)) return *s;
  return TunedSpec{default_spec(dtype, arch, rows), MatchLevel::builtin_default, dtype, 0};
}

}  // namespace fusedsample
