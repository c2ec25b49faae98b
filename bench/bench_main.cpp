// bench_main.cpp: the LM-head sampling benchmark. For each shape and batch N:
//   floor    - our kernel streaming W once (the bandwidth floor, same process)
//   fused    - fusedsample's fused matmul + Gumbel-max sampler
//   cublas   - cuBLASLt GEMM alone (best of its heuristic's algorithms, bf16 out)
//   unfused  - cuBLASLt GEMM to fp32 logits + our sampler over those logits
// By default (--fs_order=balanced) the four are timed together per (shape, N)
// by `compare/...`, back to back in an order where each line runs after every
// line (itself included) equally often (call_order.hpp: under the GPU's power
// limit the clock follows the recent work, which all lines then share).
// --fs_order=rotating is the order of sessions 9-11 (rounds rotated by one,
// which made the fused line follow the unfused one in 3 calls of 4, and
// cuBLAS the memory-bound floor); --fs_order=sequential times each line on
// its own, one after the other. Forced configs (--fs_specs="spec;spec") are
// more lines of the same interleaved call (so their times compare with that
// call's cuBLAS), or with --fs_order=sequential timed on their own.
// --fs_by_predecessor adds a table of each
// line's median by the line before it. Each number is the median over its
// repetitions. A markdown summary table is printed at the end (and written to
// --fs_table=FILE) for BENCHMARKS.md.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench_data.hpp"
#include "bench/bench_rows.hpp"
#include "bench/bench_tables.hpp"
#include "autotune/call_order.hpp"
#include "bench/cublas_gemm.hpp"
#include "bench/event_timer.hpp"
#include "fusedsample/fusedsample.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/loaded_module.hpp"

namespace fs = fusedsample;
namespace fb = fusedsample::bench;
namespace fa = fusedsample::autotune;

namespace {

struct Options {
  std::vector<fb::Shape> shapes{{151936, 4096}, {128256, 8192}};
  std::vector<std::int64_t> rows{1, 2, 4, 8, 16, 32, 64, 128, 256};
  int reps = 50;
  float temperature = 1.0f;  // --fs_temperature (0 = greedy: no noise drawn)
  float logit_std = 1.0f;    // --fs_logit_std: the logits' standard deviation (spread decides the exact skip)
  std::string table_path;
  std::vector<std::string> sweep_specs;  // --fs_specs: extra forced configs to time
  // --fs_logits_spec=SPEC: the unfused line's sample_logits config (SamplerOptions::logits_spec; default:
  // the Sampler's own); --fs_logits_specs="spec;spec": more lines of the same interleaved call, each
  // sample_logits alone with that config, and one with the unfused line's (table "sample_logits alone").
  std::string logits_spec;
  std::vector<std::string> logits_specs;
  enum class Order { balanced, rotating, sequential } order = Order::balanced;  // --fs_order=
  bool by_predecessor = false;  // --fs_by_predecessor
  // --fs_flush: before every interleaved call, outside its events, read a
  // buffer of max(2 x L2, 256 MiB) with the floor's kernel, so that no call
  // finds what the one before left in L2 (clean or dirty lines: the fused
  // kernel reads W evict_first, the floor with normal eviction).
  bool flush = false;
  // --fs_seeds=rows (default): every row its own seed, as independent requests
  // of a server batch have; --fs_seeds=one: one seed and offset for every row
  // (identical noise in every row: the worst case for the register
  // epilogue's first tile, whose passing groups then pass in every column).
  bool seed_per_row = true;
  // --fs_dtype=bf16|fp16: W, H, the fused and unfused samplers' heads and
  // cuBLAS's operands and output (fp16 heads take the bf16 tuning where they
  // have none of their own: tuning_twin).
  fs::DType dtype = fs::DType::bf16;
  // --fs_samples=S: S independent samples per row (SampleArgs::num_samples) in
  // the fused and the unfused lines (cuBLAS's GEMM runs once either way).
  int samples = 1;
};

const char* order_text(Options::Order o) {
  switch (o) {
    case Options::Order::balanced: return "floor, cuBLAS, unfused and fused interleaved per N, each after every line equally often";
    case Options::Order::rotating: return "floor, cuBLAS, unfused and fused interleaved per N in rotating rounds";
    case Options::Order::sequential: return "each line timed on its own";
  }
  return "";
}
Options g_opt;

using Row = fb::LineTimes;
using fb::kMainLines;
fb::Results g_res;  // what the run measured (bench_tables.hpp)

struct ShapeState {
  std::unique_ptr<fb::ShapeData> data;
  std::unique_ptr<fs::Sampler> sampler;
  double floor_us = 0;
  unsigned floor_blocks = 0;  // the floor kernel's fastest grid
};

std::unique_ptr<fs::runtime::Context> g_ctx;
std::unique_ptr<fs::runtime::LoadedModule> g_stream_module;
std::map<std::pair<std::int64_t, std::int64_t>, ShapeState> g_shapes;

ShapeState& shape_state(fb::Shape s) {
  auto& st = g_shapes[{s.vocab, s.hidden}];
  if (!st.data) {
    const std::int64_t rows = fb::data_rows(g_opt.rows);
    st.data = fb::make_shape_data(s, g_opt.dtype, rows, g_opt.logit_std, g_opt.samples);
    fs::SamplerOptions o{.vocab = s.vocab, .hidden = s.hidden, .dtype = g_opt.dtype};
    if (!g_opt.logits_spec.empty()) o.logits_spec = fs::KernelSpec::parse(g_opt.logits_spec);
    st.sampler = std::make_unique<fs::Sampler>(o);
    st.sampler->reserve(rows, g_opt.samples);
  }
  return st;
}

fs::SampleArgs args_for(ShapeState& st, std::int64_t n) {
  fs::SampleArgs a;
  a.weights = st.data->weights.as<void>();
  a.hidden_states = st.data->hidden.as<void>();
  a.rows = n;
  a.out = st.data->out.as<void>();
  a.seed = 0x5eed;
  a.offset = 7;
  if (g_opt.seed_per_row) a.seeds = st.data->seeds.as<std::uint64_t>();
  a.temperature = g_opt.temperature;
  a.num_samples = g_opt.samples;
  return a;
}

void report(benchmark::State& state, double us, double bytes, double floor_us) {
  state.SetIterationTime(us * 1e-6);
  state.counters["us"] = us;
  state.counters["GB_s"] = bytes / (us * 1e-6) / 1e9;
  if (floor_us > 0) state.counters["x_floor"] = us / floor_us;
}

// --fs_flush: the tuner's flush (autotune::FlushedTimer: a read of
// max(2 x L2, 256 MiB) with the floor's kernel) on the legacy stream.
void flush_l2() {
  static fa::FlushedTimer timer(nullptr, [] {
    int l2 = 0;
    FS_CU(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g_ctx->device()));
    return std::size_t(l2);
  }(), g_stream_module->stream(), g_ctx->multiprocessors());
  timer.flush();
}

// One launch of the floor kernel (stream W once) on `blocks` blocks.
void launch_floor(ShapeState& st, unsigned blocks) {
  static fs::runtime::DeviceMemory sink(std::size_t(g_ctx->multiprocessors()) * 16 * 4);
  std::int64_t n16 = std::int64_t(st.data->weight_bytes() / 16);
  CUdeviceptr w = st.data->weights.get(), out = sink.get();
  void* params[] = {&w, &n16, &out};
  FS_CU(cuLaunchKernel(g_stream_module->stream(), blocks, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
}

void BM_Floor(benchmark::State& state, fb::Shape s) {
  auto& st = shape_state(s);
  double best = 1e30;
  for (int per_sm : {2, 4, 8, 16}) {
    const unsigned blocks = unsigned(g_ctx->multiprocessors() * per_sm);
    const double us = fb::median(fb::time_us([&] { launch_floor(st, blocks); }, nullptr, 5, g_opt.reps));
    if (us < best) {
      best = us;
      st.floor_blocks = blocks;
    }
  }
  st.floor_us = best;
  for (auto _ : state) report(state, best, double(st.data->weight_bytes()), best);
  for (auto n : g_opt.rows) g_res.lines[{s.vocab, s.hidden}][n].floor = best;
}

// A sampler for shape s whose fused kernel (logits = false: SamplerOptions::spec) or sample_logits kernel
// (logits = true: SamplerOptions::logits_spec) is forced to `spec_text` (built once per process).
fs::Sampler& forced_sampler(fb::Shape s, const std::string& spec_text, bool logits = false) {
  static std::map<std::string, std::unique_ptr<fs::Sampler>> samplers;
  auto& sampler = samplers[fmt::format("{}x{}:{}:{}", s.vocab, s.hidden, logits ? "logits" : "fused", spec_text)];
  if (!sampler) {
    fs::SamplerOptions o{.vocab = s.vocab, .hidden = s.hidden, .dtype = g_opt.dtype};
    (logits ? o.logits_spec : o.spec) = fs::KernelSpec::parse(spec_text);
    sampler = std::make_unique<fs::Sampler>(o);
  }
  return *sampler;
}

// --fs_order=sequential with --fs_specs: one forced config timed on its own.
void BM_FusedSpec(benchmark::State& state, fb::Shape s, std::int64_t n, std::string spec_text) {
  auto& st = shape_state(s);
  const fs::SampleArgs a = args_for(st, n);
  double us = 0;
  try {
    fs::Sampler& sampler = forced_sampler(s, spec_text);
    us = fb::median(fb::time_us([&] { sampler.sample(a, nullptr); }, nullptr, 3, g_opt.reps));
  } catch (const fs::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) report(state, us, double(st.data->weight_bytes()), st.floor_us);
  g_res.sweep[{s.vocab, s.hidden, n}][spec_text] = us;
}

// The timed pipelines of one (shape, N): the floor on its fastest grid
// (BM_Floor runs first), cuBLAS GEMM to bf16 logits, the unfused pipeline
// (cuBLAS GEMM to fp32 logits, then our sampler over them) and the fused
// sampler. Each cuBLAS plan picks its fastest algorithm when built, of every
// one cuBLASLt's heuristic returns (cublas_gemm.hpp).
struct Lines {
  ShapeState& st;
  fs::SampleArgs a;
  void* w;
  void* h;
  float* l;
  fb::CublasGemm gemm, gemm32;

  Lines(fb::Shape s, std::int64_t n)
      : st(shape_state(s)),
        a(args_for(st, n)),
        w(st.data->weights.as<void>()),
        h(st.data->hidden.as<void>()),
        l(st.data->logits.as<float>()),
        gemm(g_opt.dtype, s.vocab, s.hidden, n, /*out_fp32=*/false, nullptr),
        gemm32(g_opt.dtype, s.vocab, s.hidden, n, /*out_fp32=*/true, nullptr) {
    gemm.autotune(w, h, l);
    gemm32.autotune(w, h, l);
  }
  void floor() { launch_floor(st, st.floor_blocks); }
  void cublas() { gemm.run(w, h, l); }
  void unfused() {
    gemm32.run(w, h, l);
    st.sampler->sample_logits(l, a, nullptr);
  }
  void fused() { st.sampler->sample(a, nullptr); }
};

// --fs_order=sequential: one line of one (shape, N) timed on its own.
void BM_Line(benchmark::State& state, fb::Shape s, std::int64_t n, void (Lines::*line)(), double Row::*slot) {
  Lines lines(s, n);
  const double us = fb::median(fb::time_us([&] { (lines.*line)(); }, nullptr, 5, g_opt.reps));
  for (auto _ : state) report(state, us, double(lines.st.data->weight_bytes()), lines.st.floor_us);
  if (line == &Lines::fused) state.SetLabel(lines.st.sampler->spec_for(n, g_opt.samples).to_string());
  g_res.lines[{s.vocab, s.hidden}][n].*slot = us;
}

// --fs_order=balanced (default) or rotating: the four lines of one (shape, N)
// timed together, at least --fs_reps calls each (call_order.hpp).
void BM_Compare(benchmark::State& state, fb::Shape s, std::int64_t n) {
  if (shape_state(s).floor_blocks == 0) {
    state.SkipWithError("compare needs floor/ to run first (keep it in --benchmark_filter)");
    return;
  }
  Lines lines(s, n);
  std::vector<std::function<void()>> calls{
      [&] { lines.floor(); }, [&] { lines.cublas(); }, [&] { lines.unfused(); }, [&] { lines.fused(); }};
  // --fs_specs: each forced config is one more line of the same order.
  // A config that cannot be built or run is reported on stderr and left out.
  std::vector<std::string> specs;
  for (const auto& spec : g_opt.sweep_specs) {
    try {
      fs::Sampler& sampler = forced_sampler(s, spec);
      sampler.sample(lines.a, nullptr);  // compiles and loads it outside the timed calls
      calls.push_back([&sampler, &lines] { sampler.sample(lines.a, nullptr); });
      specs.push_back(spec);
    } catch (const fs::Error& e) {
      std::fprintf(stderr, "--fs_specs: [%s] left out at V=%lld d=%lld N=%lld: %s\n", spec.c_str(),
                   (long long)s.vocab, (long long)s.hidden, (long long)n, e.what());
    }
  }
  // --fs_logits_specs: sample_logits alone, the unfused line's config first.
  std::vector<std::string> alone;
  if (!g_opt.logits_specs.empty()) {
    calls.push_back([&lines] { lines.st.sampler->sample_logits(lines.l, lines.a, nullptr); });
    // Labelled apart from the list's entries (a list entry equal to --fs_logits_spec is a line of its own).
    alone.push_back(g_opt.logits_spec.empty() ? "the unfused line's (Sampler default)"
                                              : "the unfused line's: " + g_opt.logits_spec);
  }
  for (const auto& spec : g_opt.logits_specs) {
    try {
      fs::Sampler& sampler = forced_sampler(s, spec, /*logits=*/true);
      sampler.sample_logits(lines.l, lines.a, nullptr);  // compiles and loads it outside the timed calls
      calls.push_back([&sampler, &lines] { sampler.sample_logits(lines.l, lines.a, nullptr); });
      alone.push_back(spec);
    } catch (const fs::Error& e) {
      std::fprintf(stderr, "--fs_logits_specs: [%s] left out at V=%lld d=%lld N=%lld: %s\n", spec.c_str(),
                   (long long)s.vocab, (long long)s.hidden, (long long)n, e.what());
    }
  }
  const auto order = g_opt.order == Options::Order::rotating ? fa::rotating_call_order(calls.size(), g_opt.reps)
                                                             : fa::balanced_call_order(calls.size(), g_opt.reps);
  const auto timed = fb::time_in_order_us(calls, order, nullptr, 3, g_opt.flush ? std::function<void()>(flush_l2)
                                                                                 : std::function<void()>());
  std::vector<std::vector<double>> t(calls.size());
  // [line][line before it], for the main lines (--fs_by_predecessor).
  std::vector<std::vector<std::vector<double>>> after(kMainLines, std::vector<std::vector<double>>(kMainLines));
  for (const auto& c : timed) {
    t[c.line].push_back(c.us);
    if (c.line < kMainLines && c.after < kMainLines) after[c.line][c.after].push_back(c.us);
  }
  for (std::size_t k = 0; k < specs.size(); ++k)
    g_res.sweep[{s.vocab, s.hidden, n}][specs[k]] = fb::median(t[kMainLines + k]);
  for (std::size_t k = 0; k < alone.size(); ++k)
    g_res.logits_alone[{s.vocab, s.hidden, n}][alone[k]] = fb::median(t[kMainLines + specs.size() + k]);
  if (g_opt.by_predecessor) {
    fb::PredecessorTable& p = g_res.by_predecessor[{s.vocab, s.hidden}][n];
    p.assign(kMainLines, std::vector<double>(kMainLines, 0.0));
    for (std::size_t l = 0; l < kMainLines; ++l)
      for (std::size_t b = 0; b < kMainLines; ++b)
        if (!after[l][b].empty()) p[l][b] = fb::median(after[l][b]);
  }
  Row& r = g_res.lines[{s.vocab, s.hidden}][n];
  r.floor = fb::median(t[0]);
  r.cublas = fb::median(t[1]);
  r.unfused = fb::median(t[2]);
  r.fused = fb::median(t[3]);
  for (auto _ : state) report(state, r.fused, double(lines.st.data->weight_bytes()), r.floor);
  state.counters["cublas_us"] = r.cublas;
  state.counters["unfused_us"] = r.unfused;
  state.counters["cublas_algos"] = lines.gemm.algorithms_tried();
  g_res.cublas_algorithms[{s.vocab, s.hidden, n}] = {lines.gemm.chosen_text(), lines.gemm32.chosen_text()};
  state.SetLabel(lines.st.sampler->spec_for(n, g_opt.samples).to_string());
}

std::vector<std::int64_t> parse_list(const std::string& s) {
  std::vector<std::int64_t> v;
  std::stringstream in(s);
  std::string tok;
  while (std::getline(in, tok, ',')) v.push_back(std::stoll(tok));
  return v;
}

void parse_own_flags(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--fs_rows=", 0) == 0) g_opt.rows = fb::parse_rows(a.substr(10));
    else if (a.rfind("--fs_reps=", 0) == 0) g_opt.reps = std::stoi(a.substr(10));
    else if (a.rfind("--fs_table=", 0) == 0) g_opt.table_path = a.substr(11);
    else if (a.rfind("--fs_temperature=", 0) == 0) g_opt.temperature = std::stof(a.substr(17));
    else if (a.rfind("--fs_logit_std=", 0) == 0) g_opt.logit_std = std::stof(a.substr(15));
    else if (a == "--fs_order=balanced" || a == "--fs_order=interleaved") g_opt.order = Options::Order::balanced;
    else if (a == "--fs_order=rotating") g_opt.order = Options::Order::rotating;
    else if (a == "--fs_order=sequential") g_opt.order = Options::Order::sequential;
    else if (a == "--fs_by_predecessor") g_opt.by_predecessor = true;
    else if (a == "--fs_flush") g_opt.flush = true;
    else if (a == "--fs_seeds=rows") g_opt.seed_per_row = true;
    else if (a == "--fs_seeds=one") g_opt.seed_per_row = false;
    else if (a.rfind("--fs_seeds=", 0) == 0) throw std::invalid_argument("unknown " + a + " (rows or one)");
    else if (a.rfind("--fs_order=", 0) == 0) throw std::invalid_argument("unknown " + a + " (balanced, rotating or sequential)");
    else if (a.rfind("--fs_specs=", 0) == 0) g_opt.sweep_specs = fs::split_spec_list(a.substr(11));
    else if (a.rfind("--fs_logits_specs=", 0) == 0) {
      g_opt.logits_specs.clear();  // normalized, so equal configs share one label
      for (const auto& spec : fs::split_spec_list(a.substr(18)))
        g_opt.logits_specs.push_back(fs::KernelSpec::parse(spec).to_string());
    }
    else if (a.rfind("--fs_logits_spec=", 0) == 0) g_opt.logits_spec = std::string(fs::KernelSpec::parse(a.substr(17)).to_string());
    else if (a.rfind("--fs_samples=", 0) == 0) {
      g_opt.samples = std::stoi(a.substr(13));
      if (g_opt.samples < 1) throw std::invalid_argument("--fs_samples: at least 1 sample per row");
    } else if (a.rfind("--fs_dtype=", 0) == 0) {
      g_opt.dtype = fs::parse_dtype(a.substr(11));
      if (g_opt.dtype == fs::DType::fp32) throw std::invalid_argument("--fs_dtype: bf16 or fp16 (cuBLAS's GEMM line is a tensor-core GEMM)");
    }
    else if (a.rfind("--fs_shapes=", 0) == 0) {
      g_opt.shapes.clear();
      auto v = parse_list(a.substr(12));  // V,d,V,d,...
      for (std::size_t k = 0; k + 1 < v.size(); k += 2) g_opt.shapes.push_back({v[k], v[k + 1]});
    } else argv[out++] = argv[i];
  }
  argc = out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    parse_own_flags(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  std::string why;
  if (!fs::gpu_available(&why)) {
    std::fprintf(stderr, "fusedsample_bench needs a GPU: %s\n", why.c_str());
    return 1;
  }
  try {
    g_ctx = std::make_unique<fs::runtime::Context>(-1);
    g_stream_module = std::make_unique<fs::runtime::LoadedModule>(
        *g_ctx, fs::compile_kernel(fs::default_spec(fs::DType::bf16, g_ctx->arch(), 1)));
    for (const auto& s : g_opt.shapes) {
      const std::string tag = fmt::format("V{}_d{}", s.vocab, s.hidden);
      benchmark::RegisterBenchmark(("floor/" + tag).c_str(), BM_Floor, s)->Iterations(1)->UseManualTime();
      for (auto n : g_opt.rows) {
        if (g_opt.order != Options::Order::sequential) {
          benchmark::RegisterBenchmark(fmt::format("compare/{}/N{}", tag, n).c_str(), BM_Compare, s, n)->Iterations(1)->UseManualTime();
        } else {
          const std::tuple<const char*, void (Lines::*)(), double Row::*> lines[] = {
              {"cublas", &Lines::cublas, &Row::cublas}, {"unfused", &Lines::unfused, &Row::unfused},
              {"fused", &Lines::fused, &Row::fused}};
          for (const auto& [name, line, slot] : lines)
            benchmark::RegisterBenchmark(fmt::format("{}/{}/N{}", name, tag, n).c_str(), BM_Line, s, n, line, slot)
                ->Iterations(1)
                ->UseManualTime();
        }
        if (g_opt.order == Options::Order::sequential)
          for (const auto& spec : g_opt.sweep_specs)
            benchmark::RegisterBenchmark(fmt::format("sweep/{}/N{}/{}", tag, n, spec).c_str(), BM_FusedSpec, s, n, spec)
                ->Iterations(1)
                ->UseManualTime();
      }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    const auto dev = fs::list_devices().at(0);
    const std::string table = fmt::format(
        "GPU: {} ({} SMs), driver {}, NVRTC {}, {} reps per number ({}{}); logits ~ N(0, {}^2), temperature {}, {}, "
        "{} sample(s) per row\n{}",
        dev.name, dev.multiprocessors, fs::driver_version(), fs::nvrtc_version(), g_opt.reps,
        order_text(g_opt.order),
        g_opt.flush && g_opt.order != Options::Order::sequential ? "; L2 flushed before each call, outside its events" : "",
        g_opt.logit_std, g_opt.temperature,
        g_opt.seed_per_row ? "a seed per row" : "one seed for every row", g_opt.samples,
        fb::summary_table(g_res, fs::to_string(g_opt.dtype)) + fb::cublas_table(g_res) + fb::predecessor_table(g_res) +
            fb::sweep_table(g_res, g_opt.order != Options::Order::sequential) + fb::logits_alone_table(g_res));
    std::printf("%s\n", table.c_str());
    if (!g_opt.table_path.empty()) std::ofstream(g_opt.table_path) << table;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
