// cmd_tune.cpp: `fusedsample tune` -- search kernel configs for one LM-head
// shape on this GPU (autotune/tuner.cpp) and record them in the tuning
// database. Live progress on stderr, a closing table on stdout.
#include <fmt/format.h>

#include <cstdio>

#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuner.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands.hpp"
#include "tools/spec_args.hpp"

namespace fusedsample::cli {
namespace {

void print_table(const TuneOptions& o, const TuneReport& r) {
  fmt::print("\nfusedsample tune: {} ({} SMs, {}), {} V={} d={}, {} sample(s) per row; floor {:.1f} us (W streamed "
             "once)\n\n",
             r.device.name, r.device.multiprocessors, to_string(r.arch), to_string(o.dtype), o.vocab, o.hidden,
             bucket_samples(o.samples_bucket), r.floor_us);
  // The best config is the finalist round's (interleaved) winner; the other
  // times are the screening's (flushed), the only ones every config has.
  fmt::print("| batch | best config | finalist µs (interleaved) | screened µs (flushed) | × floor | default µs | gain vs "
             "default | timed | rejected | failed | not timed |\n");
  fmt::print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const BucketResult& b : r.buckets) {
    const CandidateResult* best = b.best();
    const CandidateResult* base = b.baseline();
    auto num = [](double v, const char* f) { return v > 0 ? fmt::format(fmt::runtime(f), v) : std::string("-"); };
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", batch_bucket_label(b.bucket),
               best ? best->spec.to_string() : "(none timed)", num(best ? best->final_us : 0, "{:.1f}"),
               num(best ? best->median_us : 0, "{:.1f}"),
               num(best && r.floor_us > 0 ? best->median_us / r.floor_us : 0, "{:.3f}"),
               num(base ? base->median_us : 0, "{:.1f}"),
               num(best && base ? base->median_us / best->median_us : 0, "{:.3f}"), b.count(CandidateStatus::timed),
               b.count(CandidateStatus::mismatch), b.count(CandidateStatus::failed),
               b.count(CandidateStatus::over_budget));
  }
  fmt::print("\ncompiled {} distinct candidates ({} failed, {} spill registers or serialize wgmma: not timed) in "
             "{:.1f} s; total wall time {:.1f} s{}\n",
             r.compiled, r.compile_failures, r.spilling, r.compile_s, r.total_s,
             o.budget_s > 0 ? fmt::format(" (budget {:g} s{})", o.budget_s, r.budget_exhausted ? ", spent" : "")
                            : std::string());
  int mismatches = 0;
  for (const BucketResult& b : r.buckets) mismatches += b.count(CandidateStatus::mismatch);
  if (mismatches > 0)
    fmt::print("{} candidate(s) gave other samples than the default config on exact inputs and were not recorded "
               "(see the progress lines)\n",
               mismatches);
  if (r.saved)
    fmt::print("results merged into {}\n", r.saved->string());
  else
    fmt::print("results not saved{}\n", o.save ? " (see the progress lines)" : " (--no-save)");
}

}  // namespace

int cmd_tune(const std::vector<std::string>& argv) {
  ArgParser parser(
      "fusedsample tune [--vocab V --hidden D --dtype T --batches LIST --samples S --budget S --reps R "
      "--max-candidates K --finalists F --also SPECS]",
      "Searches kernel configs for one LM-head shape on this GPU: enumerates candidates\n"
      "per batch bucket, compiles them all in parallel (into the module cache), checks\n"
      "each on exact-arithmetic inputs against the bucket's default config (bit for bit),\n"
      "times the survivors with CUDA events (L2 flushed between repetitions, median),\n"
      "re-times each bucket's fastest F back to back in one interleaved sequence (no\n"
      "flush: the conditions a server runs them in; this round picks the winner) and\n"
      "merges every timed config into tuning.json in the cache directory, where the\n"
      "Sampler finds it. Needs a GPU.");
  parser.option("vocab", "V", "vocabulary size", "151936")
      .option("hidden", "D", "hidden size, a multiple of 8", "4096")
      .option("dtype", "T", "storage type of W and H: bf16, fp16, fp32", "bf16")
      .option("batches", "LIST",
              "batch buckets (1, 2, 4, ..., 128, 160, 192, 224, 256): a range \"1-256\" (every bucket in it) or a "
              "list \"1,8,64\"; "
              "a size between buckets means the next one up; above 256 rows, the bucket of k = ceil(N / 256) equal parts",
              "1-256")
      .option("samples", "S",
              "samples per row (SampleArgs::num_samples) of the sample bucket to tune: 1, 4 (2..4) or 16 (5 or "
              "more); a count between buckets means the next one up, past 16 the last; timed at the bucket's count; "
              "above 1, ping-pong (re pp) is not searched",
              "1")
      .option("budget", "SECONDS", "wall-clock budget, compilation included; once spent no new candidate is "
              "timed (each bucket's default is timed first); 0 = none", "600")
      .option("reps", "R", "timed repetitions per config (median)", "15")
      .option("warmup", "N", "untimed calls before them", "3")
      .option("max-candidates", "K", "candidates per bucket, the default config included", "24")
      .option("finalists", "F", "configs per bucket re-timed interleaved (at least --reps calls each); 0 or 1: "
              "no finalist round, the fastest screened config wins", "4")
      .option("also", "SPECS", "more candidates, \"spec;spec\" (KernelSpec text, e.g. options the grid does not "
              "search such as clusters): measured in every bucket whose batch tile bounds they fit, within "
              "--max-candidates", "none")
      .option("device", "N", "CUDA device ordinal", "the current context's, or 0")
      .flag("no-save", "do not write the results to tuning.json")
      .epilog(
          "example: fusedsample tune --vocab 151936 --hidden 4096 --dtype bf16 --batches 1-256 --budget 900\n"
          "exit codes: 0 ok, 1 library error (also: no GPU), 2 bad command line.");
  const Args args = parser.parse(argv);
  if (args.help_requested()) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  TuneOptions o;
  o.vocab = args.get_int("vocab", 151936, 1, 0x7fffffff - 1024);
  o.hidden = args.get_int("hidden", 4096, 8, std::int64_t(1) << 24);
  if (o.hidden % 8 != 0)
    throw UsageError(fmt::format("invalid value '{}' for --hidden: must be a multiple of 8", o.hidden));
  o.dtype = dtype_arg(args, DType::bf16);
  const std::string batches = args.get_or("batches", "1-256");
  try {
    o.buckets = parse_batch_list(batches);
  } catch (const InvalidArgument& e) {
    throw UsageError(fmt::format("invalid value '{}' for --batches: {}", batches, e.what()));
  }
  o.samples_bucket = sample_bucket(int(args.get_int("samples", 1, 1, 0x7fffffff)));
  o.budget_s = args.get_double("budget", 600);
  if (o.budget_s < 0) throw UsageError(fmt::format("invalid value '{}' for --budget: must be >= 0", *args.get("budget")));
  o.reps = int(args.get_int("reps", 15, 1, 100000));
  o.warmup = int(args.get_int("warmup", 3, 0, 100000));
  o.max_candidates = int(args.get_int("max-candidates", 24, 1, 100000));
  o.finalists = int(args.get_int("finalists", 4, 0, 64));
  o.device = int(args.get_int("device", -1, 0, 1023));
  o.extra_candidates = spec_list_arg(args, "also");
  // search_space() takes an extra spec only with the tuned dtype: another one was dropped without a word.
  for (const KernelSpec& s : o.extra_candidates)
    if (s.dtype != o.dtype)
      throw UsageError(fmt::format("invalid spec '{}' in --also: its dtype {} is not the one tuned, {} (--dtype)",
                                   s.to_string(), to_string(s.dtype), to_string(o.dtype)));
  o.save = !args.has("no-save");

  std::string why;
  if (!gpu_available(&why)) throw NoGpu(fmt::format("fusedsample tune needs a GPU: {}", why));
  o.progress = [](const std::string& line) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  };
  std::string labels;
  for (int b : o.buckets) {
    if (!labels.empty()) labels += ',';
    labels += batch_bucket_label(b);
  }
  fmt::print(stderr,
             "fusedsample tune: {} V={} d={} buckets {}, {} sample(s) per row (reps {}, max {} candidates and {} "
             "finalists per bucket)\n",
             to_string(o.dtype), o.vocab, o.hidden, labels, bucket_samples(o.samples_bucket), o.reps,
             o.max_candidates, o.finalists);
  const TuneReport report = tune(o);
  print_table(o, report);
  return kExitOk;
}

}  // namespace fusedsample::cli
