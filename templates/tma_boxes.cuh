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
