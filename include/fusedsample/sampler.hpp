// sampler.hpp: the host API. One Sampler per (vocab, hidden, dtype) LM head.
//
//   fusedsample::Sampler s({.vocab = 151936, .hidden = 4096, .dtype = DType::bf16});
//   fusedsample::SampleArgs a;
//   a.weights = W; a.hidden_states = H; a.rows = N; a.out = out; a.seed = 1234;
//   s.sample(a, stream);   // asynchronous on `stream`, graph-capturable
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "fusedsample/kernel_spec.hpp"

struct CUstream_st;  // = cudaStream_t = CUstream

namespace fusedsample {

using Stream = CUstream_st*;

enum class IndexType { int64, int32 };

struct SamplerOptions {
  std::int64_t vocab = 0;    // V >= 1
  std::int64_t hidden = 0;   // d, a multiple of 8
  DType dtype = DType::bf16;
  int device = -1;           // CUDA ordinal; -1: the current context's device (or 0)
  // Force one kernel config for every batch size (tests, tuning). Its dtype
  // must match; its arch is replaced by the device's.
  std::optional<KernelSpec> spec;
  // Force sample_logits()'s kernel config (variant logits: T_V, T_N, stages,
  // warps; tests, tuning). It reads fp32 logits whatever the dtype; its arch
  // is replaced by the device's.
  std::optional<KernelSpec> logits_spec;
};

// The smallest positive temperature a row may have, 2^-64 (docs/rng.md
// section 5): below it l / tau overflows fp32 for ordinary logits.
inline constexpr float kMinTemperature = 0x1p-64f;

// The largest shapes a Sampler and reference_sample() accept: V up to
// 2^31 - 1025 (the noise's counters and the kernels' 32-bit indices, with a
// tile of padding), d up to 2^24, N up to 2^31 - 1, N x S up to 1e12.
inline constexpr std::int64_t kMaxVocab = (std::int64_t(1) << 31) - 1025;
inline constexpr std::int64_t kMaxHidden = std::int64_t(1) << 24;
inline constexpr std::int64_t kMaxRows = (std::int64_t(1) << 31) - 1;
inline constexpr double kMaxRowSamples = 1e12;

struct SampleArgs {
  const void* weights = nullptr;        // device [V, d], row-major, 16-byte aligned
  const void* hidden_states = nullptr;  // device [N, d], row-major, 16-byte aligned
  std::int64_t rows = 0;                // N >= 1
  // Temperature: per-row device array [N] (float), or the scalar for all rows.
  // 0 means greedy (argmax); otherwise finite and >= 2^-64 (5.42e-20: below
  // it l / tau can overflow fp32). A scalar outside that throws; a row whose
  // device temperature is outside it (negative, NaN, inf, (0, 2^-64)) gets
  // index -1.
  const float* temperatures = nullptr;
  float temperature = 1.0f;
  // Seed and offset (e.g. the decode position): per-row device arrays [N], or
  // one value for all rows.
  const std::uint64_t* seeds = nullptr;
  std::uint64_t seed = 0;
  const std::uint64_t* offsets = nullptr;
  std::uint64_t offset = 0;
  int num_samples = 1;                  // S >= 1 independent samples per row
  void* out = nullptr;                  // device [N, S] int64 (default) or int32
  IndexType index_type = IndexType::int64;
};

// A Sampler owns one workspace: use it from one thread and one stream at a
// time (like a cuBLAS handle), or give each stream its own Sampler.
// Its calls leave the caller's current CUDA context as it was (a thread with
// none is left on the Sampler device's primary context), and buffers it
// outgrows are kept until it is destroyed, so a CUDA graph captured earlier
// stays valid.
class Sampler {
 public:
  // Throws NoGpu without a driver/GPU, InvalidArgument for a bad shape.
  explicit Sampler(const SamplerOptions& options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Enqueue sampling on `stream` (nullptr: the legacy default stream). No host
  // synchronisation; no device allocation once reserve() covered (rows, S).
  void sample(const SampleArgs& args, Stream stream);

  // Sample from fp32 logits already in device memory, [N, V] row-major, with
  // the same noise (the sampler half of an unfused pipeline).
  void sample_logits(const float* logits, const SampleArgs& args, Stream stream);

  // Allocate the workspace and compile the kernels for up to `rows` x
  // `num_samples` now, so later calls (and CUDA graph capture) allocate nothing.
  void reserve(std::int64_t rows, int num_samples = 1);

  // The kernel config used for `rows` rows of `num_samples` samples each
  // (tuned per batch bucket and sample bucket: tuning_db.hpp; above 64 rows
  // a register-epilogue winner's batch tile fitted to the batch's part,
  // fit_batch_tile, and above 128 rows, where the winner has several batch
  // tiles, the bucket below's grown to it, grow_batch_tile:
  // runtime/batch_tiles.hpp).
  KernelSpec spec_for(std::int64_t rows, int num_samples = 1) const;
  const SamplerOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusedsample
