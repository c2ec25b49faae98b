// sampler.cpp: the host API. Picks a kernel config per module slot (a batch
// bucket, or above 64 rows 8 rows of a batch part: module_slot) and sample
// bucket (tuning_db.hpp), loads
// its module once, owns the workspace (a block counter and one running
// winner per row and sample) and enqueues one fused launch per call on the
// caller's stream.
#include "fusedsample/sampler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <array>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "compiler/parallel_compile.hpp"
#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"
#include "runtime/argument_checks.hpp"
#include "runtime/batch_tiles.hpp"
#include "runtime/buffer_extents.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "runtime/loaded_module.hpp"
#include "runtime/tensor_maps.hpp"
#include "templates/tma_boxes.cuh"
#include "templates/fs_params.cuh"

namespace fusedsample {
namespace {

using runtime::module_slot;
using runtime::slot_rows;

// sample_logits()'s built-in configs (templates/sample_logits.cuh), by the
// rows of the call: up to kLogitsSmallRows rows 256 x 8 tiles, 4 stages and
// 4 warps, from there 512 x 8 tiles and 2 stages (twice the values per
// thread and tile). Session 62's sweep on an H200 (BENCHMARKS.md), sample_logits
// alone: the first 14-15 us at N = 1 against 16-17, the second 84-87 us at
// N = 256 against 98-103.
constexpr std::int64_t kLogitsSmallRows = 64;
KernelSpec logits_spec(DType dtype, Arch arch, bool large) {
  KernelSpec s;
  s.dtype = dtype;
  s.arch = arch;
  s.variant = Variant::logits;
  s.tile_v = large ? 512 : 256;
  s.tile_n = 8;
  s.stages = large ? 2 : 4;
  s.warps_m = 4;
  s.warps_n = 1;
  return s;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Compile threads of Sampler::reserve: one per core, and at most 8 NVRTC
// instances (a few hundred MB each) at once in a server process.
unsigned reserve_compile_threads() { return std::clamp(std::thread::hardware_concurrency(), 1u, 8u); }

}  // namespace

struct Sampler::Impl {
  SamplerOptions options;
  runtime::Context ctx;
  std::mutex mu;  // guards modules and the workspace on the slow paths
  std::map<std::string, std::unique_ptr<runtime::LoadedModule>> modules;
  // [sample_bucket()][module_slot()]
  std::array<std::array<std::atomic<runtime::LoadedModule*>, runtime::kModuleSlots>, kNumSampleBuckets> by_slot{};
  std::array<std::atomic<runtime::LoadedModule*>, 2> logits_modules{};  // [rows > kLogitsSmallRows]
  // Counters and candidates (zero between launches), and apart from them the
  // staged logits and stream-K partial sums (written and read within a
  // launch): in one buffer a later launch's candidates for more rows or
  // samples landed on an earlier launch's staged data, which no one zeroes.
  runtime::DeviceMemory workspace, staging;
  // Buffers replaced by larger ones, kept for the Sampler's life: a CUDA graph
  // captured before the growth still launches on them.
  std::vector<runtime::DeviceMemory> retired;
  runtime::OperandMapCache weights_map, hidden_map, hidden_tail_map;  // tensor maps of the TMA-fed variants

  Impl(const SamplerOptions& o) : options(o), ctx(o.device) {}

  // A forced spec, else the tuning database's answer for the buckets
  // (bucket_spec), fitted to a batch part of part_rows rows or grown to it
  // from the bucket below (runtime::batch_spec, batch_tiles.hpp). Called once
  // per module slot and sample bucket.
  KernelSpec spec_for(std::int64_t part_rows, int samples) const {
    if (options.spec) return bucket_spec(bucket_rows(batch_bucket(part_rows)), samples);
    return runtime::batch_spec(part_rows, [&](std::int64_t rows) { return bucket_spec(rows, samples); },
                               std::size_t(ctx.max_shared_optin()));
  }
  // A forced spec, else the tuning database (this GPU and shape, this GPU's
  // closest tuned shape, its architecture, then the built-in default:
  // tuned_spec) for a bucket's rows, on this device's arch and shared memory.
  KernelSpec bucket_spec(std::int64_t rows, int samples) const {
    KernelSpec s;
    if (options.spec) {
      s = *options.spec;
    } else {
      const DeviceIdentity id{ctx.name(), ctx.multiprocessors(), ctx.cc_major(), ctx.cc_minor()};
      s = tuned_spec(id, options.dtype, options.vocab, options.hidden, rows, ctx.arch(), samples).spec;
    }
    // The device's arch, but a wgmma spec keeps sm_90a (it runs on compute capability 9.0 only: elsewhere the
    // launch says so); a forced `sm_90a mma_sync` spec kept sm_90a until session 60 and failed off Hopper.
    s.arch = compile_arch(s.variant, s.arch, ctx.arch());
    // An sm_90a binary runs on compute capability 9.0 only; a newer GPU
    // (which gets sm_90 PTX) falls back to the portable variants.
    if (s.arch == Arch::sm_90a && !(ctx.cc_major() == 9 && ctx.cc_minor() == 0) && !options.spec)
      s = portable_default_spec(options.dtype, ctx.arch(), rows);
    // A table entry of another GPU, or a default for an arch whose GPUs differ
    // (a GPU newer than Hopper runs sm_90 specs, some with 99 KiB), may need
    // more shared memory than this one has: the same spec with fewer or
    // shallower stages instead. A forced spec is run as given (LoadedModule
    // names the shortfall).
    if (!options.spec) s = fit_shared_memory(s, std::size_t(ctx.max_shared_optin()));
    return s;
  }

  runtime::LoadedModule* load(const KernelSpec& spec) {
    const std::string key = spec.to_string();
    auto it = modules.find(key);
    if (it != modules.end()) return it->second.get();
    auto m = std::make_unique<runtime::LoadedModule>(ctx, compile_kernel(spec));
    return modules.emplace(key, std::move(m)).first->second.get();
  }

  // Throws InvalidArgument naming reserve() if `what` (compiling and loading
  // a module, growing the workspace: allocations and context-wide
  // synchronizations) would break a CUDA graph capture: `stream`'s own, or
  // (asked through the legacy stream) that of a blocking stream of the
  // context, e.g. another thread's (until session 61 only `stream` was asked,
  // and a call on a non-blocking stream invalidated the other capture). A
  // capture of another non-blocking stream cannot be seen (driver::
  // capture_in_progress).
  static void refuse_during_capture(Stream stream, const std::string& what) {
    switch (driver::capture_in_progress(reinterpret_cast<CUstream>(stream))) {
      case driver::CaptureInProgress::none:
        return;
      case driver::CaptureInProgress::on_this_stream:
        throw InvalidArgument(fmt::format(
            "{} during CUDA graph capture; call Sampler::reserve(rows, num_samples) before capturing", what));
      case driver::CaptureInProgress::on_a_blocking_stream:
        throw InvalidArgument(fmt::format(
            "{} while a blocking stream of this CUDA context is being captured into a graph (growing would "
            "invalidate that capture); call Sampler::reserve(rows, num_samples) before capturing",
            what));
    }
  }

  // The module of sample bucket sb and module slot k (loaded on first use;
  // not while `stream` is being captured: until session 40 a capture of a
  // bucket reserve() had not covered compiled and loaded its module inside
  // the capture). Slots whose specs are the same share one module (load).
  runtime::LoadedModule* module_for(int sb, int k, Stream stream = nullptr) {
    auto& slot = by_slot[sb][k];
    if (runtime::LoadedModule* m = slot.load(std::memory_order_acquire)) return m;
    refuse_during_capture(stream, fmt::format("the kernel for up to {} rows and {} samples per row is not loaded yet",
                                              slot_rows(k), bucket_samples(sb)));
    std::lock_guard<std::mutex> lock(mu);
    if (!slot.load()) slot.store(load(spec_for(slot_rows(k), bucket_samples(sb))), std::memory_order_release);
    return slot.load();
  }

  // sample_logits()'s kernel for calls of up to (large = false) or more than
  // (large = true) kLogitsSmallRows rows: a forced SamplerOptions::logits_spec
  // (on this device's arch) for both, else the built-in one fitted to this
  // GPU's shared memory.
  KernelSpec logits_spec_here(bool large) const {
    if (!options.logits_spec)
      return fit_shared_memory(logits_spec(options.dtype, ctx.arch(), large), std::size_t(ctx.max_shared_optin()));
    KernelSpec s = *options.logits_spec;
    s.dtype = options.dtype;
    s.arch = ctx.arch();
    return s;
  }

  runtime::LoadedModule* module_for_logits(bool large, Stream stream = nullptr) {
    auto& slot = logits_modules[large ? 1 : 0];
    if (runtime::LoadedModule* m = slot.load(std::memory_order_acquire)) return m;
    refuse_during_capture(stream, fmt::format("the logits kernel for {} {} rows is not loaded yet",
                                              large ? "more than" : "up to", kLogitsSmallRows));
    std::lock_guard<std::mutex> lock(mu);
    if (!slot.load()) slot.store(load(logits_spec_here(large)), std::memory_order_release);
    return slot.load();
  }

  // The workspace: the block counter, one flag per stream-K block, then one
  // packed candidate per (row, sample); all are zero between launches (the
  // last block of each launch resets them, the blocks of a stream-K launch
  // their flags).
  // The staging buffer, a separate allocation: for a spec that stages its
  // logits in L2 (KernelSpec::stage_in_l2) one fp32 T_V x T_N tile per
  // block, then for a stream-K spec (KernelSpec::stream_k) one tile of
  // partial sums per block; written and read within a launch, never zeroed,
  // so it must never lie under a later launch's candidates.
  static constexpr std::size_t kCounterBytes = 4096;
  static constexpr std::size_t kFlagsOffset = 256;
  static constexpr std::int64_t kMaxStreamKBlocks = std::int64_t(kCounterBytes - kFlagsOffset) / 4;
  static std::size_t tile_bytes(const KernelSpec& spec) {
    return std::size_t(spec.tile_v) * std::size_t(spec.tile_n) * sizeof(float);
  }
  // Staged logits, then stream-K partial sums.
  static std::size_t staging_bytes(const KernelSpec& spec, std::int64_t blocks) {
    const std::size_t tiles = std::size_t(blocks) * tile_bytes(spec);
    return (spec.stage_in_l2 ? tiles : 0) + (spec.stream_k ? tiles : 0);
  }
  static std::size_t workspace_bytes(std::int64_t rows, int samples) {
    return kCounterBytes + std::size_t(rows) * std::size_t(samples) * sizeof(fs_u64);
  }

  // Grows `buffer` (the workspace or the staging) to at least `bytes`, zeroed.
  void ensure_buffer(runtime::DeviceMemory& buffer, std::size_t bytes, Stream stream, const char* what) {
    if (bytes <= buffer.size()) return;
    refuse_during_capture(stream, fmt::format("the {} must grow to {} bytes", what, bytes));
    std::lock_guard<std::mutex> lock(mu);
    if (bytes <= buffer.size()) return;
    // The old buffer may still be in use by queued work on some stream.
    FS_CU(cuCtxSynchronize());
    // The new buffer replaces the old one only once it is zeroed: a failed
    // memset or synchronize leaves the old (smaller) one, so the next call
    // grows again instead of launching on counters that are not zero.
    runtime::DeviceMemory grown;
    try {
      grown = runtime::DeviceMemory(bytes + bytes / 2);
    } catch (const CudaError& e) {  // e.g. out of memory: say what for
      throw CudaError(e.code(), e.name(), fmt::format("the sampler's {} of {} bytes (for {} needed): {}", what,
                                                      bytes + bytes / 2, bytes, e.what()));
    }
    FS_CU(cuMemsetD8(grown.get(), 0, grown.size()));
    FS_CU(cuCtxSynchronize());  // zeroed before any stream (also non-blocking ones) launches
    if (buffer.size()) retired.push_back(std::move(buffer));
    buffer = std::move(grown);
  }

  fs_row_params row_params(const SampleArgs& a) const {
    fs_row_params r{};
    r.temperatures = a.temperatures;
    r.seeds = reinterpret_cast<const fs_u64*>(a.seeds);
    r.offsets = reinterpret_cast<const fs_u64*>(a.offsets);
    r.temperature = a.temperature;
    r.seed = a.seed;
    r.offset = a.offset;
    return r;
  }

  // needs: the call's buffers (runtime::buffer_needs), checked against their
  // allocations once the launch's own limits have passed, before the
  // workspace grows or anything is launched (the module is already loaded).
  void launch(runtime::LoadedModule& m, const void* weights, const void* hidden, const SampleArgs& a,
              const runtime::BufferNeeds& needs, Stream stream) {
    const KernelSpec& spec = m.spec();
    const std::int64_t vtiles = ceil_div(options.vocab, spec.tile_v);

    fs_fused_params p{};
    p.weights = weights;
    p.hidden = hidden;
    p.vocab = options.vocab;
    p.rows = a.rows;
    p.hidden_dim = options.hidden;
    p.row = row_params(a);
    p.num_samples = a.num_samples;
    p.num_vtiles = int(vtiles);
    p.out = a.out;
    p.out_is_int64 = a.index_type == IndexType::int64 ? 1 : 0;
    const std::int64_t tiles = vtiles * ceil_div(a.rows, spec.tile_n);
    if (tiles > 0x7fffffff) throw InvalidArgument(fmt::format("{} tiles are too many for one launch", tiles));
    // A stream-K kernel walks the launch's k-steps as 32-bit positions
    // (templates/stream_k.cuh: fs_sk_walk).
    if (spec.stream_k && tiles * ceil_div(options.hidden, spec.tile_d) > 0x7fffffff)
      throw InvalidArgument(fmt::format("{} tiles of {} k-steps are too many for one stream-K (sk) launch of [{}]", tiles,
                                        ceil_div(options.hidden, spec.tile_d), spec.to_string()));
    runtime::check_buffer_extents(needs, ctx.pageable_memory_access(), reinterpret_cast<CUstream>(stream));
    // Persistent kernels: as many blocks as fit, each taking an equal number
    // of tiles (`rounds`), so no block runs a round more than the others. A
    // cluster spec deals out groups of `cluster` tiles to whole clusters.
    // A stream-K spec runs one block per resident slot (all of them at once:
    // a block may wait for a lower-numbered one, templates/stream_k.cuh).
    std::int64_t blocks = tiles;
    if (spec.stream_k) {
      blocks = std::min({tiles, std::int64_t(m.resident_blocks()), kMaxStreamKBlocks});
    } else {
      const std::int64_t groups = fs_cluster_groups(vtiles, ceil_div(a.rows, spec.tile_n), spec.cluster);
      const std::int64_t rounds = ceil_div(groups, m.resident_blocks() / spec.cluster);
      blocks = ceil_div(groups, rounds) * spec.cluster;
    }
    ensure_buffer(workspace, workspace_bytes(a.rows, a.num_samples), stream, "workspace");
    ensure_buffer(staging, staging_bytes(spec, blocks), stream, "staging buffer");
    p.done = reinterpret_cast<fs_u32*>(workspace.get());
    p.best = reinterpret_cast<fs_u64*>(workspace.get() + kCounterBytes);
    unsigned char* const staged_at = reinterpret_cast<unsigned char*>(staging.get());
    const std::size_t staged = spec.stage_in_l2 ? std::size_t(blocks) * tile_bytes(spec) : 0;
    p.staging = spec.stage_in_l2 ? reinterpret_cast<float*>(staged_at) : nullptr;
    p.partials = spec.stream_k ? reinterpret_cast<float*>(staged_at + staged) : nullptr;
    p.sk_flags = spec.stream_k ? reinterpret_cast<fs_u32*>(workspace.get() + kFlagsOffset) : nullptr;
    // The TMA-fed kernels take the tensor maps of W and H after the block,
    // then H's tail map (cuLaunchKernel copies them; the caches only save
    // re-encoding). In a cluster the operand the blocks share is copied in
    // slices, one per block (templates/tma_boxes.cuh): its map's box is a slice.
    void* args[4] = {&p, nullptr, nullptr, nullptr};
    if (uses_tma(spec.variant)) {
      const bool share_w = fs_cluster_shares_w(ceil_div(a.rows, spec.tile_n), spec.cluster);
      const bool share_h = spec.cluster > 1 && !share_w;
      const int box_cols = fs_tma_box_cols(spec.tile_d);
      args[1] = const_cast<CUtensorMap*>(&weights_map.get(weights, options.dtype, options.vocab, options.hidden,
                                                          fs_tma_box_rows(spec.tile_v, share_w, spec.cluster),
                                                          box_cols, spec.l2_promotion, "weights"));
      // H: a slice of the tile in a cluster sharing it; else the tile, or only the batch's rows where they are
      // fewer; the tail map only the last batch tile's rows (fs_tma_h_box_rows, fs_tma_h_tail_rows: the
      // kernel's copies expect the same boxes).
      const int h_box = share_h ? fs_tma_box_rows(spec.tile_n, true, spec.cluster)
                                : fs_tma_h_box_rows(a.rows, spec.tile_n, spec.cluster);
      const int h_tail = share_h ? h_box : fs_tma_h_tail_rows(a.rows, spec.tile_n, spec.cluster);
      args[2] = const_cast<CUtensorMap*>(&hidden_map.get(hidden, options.dtype, a.rows, options.hidden, h_box,
                                                         box_cols, spec.l2_promotion, "hidden_states"));
      args[3] = h_tail == h_box ? args[2]
                                : const_cast<CUtensorMap*>(&hidden_tail_map.get(hidden, options.dtype, a.rows,
                                                                                options.hidden, h_tail, box_cols,
                                                                                spec.l2_promotion, "hidden_states"));
    }
    FS_CU(cuLaunchKernel(m.fused(), unsigned(blocks), 1, 1, unsigned(spec.threads()), 1, 1,
                         unsigned(spec.shared_bytes()), reinterpret_cast<CUstream>(stream), args, nullptr));
  }
};

Sampler::Sampler(const SamplerOptions& options) {
  runtime::check_options(options);  // before touching the driver: bad shapes fail everywhere
  const runtime::KeepCallerContext keep;  // Context makes its primary context current
  impl_ = std::make_unique<Impl>(options);
}

// Its modules are unloaded from, and its buffers freed in, its own context
// (cuModuleUnload acts on the current one), made current for the while: its
// calls leave a caller's other context current, so it may not be now.
Sampler::~Sampler() {
  if (!impl_) return;
  try {
    const runtime::KeepCallerContext keep(impl_->ctx);
    impl_.reset();
  } catch (const std::exception&) {  // the driver failing here: release what we can where we are
    impl_.reset();
  }
}

const SamplerOptions& Sampler::options() const { return impl_->options; }

KernelSpec Sampler::spec_for(std::int64_t rows, int num_samples) const {
  if (rows < 1 || num_samples < 1)
    throw InvalidArgument(
        fmt::format("spec_for({}, {}): rows and num_samples must be >= 1", rows, num_samples));
  return impl_->spec_for(slot_rows(module_slot(batch_part_rows(rows))), bucket_samples(sample_bucket(num_samples)));
}

void Sampler::sample(const SampleArgs& args, Stream stream) {
  runtime::check_args(impl_->options, args);
  const runtime::KeepCallerContext keep(impl_->ctx);  // the Sampler's context, the caller's again on return
  runtime::LoadedModule& m =
      *impl_->module_for(sample_bucket(args.num_samples), module_slot(batch_part_rows(args.rows)), stream);
  impl_->launch(m, args.weights, args.hidden_states, args, runtime::buffer_needs(impl_->options, args), stream);
}

void Sampler::sample_logits(const float* logits, const SampleArgs& args, Stream stream) {
  runtime::check_logits_args(impl_->options, logits, args);
  const runtime::KeepCallerContext keep(impl_->ctx);  // the Sampler's context, the caller's again on return
  impl_->launch(*impl_->module_for_logits(args.rows > kLogitsSmallRows, stream), logits, nullptr, args, runtime::buffer_needs(impl_->options, args, logits),
                stream);
}

void Sampler::reserve(std::int64_t rows, int num_samples) {
  runtime::check_reserve(rows, num_samples);
  const runtime::KeepCallerContext keep(impl_->ctx);  // the Sampler's context, the caller's again on return
  // Every module slot's module (each batch bucket, and each fitted batch
  // tile, of up to `rows` rows with each sample bucket of up to
  // `num_samples`), and room for the largest staging any of them needs (a
  // launch never uses more blocks than fit at once). A batch past 256 rows
  // uses the slot of its parts (batch_part_rows), which may be any of 1..256 rows.
  // Their distinct specs are compiled first, in parallel (NVRTC is thread
  // safe; each lands in the process memo and the disk cache), so a cold
  // reserve takes about its slowest compile rather than the sum of up to
  // kNumSampleBuckets x runtime::kModuleSlots of them. A spec that fails is
  // compiled again below, which throws its error.
  const int last_slot = module_slot(std::min(rows, kMaxBucketRows));
  std::vector<KernelSpec> specs;
  for (int sb = 0; sb <= sample_bucket(num_samples); ++sb)
    for (int k = 0; k <= last_slot; ++k) {
      const KernelSpec s = impl_->spec_for(slot_rows(k), bucket_samples(sb));
      if (std::find(specs.begin(), specs.end(), s) == specs.end()) specs.push_back(s);
    }
  compile_all(specs, reserve_compile_threads());
  std::size_t staging = 0;
  for (int sb = 0; sb <= sample_bucket(num_samples); ++sb)
    for (int k = 0; k <= last_slot; ++k) {
      runtime::LoadedModule& m = *impl_->module_for(sb, k);
      staging = std::max(staging, Impl::staging_bytes(m.spec(), m.resident_blocks()));
    }
  impl_->module_for_logits(false);
  if (rows > kLogitsSmallRows) impl_->module_for_logits(true);
  impl_->ensure_buffer(impl_->workspace, Impl::workspace_bytes(rows, num_samples), nullptr, "workspace");
  impl_->ensure_buffer(impl_->staging, staging, nullptr, "staging buffer");
}

}  // namespace fusedsample
