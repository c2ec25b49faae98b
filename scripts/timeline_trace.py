#!/usr/bin/env python3
"""timeline_trace.py: turns the working tree into a launch-timeline build of
the wgmma_coop kernels (every spec of that variant). Test builds only; revert
with `git checkout templates runtime` (commit or stash wanted edits first).

Thread 0 of every block stamps %globaltimer (ns) at four events: kernel entry,
the start and the end of consumer warpgroup 1's tile loop, and the block's
exit (after fs_grid_finish, so the last block's exit includes the final
reduction); the kernel keeps each event's earliest and latest stamp. Before
the 8th launch of a loaded module the host resets them; after it, it prints
one line to stderr (TIMELINE ...) with each event's first and last stamp in
µs after the first block's entry: how long the blocks take to start, to reach
their tile loop, how far apart they finish it, and what follows. Compare the
last exit with the benchmark's event-timed median (a launch per repetition,
so use --fs_reps >= 8).
Session 22 used it (BENCHMARKS.md "Session 22"):
  python3 scripts/timeline_trace.py && cmake --build build -j2 && cp build/fusedsample_bench build/bench_timeline
  git checkout templates runtime && cmake --build build -j2
  # device: FUSEDSAMPLE_CACHE_DIR=/tmp/ct ./build/bench_timeline --fs_rows=1,256 --fs_reps=10 2>&1 | grep TIMELINE
"""
import functools, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tree_patch  # noqa: E402

edit = functools.partial(tree_patch.edit, "timeline_trace.py")

MARK = r'''__device__ unsigned long long fs_timeline_buf[8];  // per event: earliest, latest %globaltimer
__device__ __forceinline__ void fs_timeline_mark(int e) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  atomicMin(fs_timeline_buf + 2 * e, t);
  atomicMax(fs_timeline_buf + 2 * e + 1, t);
}
#ifndef FS_CLUSTER
'''

edit("templates/fused_wgmma_coop.cuh", [
    ("#ifndef FS_CLUSTER\n", MARK),
    ("  unsigned char* fs_smem = fs_smem_align_1024(fs_smem_raw);\n",
     "  if (threadIdx.x == 0) fs_timeline_mark(0);\n  unsigned char* fs_smem = fs_smem_align_1024(fs_smem_raw);\n"),
    ("    const int c = __shfl_sync(0xffffffffu, wg - 1, 0), wq = tid >> 5, lane = tid & 31;\n",
     "    const int c = __shfl_sync(0xffffffffu, wg - 1, 0), wq = tid >> 5, lane = tid & 31;\n"
     "    if (threadIdx.x == 128) fs_timeline_mark(1);\n"),
    ("  } else {\n#if !FS_REG_EPILOGUE  // (no epilogue warps",
     "    if (threadIdx.x == 128) fs_timeline_mark(2);\n  } else {\n#if !FS_REG_EPILOGUE  // (no epilogue warps"),
    ("  fs_grid_finish(p);\n}", "  fs_grid_finish(p);\n  if (threadIdx.x == 0) fs_timeline_mark(3);\n}"),
])
tree_patch.add_eighth_launch_hook("timeline_trace.py", "timeline_tick", "fs_timeline_buf", 8, "i % 2 ? 0ull : ~0ull", r'''  const auto us = [&](int i) { return double(h[i] - h[0]) / 1000.0; };
  fmt::print(stderr, "TIMELINE [{}] µs after the first entry: entries {:.1f}-{:.1f}, loop starts {:.1f}-{:.1f}, "
             "loop ends {:.1f}-{:.1f}, exits {:.1f}-{:.1f}\n", kernel_->spec.to_string(), us(0), us(1), us(2), us(3),
             us(4), us(5), us(6), us(7));
''')
print("timeline_trace.py: timeline build applied; revert with: git checkout templates runtime")
