// fused_wgmma_coop.cuh: the cooperative warp-specialized wgmma kernel (sm_90a,
// bf16/fp16) with a dedicated epilogue. Three, four or five warpgroups per block:
//   producer    (warpgroup 0, or its first warp with w12x1; one thread works)
//               streams (T_V x T_d) W and (T_N x T_d) H stages with the tensor memory accelerator
//               (tma_producer.cuh) into a ring of FS_STAGES stages;
//   consumers   (warpgroups 1, 2) share every tile and every stage: consumer
//               c multiplies vocabulary rows [c T_V/2, (c+1) T_V/2) of the
//               tile by the stage's whole H slice (m64nT_Nk16, one or two
//               64-row blocks each). A stage is freed (`empty`: every
//               consumer warp arrives, in a cluster every consumer warp
//               of every block) once both consumers' MMAs on it are done. At the
//               end of a tile they write its fp32 logits to shared memory
//               (L, T_N x T_V unpadded and swizzled, once the epilogue has
//               freed it: `lfree`),
//               announce them (`lfull`) and start the next tile's MMAs;
//   epilogue    (warpgroups 3 and, with w20x1, 4; w12x1: warps 1-3) run the Gumbel epilogue of
//               the staged tile (epilogue_owner.cuh: each thread owns fixed
//               rows and keeps its winner across tiles) while the consumers'
//               MMAs of the next tile run, then free L.
// So the tensor cores wait only for the store of a tile's logits, not for its
// sampling, as long as the epilogue of a tile is shorter than the MMAs of the
// next. One H stage feeds both consumers (lower shared-memory traffic per MMA
// than the ping-pong wgmma_ws).
//
// Registers: the block starts with R0 = 65536 / threads per thread (128 for
// w16x1, 96 for w20x1); the producer gives most of its share back
// (setmaxnreg.dec 40) and the epilogue warpgroups take it (w16x1: epilogue
// 216; w20x1: consumers 104, epilogue 112; four noise chains per lane either
// way). ptxas allocates each warpgroup's code within what its setmaxnreg
// grants, but checks every single instruction against the launch bound:
// m64n256 (128 accumulators in one instruction) needs 154 registers and
// does not assemble under w16x1's 128, so 128 accumulators per consumer
// (T_V x T_N = 128 x 256 or 256 x 128, w16x1 only: consumers 168, epilogue
// 136) are issued as m64n128 instructions (FS_WGMMA_N, wgmma_ops.cuh).
// Those tiles leave room for two stages only beside their 128 KiB of staged
// logits, and measured 1.3-1.5 x slower than 128 x 128 with four (H100,
// N = 256: the consumers wait on their stages); they are kept as spec options.
//
// Clusters (FS_CLUSTER = 2 or 4, spec token c2/c4): the blocks of a cluster
// compute tiles that share W or H (cluster_tiles.cuh); each block's producer
// multicasts its slice of the shared operand into every block, so L2 serves
// it once per cluster instead of once per block, and every block's `empty`
// counts the consumer warps of the whole cluster (tma_producer.cuh). Everything else runs
// per block as above; a block whose tile is empty (past the vocabulary) still
// multiplies its zeros and skips the epilogue, to keep the cluster in step.
//
// T_d = 128 stages hold two 64-column boxes per operand, copied back to back:
// each row of W then arrives in 256-byte pieces, which DRAM serves better than
// 128-byte ones (the bandwidth-bound batches). T_d = 32 stages hold one
// 32-column box with 64-byte swizzled rows: half the stage bytes, so
// tv128 tn256 w12x1 fits four stages beside its 128 KiB of staged logits
// (but each L2 request then brings 64 bytes, not 128).
//
// "l2" (FS_L_GLOBAL): the consumers write each tile's logits vocabulary-major
// ([T_V][T_N], 8-byte stores: fs_wgmma_stage_logits<..., VMAJOR>) into the block's own tile of p.staging in
// global memory, where they stay in L2 until the epilogue reads them back, so
// shared memory holds only stages: tv128 tn256 (or tv256 tn128) w12x1 gets
// four 128-byte-row stages (T_d = 64) instead of two. The handover protocol
// (lfull / lfree) is the same; the barriers' release/acquire order the
// global stores and loads of the block's threads as they do shared ones.
//
// w12x1 (three warpgroups, 384 threads): warpgroup 0 holds the producer's
// warp and three epilogue warps; nobody changes registers (setmaxnreg is per
// warpgroup), and the launch bound gives every thread 168, so 128
// accumulators per consumer are one m64n256 per k16 step, which reads 20 %
// fewer shared-memory bytes per MMA than m64n128.
//
// Prelude macros: FS_TV (128 or 256) FS_TN FS_TD (32, 64 or 128) FS_STAGES
// FS_WARPS_M(=12, 16 or 20) FS_WARPS_N(=1), FS_CLUSTER (default 1), FS_L_GLOBAL (default 0),
// FS_DTYPE_BF16 / FS_DTYPE_F16, and the generated fs_wgmma_k16(acc, desc_w, desc_h).
// Kernel parameters: the fs_fused_params block, then the tensor maps of W
// and H (boxes of fs_tma_box_cols(T_d) columns by T_V or T_N rows, or the
// shared operand's slice in a cluster: tma_boxes.cuh), encoded by
// runtime/tensor_maps.cpp.
#pragma once
#ifndef FS_CLUSTER
#define FS_CLUSTER 1
#endif
#include "fs_params.cuh"
#include "pipeline.cuh"
#include "mbarrier.cuh"
#include "tma_producer.cuh"
#include "wgmma_ops.cuh"
#include "epilogue_registers_smem.cuh"

#define FS_THREADS (32 * FS_WARPS_M)
// w12x1: warpgroup 0 is the producer's warp and three epilogue warps, and no
// warpgroup changes its registers (every thread has 168: 128 accumulators in
// one m64n256 instruction fit the launch bound). w16x1 / w20x1: warpgroup 0
// is the producer's and one or two whole epilogue warpgroups follow.
#define FS_SHARED_WG0 (FS_WARPS_M == 12)
#define FS_EPI_WG (FS_SHARED_WG0 ? 0 : (FS_WARPS_M - 12) / 4)  // whole epilogue warpgroups
#ifndef FS_PING_PONG
#define FS_PING_PONG 0
#endif
#define FS_MI (FS_PING_PONG ? FS_TV / 64 : FS_TV / 128)  // 64-row blocks per consumer
#define FS_NACC (FS_TN / 2)                 // fp32 accumulators per thread per 64-row block
#ifndef FS_L_GLOBAL
#define FS_L_GLOBAL 0
#endif
// The staged logits: [T_N][T_V] swizzled in shared memory (fs_staged_col), or
// with FS_L_GLOBAL ("l2") [T_V][T_N] in the block's tile of p.staging.
#define FS_L_VMAJOR FS_L_GLOBAL
#define FS_LDL (FS_L_GLOBAL ? 1 : FS_TV)    // row stride of the staged logits
#define FS_L_SWZ (!FS_L_GLOBAL)
#define FS_EPI_WARPS (FS_SHARED_WG0 ? 3 : 4 * FS_EPI_WG)
#define FS_CONSUMER_ACCS (FS_MI * FS_NACC)  // fp32 accumulators per consumer thread
#ifndef FS_REG_EPILOGUE
#define FS_REG_EPILOGUE 0
#endif
#if FS_REG_EPILOGUE
// "re" (w12x1): warpgroup 0 is the producer's alone (setmaxnreg.dec 40) and
// the consumers sample their own accumulators (epilogue_registers.cuh) with
// 232 registers; there are no epilogue warps and no staged logits.
#define FS_CONSUMER_REGS 232
#define FS_EPILOGUE_REGS 0
#else
#define FS_CONSUMER_REGS (FS_CONSUMER_ACCS > 64 ? 168 : FS_EPI_WG == 1 ? 128 : 104)
#define FS_EPILOGUE_REGS (FS_CONSUMER_ACCS > 64 ? 136 : FS_EPI_WG == 1 ? 216 : 112)
#endif
#define FS_PRODUCER_WG (!FS_SHARED_WG0 || FS_REG_EPILOGUE)  // warpgroup 0 is the producer's alone
static_assert(FS_TD == 32 || FS_TD == 64 || FS_TD == 128,
              "wgmma_coop: T_d is one 32-column (64-byte swizzled) box or one or two 64-column (128-byte) boxes");
static_assert(FS_STAGES >= 2, "wgmma_coop: at least two stages");
static_assert((FS_WARPS_M == 12 || FS_WARPS_M == 16 || FS_WARPS_M == 20) && FS_WARPS_N == 1,
              "wgmma_coop: producer, two consumer and epilogue warps (w12x1, w16x1 or w20x1)");
static_assert(FS_TV == 128 || FS_TV == 256, "wgmma_coop: T_V is 128 or 256 (64 or 128 rows per consumer)");
static_assert(FS_CLUSTER == 1 || FS_CLUSTER == 2 || FS_CLUSTER == 4, "wgmma_coop: clusters of 1, 2 or 4 blocks");
static_assert(FS_TN % 8 == 0 && FS_TN <= 256, "wgmma_coop: T_N must be a multiple of 8 up to 256");
static_assert(FS_CONSUMER_ACCS <= 64 || (FS_CONSUMER_ACCS <= 128 && (FS_EPI_WG == 1 || FS_SHARED_WG0)),
              "wgmma_coop: at most 64 accumulators per consumer thread, or 128 with w16x1 or w12x1");
// Every warpgroup's registers fit the block's (65536 / threads, a multiple of 8, each at launch).
static_assert(FS_SHARED_WG0 || 128 * 40 + 256 * FS_CONSUMER_REGS + 128 * FS_EPI_WG * FS_EPILOGUE_REGS <=
                                   FS_THREADS * ((65536 / FS_THREADS) & ~7),
              "wgmma_coop: register split exceeds the block's registers");

#ifndef FS_STREAM_K
#define FS_STREAM_K 0
#endif
static_assert(!FS_STREAM_K || FS_CLUSTER == 1, "wgmma_coop: stream-K (sk) runs without clusters");
static_assert(!FS_REG_EPILOGUE || (fs_re_tile_n_ok(FS_TN) && FS_SHARED_WG0 && !FS_L_GLOBAL),
              "wgmma_coop: the register epilogue (re) needs T_N a multiple of 8 from 64 to 256, w12x1, and no l2");
static_assert(!FS_STREAM_K || !FS_PING_PONG, "wgmma_coop: stream-K (sk) does not run ping-pong (pp)");
static_assert(!FS_PING_PONG || (FS_REG_EPILOGUE && FS_TV == 128 && FS_TN == 128),
              "wgmma_coop: ping-pong (pp) needs the register epilogue and 128 x 128 tiles (whole tiles per consumer)");
static_assert(!FS_REG_EPILOGUE || 128 * 40 + 256 * FS_CONSUMER_REGS <= FS_THREADS * ((65536 / FS_THREADS) & ~7),
              "wgmma_coop: register split exceeds the block's registers");

#include "epilogue_owner.cuh"
#include "epilogue_registers.cuh"
#include "reduce.cuh"
#include "stream_k_fixup.cuh"

#if FS_CLUSTER > 1
#define FS_CLUSTER_DIMS __cluster_dims__(FS_CLUSTER, 1, 1)
#else
#define FS_CLUSTER_DIMS
#endif

extern "C" __global__ void FS_CLUSTER_DIMS __launch_bounds__(FS_THREADS, 1) fs_fused_kernel(FS_TMA_KERNEL_PARAMS) {
  extern __shared__ __align__(128) unsigned char fs_smem_raw[];
  unsigned char* fs_smem = fs_smem_align_1024(fs_smem_raw);
  fs_u16* Ws = reinterpret_cast<fs_u16*>(fs_smem);
  fs_u16* Hs = Ws + FS_STAGES * FS_TV * FS_TD;
  float* const Ls = reinterpret_cast<float*>(Hs + FS_STAGES * FS_TN * FS_TD);  // [FS_TN][FS_TV], unless FS_L_GLOBAL
#if FS_REG_EPILOGUE
  [[maybe_unused]] float* const L = nullptr;     // nothing is staged
  fs_u64* full = reinterpret_cast<fs_u64*>(Ls);  // [FS_STAGES]
#elif FS_L_GLOBAL
  float* const L = p.staging + (fs_i64)blockIdx.x * FS_TV * FS_TN;  // [FS_TV][FS_TN]
  fs_u64* full = reinterpret_cast<fs_u64*>(Ls);                      // [FS_STAGES]
#else
  float* const L = Ls;
  fs_u64* full = reinterpret_cast<fs_u64*>(Ls + FS_TN * FS_TV);  // [FS_STAGES]
#endif
  fs_u64* empty = full + FS_STAGES;                                     // [FS_STAGES]
  fs_u64* lfull = empty + FS_STAGES;                                    // L holds a tile (consumer threads)
  fs_u64* lfree = lfull + 1;                                            // L was read (epilogue threads)
#if FS_REG_EPILOGUE
  // Ping-pong: order[c] lets consumer c start its next tile (the other one
  // arrives once it issued its tile's last MMAs). Then each consumer's words
  // and bounds (epilogue_registers.cuh).
  fs_u64* const order = lfree + 1;  // [2] with FS_PING_PONG
  unsigned char* const rebuf = reinterpret_cast<unsigned char*>(order + (FS_PING_PONG ? 2 : 0));
#endif
#if FS_STREAM_K && !FS_REG_EPILOGUE
  // The staged tile's index (stream-K: the consumers tell the epilogue which
  // tile L holds, -1 when they are done; the epilogue does not walk the schedule).
  volatile fs_i64* ltile = reinterpret_cast<volatile fs_i64*>(lfree + 1);
#endif

  const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
  if (threadIdx.x == 0) {
    fs_mbar_init(lfree, 32 * FS_EPI_WARPS);
    // empty: every consumer warp (of every block, in a cluster: fs_tma_release);
    // lfull: every consumer thread.
    // (ping-pong: one consumer's warps per stage).
    fs_tma_ring_init(full, empty, FS_STAGES, fs_tma_empty_count(FS_PING_PONG ? 128 : 256, FS_CLUSTER), lfull, 1, 256);
#if FS_PING_PONG
    fs_mbar_init(&order[0], 1);
    fs_mbar_init(&order[1], 1);
    fs_mbar_init_fence();
#endif
  }
  __syncthreads();
#if FS_CLUSTER > 1
  fs_cluster_sync();  // every block's barriers exist before a peer's copy or arrival names them
#endif

  const fs_i64 n_tiles = (p.rows + FS_TN - 1) / FS_TN;
  // H's maps and the rows of their boxes (tma_boxes.cuh).
  [[maybe_unused]] const fs_tma_h_maps hmaps{&tmap_h, &tmap_ht, fs_tma_h_box_rows(p.rows, FS_TN, FS_CLUSTER),
                                             fs_tma_h_tail_rows(p.rows, FS_TN, FS_CLUSTER), n_tiles - 1};
  const fs_i64 groups = fs_cluster_groups(p.num_vtiles, n_tiles, FS_CLUSTER);
  [[maybe_unused]] const fs_i64 first = blockIdx.x / FS_CLUSTER, step = gridDim.x / FS_CLUSTER;
  const int ktiles = (int)((p.hidden_dim + FS_TD - 1) / FS_TD);
#if FS_STREAM_K
  // Whole tiles, then the last waves cut along the depth (stream_k.cuh).
  const fs_sk_schedule sched = fs_sk_make(groups, ktiles, (int)gridDim.x);
#endif

  // The epilogue's threads: warpgroups 3 (and 4), or warps 1-3 of warpgroup 0 (w12x1).
  [[maybe_unused]] const int epi_thread = FS_SHARED_WG0 ? (int)threadIdx.x - 32 : (int)threadIdx.x - 384;
  if (FS_PRODUCER_WG ? wg == 0 : threadIdx.x < 32) {
    // Producer: every stage of every tile of this block, in order.
#if FS_STREAM_K
#if FS_PRODUCER_WG
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
#endif
    if (threadIdx.x == 0)
      fs_tma_produce_sk<FS_TV, FS_TN, FS_TD, FS_STAGES>(&tmap_w, hmaps, Ws, Hs, full, empty, n_tiles, sched);
#elif !FS_PRODUCER_WG
    if (threadIdx.x == 0)
      fs_tma_produce<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_CLUSTER>(&tmap_w, hmaps, Ws, Hs, full, empty, n_tiles,
                                                                 groups, ktiles);
#else
    fs_tma_producer_warpgroup<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_CLUSTER>(&tmap_w, hmaps, Ws, Hs, full, empty,
                                                                          n_tiles, groups, ktiles);
#endif
  } else if (wg == 1 || wg == 2) {
#if FS_PRODUCER_WG && FS_CONSUMER_REGS != 128
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(FS_CONSUMER_REGS));
#endif
    // c from lane 0: the compiler then knows it is warp-uniform and keeps the
    // descriptor arithmetic of the k-loop in uniform registers (no R2UR
    // moves competing with the epilogue warps for the issue slots).
    const int c = __shfl_sync(0xffffffffu, wg - 1, 0), wq = tid >> 5, lane = tid & 31;
    float acc[FS_MI][FS_NACC];
#pragma unroll
    for (int i = 0; i < FS_MI; ++i)
#pragma unroll
      for (int j = 0; j < FS_NACC; ++j) acc[i][j] = 0.0f;
    // Consumer c's rows of the first 64-column box of stage 0 (boxes are [T_V][64]).
    // Boxes of fs_tma_box_cols(T_d) columns: 64- (T_d = 32) or 128-byte swizzled rows.
    constexpr int box_cols = fs_tma_box_cols(FS_TD);
    const fs_u64 dw0 = fs_wgmma_desc<2 * box_cols>(fs_smem_addr(Ws + (FS_PING_PONG ? 0 : c) * FS_MI * 64 * box_cols)),
                 dh0 = fs_wgmma_desc<2 * box_cols>(fs_smem_addr(Hs));
    fs_ring_pos<FS_STAGES> pos;
    fs_i64 j = 0;   // the block's tile number
#if FS_STREAM_K && FS_REG_EPILOGUE
    // Stream-K with the register epilogue: the consumers walk the block's
    // units (stream_k.cuh) and sample every tile they finish, whole or a
    // head (after adding its tail's partial sums); a tail only hands its
    // partial sums on. The block's first sampled tile folds every group's
    // lead first (it is the block's first unit whenever any tile is dealt
    // whole: every block then has one), as the plain loop's first tile does.
    unsigned char* const mybuf = rebuf + c * fs_re_bytes(FS_MI, FS_TN);  // its words and row values
    fs_re_col<FS_MI> rc[fs_re_cols(FS_TN)];  // columns tid (< T_N) and (T_N > 128) tid + 128; rows kept from tile to tile
    const int ct = (int)threadIdx.x - 128;  // consumer thread 0..255
    fs_sk_walk at = fs_sk_walk_start(sched, (int)blockIdx.x);
    fs_sk_unit u;
    // The block's first sampled unit: its first, or its second if the first is a tail.
    const int lead_unit = at.dp_end == 0 && at.at % ktiles != 0 ? 1 : 0;
    for (; fs_sk_walk_next(at, u); ++j) {
      // A tail's k-loop runs without the hook (it samples nothing; one loop for both: a second copy spilled).
      const bool tail = fs_sk_is_tail(u);
      const fs_i64 v0 = (u.tile / n_tiles) * FS_TV + c * FS_MI * 64, n0 = (u.tile % n_tiles) * FS_TN;
      if (!tail) fs_re_words_before<FS_MI, FS_TN>(rc, p, v0, n0 + tid, mybuf, tid);
      const fs_re_prefetch<FS_MI, FS_TN> prep{rc, p, n0 + tid, mybuf, tid, u.k1 - u.k0};
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC>(acc, full, empty, pos, dw0, dh0, u.k1 - u.k0,
                                                                          1000000 + j * ktiles, nullptr,
                                                                          fs_hook_if<decltype(prep)>{prep, !tail}, true);
      if (tail) {  // the rest of a tile another block finishes
        fs_sk_put_partial<FS_MI, FS_NACC, false>(acc, p, (int)blockIdx.x, ct);
        continue;
      }
      if (fs_sk_is_head(u, ktiles)) fs_sk_add_partial(acc, p, (int)blockIdx.x - 1, ct);
      fs_re_tile<FS_MI, FS_NACC, FS_TN>(acc, p, v0, n0, mybuf, c, wq, lane, j == lead_unit, rc);
    }
#elif FS_STREAM_K
    const int ct = (int)threadIdx.x - 128;  // consumer thread 0..255
    fs_sk_walk at = fs_sk_walk_start(sched, (int)blockIdx.x);
    fs_sk_unit u;
    while (fs_sk_walk_next(at, u)) {
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC>(acc, full, empty, pos, dw0, dh0, u.k1 - u.k0,
                                                                          1000000 + j * ktiles);
      if (fs_sk_is_tail(u)) {  // the rest of a tile another block finishes
        fs_sk_put_partial(acc, p, (int)blockIdx.x, ct);
        continue;
      }
      if (fs_sk_is_head(u, ktiles)) fs_sk_add_partial(acc, p, (int)blockIdx.x - 1, ct);
      fs_mbar_wait(lfree, (unsigned)((j & 1) ^ 1), 3000000 + j);
      fs_wgmma_stage_logits<FS_MI, FS_NACC, FS_TN, FS_L_GLOBAL ? FS_TN : FS_LDL, FS_L_SWZ, FS_L_GLOBAL>(
          acc, L, 0, c * FS_MI * 64, wq, lane);
      if (ct == 0) *ltile = u.tile;
      fs_mbar_arrive(lfull);
      ++j;
    }
    fs_mbar_wait(lfree, (unsigned)((j & 1) ^ 1), 3000000 + j);
    if (ct == 0) *ltile = -1;  // done
    fs_mbar_arrive(lfull);
#elif FS_PING_PONG
    // Ping-pong: consumer c multiplies and samples whole tiles, the block's
    // tiles j = c, c + 2, ...; the ring holds the tiles' stages in order, so
    // c skips the other consumer's ktiles stages. It starts tile j once the
    // other consumer issued tile j - 1's last MMAs (order[c]): the MMAs of the
    // two take turns and each consumer samples while the other multiplies;
    // and every stage c waits for is then at most one lap of the ring ahead
    // (so a parity wait cannot pass on an older phase).
    unsigned order_phase = 0;
    unsigned char* const mybuf = rebuf + c * fs_re_bytes(FS_MI, FS_TN);  // its words and row values
    fs_re_col<FS_MI> rc[fs_re_cols(FS_TN)];  // columns tid (< T_N) and (T_N > 128) tid + 128; rows kept from tile to tile
    pos = fs_ring_pos<FS_STAGES>((long long)c * ktiles);
    for (fs_i64 g = first + c * step; g < groups; g += 2 * step, j += 2) {
      // Consumer 0's first tile folds every group's lead first (the rows' bounds). In a cluster an
      // empty tile (past the vocabulary) is sampled too: no candidate (every one is checked against V).
      const fs_tile_ref t = fs_cluster_tile(g, (int)(blockIdx.x % FS_CLUSTER), n_tiles, FS_CLUSTER);
      const fs_i64 v0 = t.vtile * FS_TV, n0 = t.ntile * FS_TN;
      fs_re_words_before<FS_MI, FS_TN>(rc, p, v0, n0 + tid, mybuf, tid);  // while the other consumer multiplies
      if (j + c > 0) {
        fs_mbar_wait(&order[c], order_phase, 5000000 + j);
        order_phase ^= 1u;
      }
      const bool leads = c == 0 && j == 0;
      const fs_re_prefetch<FS_MI, FS_TN> prep{rc, p, n0 + tid, mybuf, tid, ktiles};
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC, FS_CLUSTER>(
          acc, full, empty, pos, dw0, dh0, ktiles, 1000000 + (j * 2 + c) * ktiles, &order[c ^ 1], prep, true);
      pos = fs_ring_pos<FS_STAGES>((long long)(j + c + 2) * ktiles);  // its next tile: the block's j + c + 2
      fs_re_tile<FS_MI, FS_NACC, FS_TN>(acc, p, v0, n0, mybuf, c, wq, lane, leads, rc);
    }
#elif FS_REG_EPILOGUE
    // The consumers sample their accumulators themselves (their inputs made
    // during the MMAs); the block's first tile first folds every group's
    // lead, which sets the rows' bounds. In a cluster an empty tile (past the
    // vocabulary, sharing H) is sampled too, as with ping-pong: no candidate.
    unsigned char* const mybuf = rebuf + c * fs_re_bytes(FS_MI, FS_TN);  // its words and row values
    fs_re_col<FS_MI> rc[fs_re_cols(FS_TN)];  // columns tid (< T_N) and (T_N > 128) tid + 128; rows kept from tile to tile
    for (fs_i64 g = first; g < groups; g += step, ++j) {
      const fs_tile_ref t = fs_cluster_tile(g, (int)(blockIdx.x % FS_CLUSTER), n_tiles, FS_CLUSTER);
      const fs_i64 v0 = t.vtile * FS_TV + c * FS_MI * 64, n0 = t.ntile * FS_TN;
      fs_re_words_before<FS_MI, FS_TN>(rc, p, v0, n0 + tid, mybuf, tid);
      const fs_re_prefetch<FS_MI, FS_TN> prep{rc, p, n0 + tid, mybuf, tid, ktiles};
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC, FS_CLUSTER>(
          acc, full, empty, pos, dw0, dh0, ktiles, 1000000 + j * ktiles, nullptr, prep, true);
      fs_re_tile<FS_MI, FS_NACC, FS_TN>(acc, p, v0, n0, mybuf, c, wq, lane, j == 0, rc);
    }
#else
    for (fs_i64 g = first; g < groups; g += step, ++j) {
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC, FS_CLUSTER>(acc, full, empty, pos, dw0, dh0,
                                                                                      ktiles, 1000000 + j * ktiles);
      // Hand the tile's logits to the epilogue once it has read the previous
      // tile's (for j = 0 the wait on the preceding parity passes at once).
      fs_mbar_wait(lfree, (unsigned)((j & 1) ^ 1), 3000000 + j);
      // [T_N][T_V] swizzled in shared memory, or [T_V][T_N] in global memory (FS_L_GLOBAL).
      fs_wgmma_stage_logits<FS_MI, FS_NACC, FS_TN, FS_L_GLOBAL ? FS_TN : FS_LDL, FS_L_SWZ, FS_L_GLOBAL>(
          acc, L, 0, c * FS_MI * 64, wq, lane);
      fs_mbar_arrive(lfull);
    }
#endif
  } else {
#if !FS_REG_EPILOGUE  // (no epilogue warps: warpgroups 0-2 are the producer's and the consumers')
#if !FS_SHARED_WG0
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(FS_EPILOGUE_REGS));
#endif
    fs_own_epilogue epi(epi_thread);  // 0 .. 32 FS_EPI_WARPS - 1
    fs_i64 j = 0;
#if FS_STREAM_K
    for (;; ++j) {
      fs_mbar_wait(lfull, (unsigned)(j & 1), 4000000 + j);
      const fs_i64 t = *ltile;
      if (t < 0) break;
      epi.tile(L, p, (t / n_tiles) * FS_TV, (t % n_tiles) * FS_TN);
      fs_mbar_arrive(lfree);
    }
#else
    for (fs_i64 g = first; g < groups; g += step, ++j) {
      const fs_tile_ref t = fs_cluster_tile(g, (int)(blockIdx.x % FS_CLUSTER), n_tiles, FS_CLUSTER);
      fs_mbar_wait(lfull, (unsigned)(j & 1), 4000000 + j);
      if (t.vtile < p.num_vtiles) epi.tile(L, p, t.vtile * FS_TV, t.ntile * FS_TN);
      fs_mbar_arrive(lfree);
    }
#endif
    epi.finish(p);
#endif
  }
#if FS_CLUSTER > 1
  fs_cluster_sync();  // no block leaves while a peer may still signal it
#endif
  fs_grid_finish(p);
}
