#!/usr/bin/env python3
"""phase_trace.py: turns the working tree into a per-warp clock64 trace build of
the register epilogue (wgmma_coop ... re, not pp). Test builds only; revert with
`git checkout templates runtime` (commit or stash wanted edits first).

The consumer warps of blocks 0 and 66 add up, over every tile after their first,
the cycles of the tile's k-loop (mma) and of each epilogue phase: group maxima
(gmax), row values and the barrier after them (info), the group tests (tests),
the take-up rounds (take) and the end-of-sample barrier (endbar), and the
rounds taken; lane 0 of each warp also splits its take-ups (fs_re_take_group,
the sampled rows' path) into the pick, the shared-memory loads and (since
session 46) the Philox words, then the approximate scores (before session
46: the pick and loads, then the words and approximate scores), and the
exact scores and atomics (whose time
includes other quads' exact scores: the warp runs them in one SIMT stream).
The 8th launch of each loaded module prints the per-tile means to stderr, then
(since session 47) the same phases of each block's first tile, with its lead
pass as a phase of its own (until session 47 with the wait for the other blocks' leads)
(lines starting TRACE; a launch per benchmark repetition, so use
--fs_reps >= 8). Phases are approximate: clock64 does not wait for loads and
shuffles still in flight, so a phase can carry the tail of the one before.
Sessions 21 and 22 used it (BENCHMARKS.md "Session 21", "Session 22"):
  python3 scripts/phase_trace.py && cmake --build build -j2 && cp build/fusedsample_bench build/bench_trace
  git checkout templates runtime && cmake --build build -j2
  # device: FUSEDSAMPLE_CACHE_DIR=/tmp/ct ./build/bench_trace --fs_rows=256 --fs_reps=10 2>&1 | grep TRACE
"""
import functools, pathlib, sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tree_patch  # noqa: E402

edit = functools.partial(tree_patch.edit, "phase_trace.py")

# An asm statement that reads the values, so that the clock64 after it waits for them.
USE4 = ('  { unsigned d; asm volatile("{.reg .f32 t; add.f32 t, %1, %2; add.f32 t, t, %3; add.f32 t, t, %4; '
        'mov.b32 %0, t;}" : "=r"(d) : "f"(l.x), "f"(l.y), "f"(thr), "f"(a));\n'
        '    asm volatile("{.reg .u32 t; xor.b32 t, %1, %2; xor.b32 t, t, %3; xor.b32 t, t, %4; mov.b32 %0, t;}" : "=r"(d) '
        ': "r"(key.c4), "r"(d), "r"(c[0].v[0] ^ c[0].v[1] ^ c[0].v[2] ^ c[0].v[3]), '
        '"r"(c[1].v[0] ^ c[1].v[1] ^ c[1].v[2] ^ c[1].v[3])); }\n')
USE2 = '  { unsigned d; asm volatile("{.reg .f32 t; add.f32 t, %1, %2; mov.b32 %0, t;}" : "=r"(d) : "f"(st[0]), "f"(st[1])); }\n'

edit("templates/epilogue_registers.cuh", [
    ("                                                 int col, fs_i64 vg, int s, const float* info, fs_u32 gw, int lane) {\n"
     "  const float2 l = fs_re_pick<NACC>(acc, col);",
     "                                                 int col, fs_i64 vg, int s, const float* info, fs_u32 gw, int lane,\n"
     "                                                 long long* tr) {\n"
     "  const long long t0 = clock64();\n"
     "  const float2 l = fs_re_pick<NACC>(acc, col);"),
    ("  const int lead = fs_group_lead(gw);\n  fs_u32 word[2];",
     "  const int lead = fs_group_lead(gw);\n" + USE4 +
     "  const long long t1 = clock64();\n  if (tr) tr[8] += t1 - t0;\n  fs_u32 word[2];"),
    ("(v & 15) == lead));\n  }\n",
     "(v & 15) == lead));\n  }\n" + USE2 +
     "  const long long t2 = clock64();\n  if (tr) tr[9] += t2 - t1;\n  bool ex = false;\n"),
    ("    if (v >= p.vocab || st[h] < thr) continue;  // below the threshold: the exact score is below B\n",
     "    if (v >= p.vocab || st[h] < thr) continue;  // below the threshold: the exact score is below B\n    ex = true;\n"),
    ("    if (sc == sc && !(sc < thr)) fs_fold_candidate(best, fs_pack_candidate(sc, v));\n  }\n}",
     "    if (sc == sc && !(sc < thr)) fs_fold_candidate(best, fs_pack_candidate(sc, v));\n  }\n"
     "  if (tr) {\n    tr[10] += clock64() - t2;\n    tr[11] += __any_sync(0x11111111u << (lane & 3), ex) ? 1 : 0;\n"
     "    tr[12] += 1;\n  }\n}"),
    ("words[(mi * 4 + wq) * TN + col], lane);", "words[(mi * 4 + wq) * TN + col], lane, tr);"),

    ("                                           fs_re_col<MI> (&rc)[fs_re_cols(TN)]) {",
     "                                           fs_re_col<MI> (&rc)[fs_re_cols(TN)], long long* tr = nullptr) {\n"
     "  long long tc = clock64(), tn;\n"
     "#define FS_TR(i) do { tn = clock64(); if (tr) tr[i] += tn - tc; tc = tn; } while (0)"),
    ("  float gmax[H];", "  FS_TR(1);\n  float gmax[H];"),
    ("    fs_named_barrier(2 + c, 128);\n    if (leads) {", "    fs_named_barrier(2 + c, 128);\n    FS_TR(2);\n    if (leads) {"),
    ("    // 3. The lane's MI x H (column, group) tests", "    FS_TR(13);\n    // 3. The lane's MI x H (column, group) tests"),
    ("#pragma unroll\n    for (int mi = 0; mi < MI; ++mi) {\n      // 4. The passing",
     "    FS_TR(3);\n#pragma unroll\n    for (int mi = 0; mi < MI; ++mi) {\n      // 4. The passing"),
    ("        if (!mine) continue;", "        if (tr) tr[6] += 1;\n        if (!mine) continue;"),
    ("    fs_named_barrier(2 + c, 128);  // the words and bounds are read",
     "    FS_TR(4);\n    fs_named_barrier(2 + c, 128);  // the words and bounds are read"),
    ("  // The accumulators are left as they are: the next", "  FS_TR(5);\n#undef FS_TR\n  // The accumulators are left as they are: the next"),
])
edit("templates/fused_wgmma_coop.cuh", [
    ("#ifndef FS_CLUSTER\n", "__device__ unsigned long long fs_trace_buf[2 * 16 * 15];\n#ifndef FS_CLUSTER\n"),
    ("""    fs_re_col<FS_MI> rc[fs_re_cols(FS_TN)];  // columns tid (< T_N) and (T_N > 128) tid + 128; rows kept from tile to tile
    for (fs_i64 g = first; g < groups; g += step, ++j) {""",
     """    fs_re_col<FS_MI> rc[fs_re_cols(FS_TN)];  // columns tid (< T_N) and (T_N > 128) tid + 128; rows kept from tile to tile
    long long tr[14] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, tr0[14] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const long long tstart = clock64();
    for (fs_i64 g = first; g < groups; g += step, ++j) {"""),
    ("""      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC, FS_CLUSTER>(
          acc, full, empty, pos, dw0, dh0, ktiles, 1000000 + j * ktiles, nullptr, prep, true);
      fs_re_tile<FS_MI, FS_NACC, FS_TN>(acc, p, v0, n0, mybuf, c, wq, lane, j == 0, rc);
    }""",
     """      const long long ta = clock64();
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES, FS_MI, FS_NACC, FS_CLUSTER>(
          acc, full, empty, pos, dw0, dh0, ktiles, 1000000 + j * ktiles, nullptr, prep, true);
      (j > 0 ? tr : tr0)[0] += clock64() - ta;
      fs_re_tile<FS_MI, FS_NACC, FS_TN>(acc, p, v0, n0, mybuf, c, wq, lane, j == 0, rc, j > 0 ? tr : tr0);
      if (j > 0) tr[7] += 1;
    }
    const long long ttot = clock64() - tstart;
    if (lane == 0 && (blockIdx.x == 0 || blockIdx.x == 66)) {
      unsigned long long* const b = fs_trace_buf + ((blockIdx.x ? 8 : 0) + c * 4 + wq) * 15;
      for (int i = 0; i < 8; ++i) atomicAdd(b + i, (unsigned long long)tr[i]);
      atomicAdd(b + 8, (unsigned long long)ttot);
      atomicAdd(b + 9, 1ull);
      for (int i = 8; i < 13; ++i) atomicAdd(b + 2 + i, (unsigned long long)tr[i]);
      unsigned long long* const b0 = b + 16 * 15;  // the block's first tile (tr0[13]: its lead pass)
      for (int i = 0; i < 7; ++i) atomicAdd(b0 + i, (unsigned long long)tr0[i]);
      atomicAdd(b0 + 7, (unsigned long long)tr0[13]);
      for (int i = 8; i < 13; ++i) atomicAdd(b0 + 2 + i, (unsigned long long)tr0[i]);
    }"""),
])
tree_patch.add_launch_hook("phase_trace.py", "trace_tick", "  if (++launches_ != 8) return;\n" +
                           tree_patch.read_device_buffer("fs_trace_buf", 480) + r'''  cu->cuMemcpyDtoH(h, ptr, bytes);
  fmt::print(stderr, "TRACE [{}] cycles per tile after the first; w = 8 x block (0 or 66) + 4 x consumer + warp\n",
             kernel_->spec.to_string());
  for (int w = 0; w < 16; ++w) {
    const unsigned long long* r = h + w * 15;
    const double t = r[7] ? double(r[7]) : 1.0;
    fmt::print(stderr, "TRACE w{:2} launches {} tiles/launch {:.1f} mma {:.0f} gmax {:.0f} info {:.0f} tests {:.0f} "
               "take {:.0f} endbar {:.0f} rounds {:.2f} total/tile {:.0f}\n", w, r[9], r[7] / double(r[9] ? r[9] : 1),
               r[0] / t, r[1] / t, r[2] / t, r[3] / t, r[4] / t, r[5] / t, r[6] / t, r[8] / (t + r[9]));
    const double calls = r[14] ? double(r[14]) : 1.0;
    fmt::print(stderr, "TRACE w{:2} lane 0's take-ups {}, cycles each: pick+loads+philox {:.0f} approx {:.0f} "
               "exact+atomics {:.0f} (an exact score in its quad in {:.0f}% of them)\n", w, r[14], r[10] / calls,
               r[11] / calls, r[12] / calls, 100.0 * r[13] / calls);
  }
  for (int w = 0; w < 16; ++w) {  // the block's first tile, one per launch
    const unsigned long long* r = h + 240 + w * 15;
    const double t = h[w * 15 + 9] ? double(h[w * 15 + 9]) : 1.0;
    const double calls = r[14] ? double(r[14]) : 1.0;
    fmt::print(stderr, "TRACE first tile w{:2} mma+fill {:.0f} gmax {:.0f} info {:.0f} leads {:.0f} tests {:.0f} "
               "take {:.0f} endbar {:.0f} rounds {:.2f}; lane 0's take-ups {:.1f}, each pick+loads+philox {:.0f} "
               "approx {:.0f} exact+atomics {:.0f}\n", w, r[0] / t, r[1] / t, r[2] / t, r[7] / t, r[3] / t,
               r[4] / t, r[5] / t, r[6] / t, r[14] / t, r[10] / calls, r[11] / calls, r[12] / calls);
  }
''')
print("phase_trace.py: trace build applied; revert with: git checkout templates runtime")
