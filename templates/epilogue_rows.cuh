// epilogue_rows.cuh: how many batch rows of fp32 logits the wgmma kernels
// stage in shared memory per epilogue pass. One definition for the kernels
// (FS_EPI_N) and for KernelSpec::shared_bytes() on the host.
#pragma once
#include "fs_types.cuh"

// wgmma: at most 64 batch rows per pass.
FS_HD constexpr int fs_wgmma_epilogue_rows(int tile_n) { return tile_n < 64 ? tile_n : 64; }

// wgmma_ws: per consumer at most 4096 staged logits, in a multiple of 8 rows
// that divides T_N (8 for anything that is not a valid tile).
FS_HD constexpr int fs_ws_epilogue_rows(int tile_n, int tile_v) {
  if (tile_v <= 0 || tile_n < 8 || tile_n % 8 != 0) return 8;
  int r = 4096 / tile_v < tile_n ? 4096 / tile_v : tile_n;
  r -= r % 8;
  if (r < 8) r = 8;
  while (r > 8 && tile_n % r != 0) r -= 8;
  return r;
}
