#!/usr/bin/env python3
"""ring_trace.py: turns the working tree into a ring-occupancy build of the
TMA-fed kernels (wgmma_coop, every spec). Test builds only; revert with
`git checkout templates runtime` (commit or stash wanted edits first).

Does the stage ring run empty (the consumers wait for bytes: the copies are
what limits) or full (the producer waits for a free stage: the consumers
are)? Before each wait on a stage's `full` barrier (the first thread of
consumer warpgroup 1) and on its `empty` barrier (the producer's thread),
a non-blocking mbarrier.test_wait asks whether the phase is already done;
if not, the thread waits as usual and adds the clock64 cycles it waited.
Per block: waits, waits that found the stage not ready, cycles spent in
those, and the consumer's tile-loop start and end (clock64). Before the 8th
launch of a loaded module the host resets the counters; after it, it prints
one line to stderr:
  RING [spec] blocks B: consumer k-steps K, not full at X % (Y % of its loop's cycles, M cycles each);
  producer stages P, not free at X % (Y % of the consumer loop's cycles, M cycles each)
Use --fs_reps >= 8 (one launch per repetition).
  python3 scripts/ring_trace.py && cmake --build build -j2 && cp build/fusedsample_bench build/bench_ring
  git checkout templates runtime && cmake --build build -j2
  # device: FUSEDSAMPLE_CACHE_DIR=/tmp/cr ./build/bench_ring --fs_rows=1,32 --fs_reps=10 2>&1 | grep RING
"""
import functools, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tree_patch  # noqa: E402

edit = functools.partial(tree_patch.edit, "ring_trace.py")

COUNTERS = r'''// ring_trace.py: per block [0] consumer waits on `full`, [1] of them not ready, [2] cycles waited in those;
// [3..5] the producer's waits on `empty` alike; [6] [7] the consumer's tile loop start and end (clock64).
__shared__ unsigned long long fs_ring_smem[8];
__device__ unsigned long long fs_ring_buf[1024 * 8];
__device__ __forceinline__ void fs_ring_wait(fs_u64* bar, unsigned parity, int slot) {
  unsigned ready = 0;
  asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ready)
               : "r"(fs_smem_addr(bar)), "r"(parity)
               : "memory");
  const long long t0 = clock64();
  if (!ready) fs_mbar_wait(bar, parity);
  if (threadIdx.x == 0 || threadIdx.x == 128) {
    fs_ring_smem[slot] += 1;
    if (!ready) {
      fs_ring_smem[slot + 1] += 1;
      fs_ring_smem[slot + 2] += (unsigned long long)(clock64() - t0);
    }
  }
}
__device__ __forceinline__ void fs_ring_flush(int first, int count) {
  if (blockIdx.x < 1024)
    for (int i = first; i < first + count; ++i) fs_ring_buf[blockIdx.x * 8 + i] = fs_ring_smem[i];
}

// Barrier `id` (1..15) among `threads` threads'''

edit("templates/mbarrier.cuh", [("// Barrier `id` (1..15) among `threads` threads", COUNTERS)])
edit("templates/tma_producer.cuh", [
    ("  if (round > 0) fs_mbar_wait(&empty[st], (unsigned)((round - 1) & 1), it);\n",
     "  if (round > 0) fs_ring_wait(&empty[st], (unsigned)((round - 1) & 1), 3);\n  (void)it;\n"),
    ("    fs_mbar_wait(&full[pos.st], pos.phase, tag0 + kt);\n",
     "    fs_ring_wait(&full[pos.st], pos.phase, 0);\n    (void)tag0;\n"),
])
edit("templates/fused_wgmma_coop.cuh", [
    ("    // Producer: every stage of every tile of this block, in order.\n",
     "    // Producer: every stage of every tile of this block, in order.\n"
     "    if (threadIdx.x == 0) fs_ring_smem[3] = fs_ring_smem[4] = fs_ring_smem[5] = 0;\n"),
    ("  } else if (wg == 1 || wg == 2) {\n",
     "    if (threadIdx.x == 0) fs_ring_flush(3, 3);\n  } else if (wg == 1 || wg == 2) {\n"),
    ("    const int c = __shfl_sync(0xffffffffu, wg - 1, 0), wq = tid >> 5, lane = tid & 31;\n",
     "    const int c = __shfl_sync(0xffffffffu, wg - 1, 0), wq = tid >> 5, lane = tid & 31;\n"
     "    if (threadIdx.x == 128) {\n"
     "      fs_ring_smem[0] = fs_ring_smem[1] = fs_ring_smem[2] = 0;\n"
     "      fs_ring_smem[6] = (unsigned long long)clock64();\n    }\n"),
    ("  } else {\n#if !FS_REG_EPILOGUE  // (no epilogue warps",
     "    if (threadIdx.x == 128) {\n      fs_ring_smem[7] = (unsigned long long)clock64();\n"
     "      fs_ring_flush(0, 3);\n      fs_ring_flush(6, 2);\n    }\n"
     "  } else {\n#if !FS_REG_EPILOGUE  // (no epilogue warps"),
])
tree_patch.add_eighth_launch_hook("ring_trace.py", "ring_tick", "fs_ring_buf", 8192, "0", r'''  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, loop = 0;
  int blocks = 0;
  for (int b = 0; b < 1024; ++b) {
    const unsigned long long* r = h + 8 * b;
    if (r[7] <= r[6]) continue;  // no consumer loop recorded (no tile, or past the 1024th block)
    ++blocks;
    for (int i = 0; i < 6; ++i) s[i] += double(r[i]);
    loop += double(r[7] - r[6]);
  }
  const auto pct = [](double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; };
  const auto per = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  fmt::print(stderr, "RING [{}] blocks {}: consumer k-steps {:.0f}, not full at {:.1f} % ({:.1f} % of its loop's "
             "cycles, {:.0f} cycles each); producer stages {:.0f}, not free at {:.1f} % ({:.1f} % of the consumer "
             "loop's cycles, {:.0f} cycles each)\n", kernel_->spec.to_string(), blocks, s[0], pct(s[1], s[0]),
             pct(s[2], loop), per(s[2], s[1]), s[3], pct(s[4], s[3]), pct(s[5], loop), per(s[5], s[4]));
''')
print("ring_trace.py: ring-occupancy build applied; revert with: git checkout templates runtime")
