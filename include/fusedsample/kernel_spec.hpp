// kernel_spec.hpp: everything that selects one generated kernel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusedsample {

enum class DType { bf16, fp16, fp32 };
enum class Arch { sm_80, sm_86, sm_89, sm_90, sm_90a };
// mma_sync: tensor cores (bf16/fp16); simt: fp32 on the FMA pipes;
// logits: sample fp32 logits already in memory (the unfused pipeline's half);
// wgmma: Hopper warpgroup MMA (bf16/fp16, sm_90a only);
// wgmma_ws: the same MMAs, warp-specialized: a producer warpgroup streams the
// stages, two consumer warpgroups ping-pong between MMAs and the epilogue
// (w12x1; tile_v = one consumer's 64 or 128 vocabulary rows);
// wgmma_coop: warp-specialized too, but the two consumer warpgroups share each
// tile and stage (tile_v = both consumers' 128 or 256 rows, at most 128
// accumulators per consumer thread: tile_v / 128 * tile_n / 2) and
// hand each tile's logits to one (w16x1) or two (w20x1) epilogue warpgroups,
// or (w12x1) to three epilogue warps beside the producer's warp.
// wgmma_ws and wgmma_coop load their stages with the tensor memory accelerator.
enum class Variant { mma_sync, simt, logits, wgmma, wgmma_ws, wgmma_coop };

std::string_view to_string(DType);
std::string_view to_string(Arch);
std::string_view to_string(Variant);
// Parse; throw InvalidArgument/Unsupported naming the bad text and the choices.
DType parse_dtype(std::string_view);
Arch parse_arch(std::string_view);
Variant parse_variant(std::string_view);
std::size_t dtype_size(DType);
// Compute capability (major*10+minor) -> the arch used to compile for it.
Arch arch_for_compute_capability(int major, int minor);
// The arch to compile `variant` for on a device of `device_arch`: wgmma needs
// the arch-specific sm_90a target on an sm_90 device; others use the device's.
bool is_wgmma(Variant variant);   // wgmma, wgmma_ws or wgmma_coop
bool uses_tma(Variant variant);   // wgmma_ws or wgmma_coop: launched with tensor maps of W and H
Arch target_arch(Variant variant, Arch device_arch);
// The arch a spec of `spec_arch` (forced or from a tuning table) compiles for
// on a device of `device_arch`, as the Sampler compiles it: a wgmma spec keeps
// sm_90a (it runs on compute capability 9.0 only), any other spec takes the
// device's arch; then target_arch.
Arch compile_arch(Variant variant, Arch spec_arch, Arch device_arch);

struct KernelSpec {
  int tile_v = 128;  // T_V: vocabulary rows per block
  int tile_n = 16;   // T_N: batch rows per block
  int tile_d = 64;   // T_d: depth of one pipeline stage
  int stages = 4;    // cp.async pipeline depth
  int warps_m = 4;   // warps along the vocabulary
  int warps_n = 1;   // warps along the batch
  // Blocks per thread-block cluster (wgmma_coop only: 1, 2 or 4). The blocks
  // of a cluster compute tiles that share W or H, which is read from L2 once
  // and multicast into all of them ("c2" in the spec text; absent when 1).
  int cluster = 1;
  // wgmma_coop only: hand each tile's fp32 logits to the epilogue through a
  // per-block buffer in global memory (it stays in L2) instead of shared
  // memory, which leaves the whole of shared memory to the stages ("l2" in
  // the spec text; absent when false).
  bool stage_in_l2 = false;
  // wgmma_coop only, without clusters: stream-K for the last waves (whole
  // tiles round-robin, then the rest cut along the depth into one equal range
  // per block; templates/stream_k.cuh), so no block runs a tile more than
  // another ("sk" in the spec text; absent when false).
  bool stream_k = false;
  // wgmma_coop only, T_N from 64 to 256 (a multiple of 8; at most 128
  // accumulators per consumer thread: tv256 takes up to tn128), w12x1, without
  // l2 (clusters or stream-K allowed): no epilogue warps and no staged logits; the
  // consumers sample each tile straight from their accumulators
  // (templates/epilogue_registers.cuh; "re" in the spec text; absent when
  // false).
  bool reg_epilogue = false;
  // With reg_epilogue and 128 x 128 tiles only, without stream-K: ping-pong, each consumer
  // warpgroup multiplies and samples whole tiles in turn, so one samples
  // while the other multiplies (templates/fused_wgmma_coop.cuh; "pp" in the
  // spec text; absent when false).
  bool ping_pong = false;
  // wgmma_ws and wgmma_coop only: each consumer waits for its own MMAs of a
  // stage as soon as it has issued them and frees the stage at once, instead
  // of keeping one stage's MMAs in flight while it waits for the next stage
  // and freeing the previous one only then (templates/tma_producer.cuh). In
  // the bandwidth-bound tiles (T_N <= 64) the consumers wait for the copies
  // anyway, and the stage a consumer holds idle until the next one lands is
  // one stage less of W in flight; with compute-bound tiles the in-flight
  // MMAs are what keeps the tensor pipe busy. ("er" in the spec text; absent
  // when false.)
  bool eager_release = false;
  // wgmma_ws and wgmma_coop only: the L2 promotion of the tensor maps their
  // copies read W and H through (CUtensorMapL2promotion), in bytes: 256
  // (the default), 128, 64 or 0 (none). With 256 each 128-byte row of a box
  // asks the L2 for 256 bytes; on the H200 that made the bandwidth-bound
  // batches 4-8 % slower than 128 or none (BENCHMARKS.md, session 27). The
  // kernel's code does not change ("l2p128" in the spec text; absent when 256).
  int l2_promotion = 256;
  DType dtype = DType::bf16;
  Arch arch = Arch::sm_90;
  Variant variant = Variant::mma_sync;

  int threads() const { return 32 * warps_m * warps_n; }
  // Dynamic shared memory the kernel needs, in bytes.
  std::size_t shared_bytes() const;
  // Throws InvalidArgument/Unsupported with the offending field if invalid.
  void validate() const;
  // "bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1", then " c2" for clusters,
  // " l2" for logits staged in L2, " sk" for stream-K, " re" for the
  // register epilogue, " pp" for ping-pong, " er" for the eager stage
  // release and " l2pN" for an L2 promotion other than 256 bytes: stable,
  // parseable.
  std::string to_string() const;
  static KernelSpec parse(std::string_view text);
  bool operator==(const KernelSpec&) const = default;
};

// The part of `spec` that selects the compiled binary: `spec` with the launch
// settings that change no byte of the kernel (l2_promotion) at their
// defaults. Specs with one binary_spec share a module and its cache entry.
KernelSpec binary_spec(const KernelSpec& spec);

// "spec;spec;...": the spec texts of a list, each trimmed of spaces, empty
// items dropped (the lists `fusedsample tune --also` and the benchmark's
// --fs_specs take). Parsing each is the caller's (KernelSpec::parse).
std::vector<std::string> split_spec_list(std::string_view text);

// The default variant for a dtype: mma_sync for bf16/fp16, simt for fp32.
Variant default_variant(DType);

// The largest dynamic shared memory one block may opt into on `arch`:
// 227 KiB on sm_90/sm_90a, 163 KiB on sm_80, 99 KiB on sm_86/sm_89. (A GPU
// newer than Hopper compiles for sm_90 and may allow less: the runtime fits
// its specs to the device's own limit.)
std::size_t shared_memory_limit(Arch arch);

// `spec` itself if it needs at most `limit` bytes of dynamic shared memory;
// else the spec like it that fits with the widest batch tile, then the
// deepest stages, then the most of them (at least 3 where any such fits, else
// 2), valid for its variant. Throws Unsupported naming the spec and the limit
// when none fits. (compiler/default_spec.cpp)
KernelSpec fit_shared_memory(const KernelSpec& spec, std::size_t limit);

// `spec` with its batch tile fitted to a batch (or a batch's part,
// batch_part_rows) of `rows` rows: a register-epilogue spec (re, without
// clusters) whose one batch tile covers the rows (rows <= tile_n) gets
// tile_n = the rows rounded up to a multiple of 8 (wgmma's N step), at least
// 64 (what re takes); any other spec is returned as it is. A bucket's tuned
// tile (128, 160, 192, 224, 256) stands for every batch of its rows: until
// session 65 a batch of N = 162 multiplied 192 rows, until session 66
// N = 65 multiplied 128 (the Sampler fits what
// it is not forced to run: runtime/batch_tiles.hpp says when). Throws InvalidArgument for rows < 1.
// (compiler/default_spec.cpp)
KernelSpec fit_batch_tile(const KernelSpec& spec, std::int64_t rows);

// `spec` with its one batch tile grown to a batch of `rows` rows, or nothing:
// a register-epilogue spec (re, without clusters) of tile_n < rows gets
// tile_n = the rows rounded up to 8 where that is at most 256 and the spec
// stays valid (accumulators, shared memory of its arch). The Sampler runs a
// batch nearer the bucket below its own, where its own bucket's winner has
// several batch tiles, with the bucket below's winner grown to it if that is
// one such tile (runtime/batch_tiles.hpp). Throws InvalidArgument for
// rows < 1. (compiler/default_spec.cpp)
std::optional<KernelSpec> grow_batch_tile(const KernelSpec& spec, std::int64_t rows);

// The built-in heuristic spec for (dtype, arch, batch rows), fitted to
// shared_memory_limit(arch). On sm_90/sm_90a (Hopper) bf16/fp16 get the
// wgmma variant with arch sm_90a.
KernelSpec default_spec(DType, Arch, std::int64_t rows);
// The same without arch-specific variants (mma_sync / simt): for GPUs that
// cannot run an sm_90a binary, e.g. newer GPUs running PTX compiled for sm_90.
KernelSpec portable_default_spec(DType, Arch, std::int64_t rows);

}  // namespace fusedsample
