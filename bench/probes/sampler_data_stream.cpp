// sampler_data_stream.cpp: a session-39 probe, not part of the library or its build. Does the tuner read a spec
// faster than the benchmark because of its inputs or its stream? One forced Sampler at S samples per row and N rows
// on two input sets (the benchmark's generator, bench/bench_data.cpp, salts 1/2; the tuner's,
// autotune/tuner_inputs.cpp, salts 3/4; both logits ~ N(0, 1), a seed per row) and two streams (the legacy default
// stream, as the benchmark and the demo use; a non-blocking stream, as the tuner), 30 back-to-back calls per cell,
// three rounds; median per cell. Build after the project (it links build/libfusedsample.a and two bench objects):
//   g++ -O2 -std=c++20 -DFMT_HEADER_ONLY=1 -I. -Iinclude -isystem /usr/local/cuda/include \
//     bench/probes/sampler_data_stream.cpp build/bench/CMakeFiles/fusedsample_bench.dir/bench_data.cpp.o \
//     build/bench/CMakeFiles/fusedsample_bench.dir/event_timer.cpp.o -o sampler_data_stream \
//     build/libfusedsample.a /usr/local/cuda/lib/libnvrtc.so -ldl
//   ./sampler_data_stream V d N S "SPEC"
// Results (H200, 2026-11-26): bench/results/2026-11-26-s39-h200.md, call 6b; BENCHMARKS.md session 39.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "autotune/kernel_timer.hpp"
#include "autotune/tuner_inputs.hpp"
#include "bench/bench_data.hpp"
#include "bench/event_timer.hpp"
#include "fusedsample/sampler.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"

namespace fs = fusedsample;

int run(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s V d N S SPEC\n", argv[0]);
    return 2;
  }
  const std::int64_t V = std::stoll(argv[1]), d = std::stoll(argv[2]), N = std::stoll(argv[3]);
  const int S = std::stoi(argv[4]);
  const std::string spec = argv[5];
  fs::runtime::Context ctx(-1);
  auto bench = fs::bench::make_shape_data({V, d}, fs::DType::bf16, N, 1.0f, S);
  auto up = [](const std::vector<std::uint8_t>& h) { fs::runtime::DeviceMemory m(h.size()); m.upload(h.data(), h.size()); return m; };
  auto tw = up(fs::autotune::random_values(fs::DType::bf16, std::size_t(V * d), 1.0f, 3));
  auto th = up(fs::autotune::random_values(fs::DType::bf16, std::size_t(N * d), float(1.0 / std::sqrt(double(d))), 4));
  fs::SamplerOptions o{.vocab = V, .hidden = d, .dtype = fs::DType::bf16};
  o.spec = fs::KernelSpec::parse(spec);
  fs::Sampler sampler(o);
  CUstream ns = nullptr;
  FS_CU(cuStreamCreate(&ns, CU_STREAM_NON_BLOCKING));
  for (int round = 0; round < 3; ++round)
    for (int data = 0; data < 2; ++data)
      for (int st = 0; st < 2; ++st) {
        fs::SampleArgs a;
        a.weights = data ? tw.as<void>() : bench->weights.as<void>();
        a.hidden_states = data ? th.as<void>() : bench->hidden.as<void>();
        a.rows = N;
        a.temperature = 1.0f;
        a.seeds = bench->seeds.as<std::uint64_t>();
        a.offset = 7;
        a.num_samples = S;
        a.out = bench->out.as<void>();
        CUstream s = st ? ns : nullptr;
        const auto us = fs::bench::time_us([&] { sampler.sample(a, reinterpret_cast<fs::Stream>(s)); }, s, 3, 30);
        std::printf("round %d data %-6s stream %-12s median %.1f us\n", round, data ? "tuner" : "bench",
                    st ? "nonblocking" : "default", fs::bench::median(us));
      }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sampler_data_stream: %s\n", e.what());
    return 1;
  }
}
