// tma_boxes.cuh: the boxes of the operand tensor maps of the TMA-fed kernels
// (wgmma_ws, wgmma_coop): how many columns and rows one bulk tensor copy
// brings. One definition for the kernels (tma_producer.cuh, the wgmma
// descriptors' row bytes) and for the launch that encodes the maps
// (runtime/sampler.cpp, runtime/tensor_maps.cpp).
#pragma once
#include "cluster_tiles.cuh"

// Columns of one box of a TD-deep stage: 64 (128-byte swizzled rows) for
// TD >= 64 (TD / 64 boxes side by side), else TD (TD = 32: one box of
// 64-byte swizzled rows).
FS_HD constexpr int fs_tma_box_cols(int td) { return td < 64 ? td : 64; }

// Rows of the box of an operand with `rows` rows per tile: a slice
// (cluster_tiles.cuh) if the blocks of a cluster share it, else the whole tile.
FS_HD int fs_tma_box_rows(int rows, bool shared, int cluster) {
  return shared ? rows / fs_cluster_slices(rows, cluster) : rows;
}

// Rows of H one copy brings for a batch of n rows in tiles of tn (no
// cluster): with a single batch tile (n < tn) only the batch's rows, rounded
// up to 8 (one 1024-byte swizzle atom of 128-byte rows), else the whole tile.
// Boxes reaching past the tensor are filled by the copy engine, and that fill
// was slow: on an H200 a 256-row box of which 160 rows lay past N made an
// N = 96 launch 1.8 x slower than the same kernel on zero-padded H
// (BENCHMARKS.md, session 34). The stage rows past the box keep stale data;
// the MMAs turn them into logits of columns past N, which nothing samples.
// This is the box of the head map, which copies every batch tile but the last.
FS_HD constexpr int fs_tma_h_box_rows(fs_i64 n, int tn, int cluster) {
  return cluster == 1 && n < tn ? (int)((n + 7) / 8 * 8) : tn;
}

// The box of the tail map, which copies the last batch tile of the n rows:
// that tile's rows, rounded up to 8 (no cluster; in a cluster the head
// map's box). With one batch tile it is fs_tma_h_box_rows; with several,
// a partial last tile (n = 300 in tiles of 160: 140 rows) is copied without
// reaching past the tensor (session 35).
FS_HD constexpr int fs_tma_h_tail_rows(fs_i64 n, int tn, int cluster) {
  const fs_i64 last = n - (n - 1) / tn * tn;  // the last tile's rows, 1..tn
  return cluster == 1 ? (int)((last + 7) / 8 * 8) : tn;
}
