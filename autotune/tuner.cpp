// tuner.cpp: the autotuner's run (tuner.hpp). Steps:
//   1. candidates per bucket (search_space), limited by this GPU's shared memory;
//   2. every distinct candidate compiled in parallel into the on-disk module
//      cache, and those that spill or whose wgmma ptxas serialized set aside
//      (candidate_screen);
//   3. on the GPU, one candidate at a time: a Sampler forced to the spec runs
//      on exact-arithmetic inputs (tune_buffers, tuner_inputs) and must reproduce the
//      bucket's default config's samples bit for bit; then it is timed on
//      random inputs (kernel_timer: warm-up, L2 flushed by a read before each of R
//      event-timed repetitions, median). Each bucket's default goes first,
//      then the others by rank, round-robin over the buckets, until the
//      budget is spent. The floor (W streamed once) is timed once;
//   4. the finalist round: per bucket, the fastest `finalists` configs of
//      step 3 called back to back in a balanced order (call_order.hpp), no
//      flush, no gaps: the conditions the benchmark and a server run them in,
//      where the clock under the power limit follows the work itself (times
//      of step 3 were up to 20 % below these on an H200, and ranked configs
//      differently: BENCHMARKS.md, session 12);
//   5. every timed config is recorded and merged into tuning.json, with its
//      timing method (step 3 flushed, step 4 interleaved; the latter rank first).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "autotune/call_order.hpp"
#include "autotune/candidate_screen.hpp"
#include "autotune/kernel_timer.hpp"
#include "autotune/tune_buffers.hpp"
#include "fusedsample/compiler.hpp"
#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/sampler.hpp"
#include "fusedsample/tuner.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "runtime/loaded_module.hpp"

namespace fusedsample {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMinReps = 3;

void check_options(const TuneOptions& o) {
  auto bad = [](const std::string& why) { throw InvalidArgument("tune: " + why); };
  if (o.vocab < 1 || o.vocab > 0x7fffffff - 1024) bad(fmt::format("vocab must be in [1, 2^31 - 1025], got {}", o.vocab));
  if (o.hidden < 8 || o.hidden % 8 != 0 || o.hidden > (std::int64_t(1) << 24))
    bad(fmt::format("hidden must be a positive multiple of 8 up to 2^24, got {}", o.hidden));
  if (o.buckets.empty()) bad("no batch buckets to tune");
  for (int b : o.buckets)
    if (b < 0 || b >= kNumBatchBuckets) bad(fmt::format("no batch bucket {}", b));
  if (o.samples_bucket < 0 || o.samples_bucket >= kNumSampleBuckets)
    bad(fmt::format("no sample bucket {}", o.samples_bucket));
  if (o.reps < 1) bad(fmt::format("reps must be >= 1, got {}", o.reps));
  if (o.warmup < 0) bad(fmt::format("warmup must be >= 0, got {}", o.warmup));
  if (o.max_candidates < 1) bad(fmt::format("max_candidates must be >= 1, got {}", o.max_candidates));
  if (o.finalists < 0) bad(fmt::format("finalists must be >= 0, got {}", o.finalists));
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct Reference {
  std::optional<std::vector<std::int64_t>> samples;
  KernelSpec spec;
};

class Run {
 public:
  explicit Run(const TuneOptions& o) : o_(o), t0_(Clock::now()), ctx_(o.device) {}
  ~Run() {
    if (stream_)
      if (const auto* cu = driver::try_api(nullptr)) cu->cuStreamDestroy(stream_);
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  TuneReport go() {
    describe_device();
    enumerate();
    compile();
    prepare_gpu();
    time_floor();
    for (const auto& [b, i] : timing_order()) run_candidate(r_.buckets[b], i, refs_[b]);
    for (auto& b : r_.buckets) finalist_round(b);
    save();
    r_.total_s = elapsed();
    return std::move(r_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool over_budget() const { return o_.budget_s > 0 && elapsed() > o_.budget_s; }
  void emit(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }

  // The samples per row every timed call draws.
  int samples() const { return bucket_samples(o_.samples_bucket); }
  TuningKey key(const BucketResult& b) const {
    return TuningKey{r_.device, o_.dtype, o_.vocab, o_.hidden, b.bucket, o_.samples_bucket};
  }

  // A Sampler of the tuned shape forced to `spec`.
  SamplerOptions forced(const KernelSpec& spec) const {
    SamplerOptions so;
    so.vocab = o_.vocab;
    so.hidden = o_.hidden;
    so.dtype = o_.dtype;
    so.device = o_.device;
    so.spec = spec;
    return so;
  }

  void describe_device() {
    r_.device = DeviceIdentity{ctx_.name(), ctx_.multiprocessors(), ctx_.cc_major(), ctx_.cc_minor()};
    r_.arch = ctx_.arch();
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      FS_CU(cuDeviceGetAttribute(&v, a, ctx_.device()));
      return v;
    };
    l2_bytes_ = std::size_t(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    TuningEnvironment& env = r_.db.environment;
    env.gpu_name = ctx_.name();
    env.cc_major = ctx_.cc_major();
    env.cc_minor = ctx_.cc_minor();
    env.multiprocessors = ctx_.multiprocessors();
    env.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    env.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    env.driver_version = driver_version();
    env.cuda_version = fmt::format("{}.{}", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
    env.nvrtc_version = nvrtc_version();
    env.generator_version = generator_version();
    timestamp_ = utc_now();
    emit(fmt::format("device: {} ({} SMs, compute capability {}.{}, {}), L2 {} MiB, shared memory opt-in {} KiB",
                     ctx_.name(), ctx_.multiprocessors(), ctx_.cc_major(), ctx_.cc_minor(), to_string(ctx_.arch()),
                     l2_bytes_ >> 20, ctx_.max_shared_optin() / 1024));
  }

  void enumerate() {
    SearchSpaceOptions so;
    so.max_shared_bytes = std::size_t(ctx_.max_shared_optin());
    so.max_candidates = o_.max_candidates;
    so.extra = o_.extra_candidates;
    so.vocab = o_.vocab;
    so.multiprocessors = ctx_.multiprocessors();
    so.samples = samples();
    for (int b : o_.buckets) {
      BucketResult br;
      br.bucket = b;
      br.rows = bucket_rows(b);
      br.default_spec = default_spec(o_.dtype, ctx_.arch(), br.rows);
      // What runs now for these rows: a re-tune measures what it would replace.
      so.incumbent = tuned_spec(r_.device, o_.dtype, o_.vocab, o_.hidden, br.rows, ctx_.arch(), samples()).spec;
      for (const KernelSpec& s : search_space(o_.dtype, ctx_.arch(), br.rows, so)) {
        CandidateResult c;
        c.spec = s;
        br.candidates.push_back(std::move(c));
      }
      max_rows_ = std::max(max_rows_, br.rows);
      r_.buckets.push_back(std::move(br));
    }
    refs_.resize(r_.buckets.size());
  }

  void compile() {
    autotune::ScreenedCandidates c = autotune::compile_and_screen(
        r_.buckets, [&](const std::string& line) { emit(line); }, [&] { return elapsed(); });
    r_.compiled = c.compiled;
    r_.compile_failures = c.compile_failures;
    r_.spilling = c.spilling;
    r_.compile_s = c.seconds;
    compile_errors_ = std::move(c.rejected);
    compiled_ = std::move(c.distinct);
  }

  void prepare_gpu() {
    const auto t = Clock::now();
    FS_CU(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    bufs_ = autotune::TuneBuffers(o_.dtype, o_.vocab, o_.hidden, max_rows_, samples());
    emit(fmt::format("inputs: W [{} x {}] and H [{} x {}] {}, exact and random copies on the GPU ({:.1f} s)",
                     o_.vocab, o_.hidden, max_rows_, o_.hidden, to_string(o_.dtype),
                     std::chrono::duration<double>(Clock::now() - t).count()));
  }

  void time_floor() {
    for (const KernelSpec& s : compiled_) {
      if (compile_errors_.count(s.to_string())) continue;
      try {
        // This module's streaming kernel also flushes L2 between repetitions
        // (by reading; kernel_timer.hpp), for the floor and every candidate.
        reader_module_ = std::make_unique<runtime::LoadedModule>(ctx_, compile_kernel(s));
        timer_ = std::make_unique<autotune::FlushedTimer>(stream_, l2_bytes_, reader_module_->stream(),
                                                          ctx_.multiprocessors());
        const runtime::DeviceMemory& w = bufs_.random_weights();
        r_.floor_us = autotune::stream_floor_us(reader_module_->stream(), w.get(), w.size(),
                                                ctx_.multiprocessors(), *timer_, o_.reps);
        emit(fmt::format("floor: {:.1f} us to stream W once ({:.0f} GB/s)", r_.floor_us,
                         double(w.size()) / (r_.floor_us * 1e-6) / 1e9));
        return;
      } catch (const CudaError& e) {
        if (e.sticky()) throw;  // the context is unusable: stop, blame no later candidate
      } catch (const Error&) {
      }
    }
    emit("floor: not measured (no candidate module loads on this GPU)");
  }

  // (bucket, candidate) pairs: every default first, then round-robin by rank.
  std::vector<std::pair<std::size_t, std::size_t>> timing_order() const {
    std::vector<std::pair<std::size_t, std::size_t>> order;
    std::size_t most = 0;
    for (const auto& b : r_.buckets) most = std::max(most, b.candidates.size());
    for (std::size_t i = 0; i < most; ++i)
      for (std::size_t b = 0; b < r_.buckets.size(); ++b)
        if (i < r_.buckets[b].candidates.size()) order.emplace_back(b, i);
    return order;
  }

  void run_candidate(BucketResult& b, std::size_t i, Reference& ref) {
    CandidateResult& c = b.candidates[i];
    const std::string tag = fmt::format("[bucket {}] {}/{} {}", batch_bucket_label(b.bucket), i + 1,
                                        b.candidates.size(), c.spec.to_string());
    auto reject = [&](CandidateStatus status, std::string detail) {
      c.status = status;
      c.detail = std::move(detail);
      emit(fmt::format("{}: {} ({})", tag, status == CandidateStatus::mismatch ? "rejected" : "failed", c.detail));
    };
    if (i > 0 && over_budget()) {
      if (!r_.budget_exhausted)
        emit(fmt::format("budget of {:g} s spent ({:.1f} s): no further candidates are timed", o_.budget_s, elapsed()));
      r_.budget_exhausted = true;
      return;  // stays over_budget
    }
    if (const auto it = compile_errors_.find(c.spec.to_string()); it != compile_errors_.end())
      return reject(CandidateStatus::failed, "compile: " + it->second);
    try {
      Sampler sampler(forced(c.spec));
      const auto got = bufs_.check(sampler, b.rows, stream_);
      const auto bad_index = std::count_if(got.begin(), got.end(), [&](std::int64_t v) { return v < 0 || v >= o_.vocab; });
      if (bad_index > 0)
        return reject(CandidateStatus::mismatch, fmt::format("{} of {} samples are not vocabulary indices", bad_index, got.size()));
      if (!ref.samples) {
        ref.samples = got;
        ref.spec = c.spec;
        if (i > 0) emit(fmt::format("{}: is the reference for the exactness check (the default did not run)", tag));
      } else if (got != *ref.samples) {
        std::size_t diff = 0;
        for (std::size_t k = 0; k < got.size(); ++k) diff += got[k] != (*ref.samples)[k];
        return reject(CandidateStatus::mismatch,
                      fmt::format("{} of {} samples differ from [{}]'s on exact inputs", diff, got.size(),
                                  ref.spec.to_string()));
      }
      const SampleArgs a = bufs_.timing_args(b.rows, samples());
      if (!timer_) return reject(CandidateStatus::failed, "not timed: no module loaded for the L2 flush's streaming kernel");
      const auto us = timer_->time_us([&] { sampler.sample(a, reinterpret_cast<Stream>(stream_)); }, o_.warmup,
                                      o_.reps, kMinReps, [&] { return over_budget(); });
      c.median_us = autotune::median(us);
      c.reps = int(us.size());
      c.status = CandidateStatus::timed;
      r_.db.record(key(b),
                   Measurement{c.spec.to_string(), c.median_us, r_.floor_us, timestamp_});
      const CandidateResult* base = b.baseline();
      emit(fmt::format("{}: {:.1f} us{}{}", tag, c.median_us,
                       r_.floor_us > 0 ? fmt::format(" ({:.2f}x floor)", c.median_us / r_.floor_us) : "",
                       base && i > 0 ? fmt::format(", gain {:.3f} over the default", base->median_us / c.median_us) : ""));
    } catch (const CudaError& e) {
      if (!e.sticky()) return reject(CandidateStatus::failed, autotune::first_line(e.what()));
      save();
      throw CudaError(e.code(), e.name(),
                      fmt::format("{} (running [{}]; {} measured configs were saved)",
                                  e.what(), c.spec.to_string(), recorded()));
    } catch (const Error& e) {
      return reject(CandidateStatus::failed, autotune::first_line(e.what()));
    }
  }

  // Step 4 (file comment): the bucket's fastest screened configs, called
  // back to back in a balanced order; each one's median is recorded as an
  // interleaved measurement.
  void finalist_round(BucketResult& b) {
    std::vector<CandidateResult*> fin;
    for (auto& c : b.candidates)
      if (c.status == CandidateStatus::timed) fin.push_back(&c);
    std::stable_sort(fin.begin(), fin.end(),
                     [](const CandidateResult* x, const CandidateResult* y) { return x->median_us < y->median_us; });
    if (fin.size() > std::size_t(o_.finalists)) fin.resize(std::size_t(o_.finalists));
    if (fin.size() < 2) return;
    const std::string tag = fmt::format("[bucket {}] finalists", batch_bucket_label(b.bucket));
    if (over_budget()) {
      emit(fmt::format("{}: not re-timed (budget spent)", tag));
      return;
    }
    try {
      std::vector<std::unique_ptr<Sampler>> samplers;
      for (const CandidateResult* c : fin) samplers.push_back(std::make_unique<Sampler>(forced(c->spec)));
      const SampleArgs a = bufs_.timing_args(b.rows, samples());
      std::vector<std::function<void()>> calls;
      for (auto& s : samplers) calls.push_back([&, p = s.get()] { p->sample(a, reinterpret_cast<Stream>(stream_)); });
      const auto timed = autotune::time_in_order_us(calls, autotune::balanced_call_order(calls.size(), o_.reps),
                                                    stream_, o_.warmup);
      std::vector<std::vector<double>> us(fin.size());
      for (const auto& t : timed) us[t.line].push_back(t.us);
      std::string line = fmt::format("{} ({} interleaved, no flush):", tag, fin.size());
      for (std::size_t k = 0; k < fin.size(); ++k) {
        CandidateResult& c = *fin[k];
        c.final_us = autotune::median(us[k]);
        c.final_calls = int(us[k].size());
        Measurement m{c.spec.to_string(), c.final_us, r_.floor_us, timestamp_, TimingMethod::interleaved};
        r_.db.record(key(b), m);
        line += fmt::format(" [{}] {:.1f} us ({:.1f} screened);", m.spec, c.final_us, c.median_us);
      }
      emit(line);
    } catch (const CudaError& e) {
      if (!e.sticky()) return emit(fmt::format("{}: not re-timed: {}", tag, autotune::first_line(e.what())));
      save();
      throw CudaError(e.code(), e.name(),
                      fmt::format("{} (finalist round of bucket {}; {} measured configs were saved)",
                                  e.what(), batch_bucket_label(b.bucket), recorded()));
    } catch (const Error& e) {
      emit(fmt::format("{}: not re-timed: {}", tag, autotune::first_line(e.what())));
    }
  }

  std::size_t recorded() const {
    std::size_t n = 0;
    for (const auto& e : r_.db.entries()) n += e.configs.size();
    return n;
  }

  void save() {
    if (!o_.save || r_.db.empty() || r_.saved) return;
    const auto path = tuning_db_path();
    if (!path) {
      emit("results not saved: the cache is disabled (FUSEDSAMPLE_CACHE_DISABLE) or has no location");
      return;
    }
    if (save_tuning_db(r_.db, *path)) {
      r_.saved = *path;
      emit(fmt::format("saved {} measured configs to {}", recorded(), path->string()));
    }
  }

  const TuneOptions& o_;
  Clock::time_point t0_;
  runtime::Context ctx_;
  TuneReport r_;
  std::vector<Reference> refs_;
  std::vector<KernelSpec> compiled_;
  std::map<std::string, std::string> compile_errors_;
  std::int64_t max_rows_ = 1;
  std::size_t l2_bytes_ = 0;
  std::string timestamp_;
  CUstream stream_ = nullptr;
  autotune::TuneBuffers bufs_;
  std::unique_ptr<runtime::LoadedModule> reader_module_;  // declared before timer_: outlives its use there
  std::unique_ptr<autotune::FlushedTimer> timer_;
};

}  // namespace

TuneReport tune(const TuneOptions& options) {
  check_options(options);
  driver::api();  // NoGpu, with the reason, before anything else
  Run run(options);
  return run.go();
}

}  // namespace fusedsample
