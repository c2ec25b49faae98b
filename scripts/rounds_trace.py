#!/usr/bin/env python3
"""rounds_trace.py: turns the working tree into a take-up-count build of the
register epilogue (wgmma_coop "re" specs). Test builds only; revert with
`git checkout templates runtime` (commit or stash wanted edits first).

Lane 0 of every consumer warp counts, per tile and sample, the groups its
warp's tests passed and the take-up rounds the warp ran for them (a round:
each quad of the warp takes up one passing group; a warp runs the rounds of
its busiest quad, for each 64-row block), split into the block's first tile
(whose bound is its leads and those other blocks folded before it) and the later ones, with a histogram
of rounds per warp and tile. Before the 8th launch of a loaded module the host
resets the counts; after it, it prints one line to stderr (ROUNDS ...).
Session 23 used it (BENCHMARKS.md "Session 23"):
  python3 scripts/rounds_trace.py && cmake --build build -j2 && cp build/fusedsample_bench build/bench_rounds
  git checkout templates runtime && cmake --build build -j2
  # device: FUSEDSAMPLE_CACHE_DIR=/tmp/cr ./build/bench_rounds --fs_rows=256 --fs_reps=10 2>&1 | grep ROUNDS
"""
import functools, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tree_patch  # noqa: E402

edit = functools.partial(tree_patch.edit, "rounds_trace.py")

# [0..2] first tiles: warp-tiles, rounds, passing groups; [3..5] later tiles;
# [16 + r] later warp-tiles with r rounds (r < 16, 15 = 15 or more); [32 + r] first tiles.
COUNT = r'''#define FS_PING_PONG 0
#endif
__device__ unsigned long long fs_rounds_buf[48];'''

edit("templates/epilogue_registers.cuh", [
    ("#define FS_PING_PONG 0\n#endif", COUNT),
    ("""    unsigned pend[MI];\n""", """    unsigned pend[MI];
    int fs_rounds = 0, fs_passed = 0;\n"""),
    ("""    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      // 4. The passing groups.""", """    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) fs_passed += __reduce_add_sync(0xffffffffu, (unsigned)__popc(pend[mi]));
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      // 4. The passing groups."""),
    ("""           any = __ballot_sync(0xffffffffu, pend[mi] != 0)) {
        const unsigned mine = any & quad;""", """           any = __ballot_sync(0xffffffffu, pend[mi] != 0)) {
        ++fs_rounds;
        const unsigned mine = any & quad;"""),
    ("""    fs_named_barrier(2 + c, 128);  // the words and bounds are read before the next sample or tile rewrites them""",
     """    if (lane == 0) {
      const int b = leads ? 0 : 3;
      atomicAdd(fs_rounds_buf + b, 1ull);
      atomicAdd(fs_rounds_buf + b + 1, (unsigned long long)fs_rounds);
      atomicAdd(fs_rounds_buf + b + 2, (unsigned long long)fs_passed);
      atomicAdd(fs_rounds_buf + (leads ? 32 : 16) + (fs_rounds < 15 ? fs_rounds : 15), 1ull);
    }
    fs_named_barrier(2 + c, 128);  // the words and bounds are read before the next sample or tile rewrites them"""),
])
tree_patch.add_eighth_launch_hook("rounds_trace.py", "rounds_tick", "fs_rounds_buf", 48, "0", r'''  const auto per = [&](int i, int n) { return h[n] ? double(h[i]) / double(h[n]) : 0.0; };
  std::string first, later;
  for (int r = 0; r < 16; ++r) {
    first += fmt::format(" {}", h[32 + r]);
    later += fmt::format(" {}", h[16 + r]);
  }
  fmt::print(stderr, "ROUNDS [{}] first tiles: {} warp-tiles, {:.2f} rounds and {:.2f} passing groups per warp-tile; "
             "later tiles: {} warp-tiles, {:.3f} rounds and {:.3f} passing groups per warp-tile; "
             "warp-tiles with 0..15+ rounds: first{} | later{}\n", kernel_->spec.to_string(), h[0], per(1, 0),
             per(2, 0), h[3], per(4, 3), per(5, 3), first, later);
''')
print("rounds_trace.py: take-up-count build applied; revert with: git checkout templates runtime")
