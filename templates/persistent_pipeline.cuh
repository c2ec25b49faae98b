// persistent_pipeline.cuh: the main loop shared by the fused kernels. Each
// block walks its tiles (tile = blockIdx.x, += gridDim.x; tile = vtile *
// n_tiles + ntile so the batch tiles of one W tile run side by side) and the
// k-slices of each as ONE flat sequence of pipeline stages, so the loads of
// the next tile are already in flight while this tile's epilogue runs.
//   load(stage, vtile, ntile, kt)  issue cp.async for one stage (no commit)
//   compute(stage)                 accumulate one staged slice
//   finish(vtile, ntile)           the tile's accumulators are complete
// LAG = 1 lets compute() return with its own MMAs still running (wgmma): the
// loads then run STAGES-2 stages ahead and refill the stage computed two
// iterations ago, which the previous compute() waited for.
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"

template <int STAGES, int TN, int TD, int LAG = 0, class Load, class Compute, class Finish>
__device__ __forceinline__ void fs_persistent_pipeline(const fs_fused_params& p, Load load, Compute compute,
                                                       Finish finish) {
  const fs_i64 n_tiles = (p.rows + TN - 1) / TN;
  const fs_i64 total_tiles = (fs_i64)p.num_vtiles * n_tiles;
  const fs_i64 first = blockIdx.x;
  if (first >= total_tiles) return;
  const int ktiles = (int)((p.hidden_dim + TD - 1) / TD);
  const fs_i64 total_iters = ((total_tiles - 1 - first) / gridDim.x + 1) * ktiles;

  static_assert(LAG == 0 || LAG == 1, "LAG is 0 or 1");
  static_assert(STAGES - 2 - LAG >= 0, "too few stages for LAG");
  // Loader cursor: runs STAGES-1-LAG iterations ahead of the compute cursor.
  fs_i64 ld_it = 0, ld_tile = first;
  int ld_kt = 0, ld_stage = 0;
  int ld_vt = (int)(first / n_tiles), ld_nt = (int)(first % n_tiles);
  auto issue = [&]() {
    if (ld_it < total_iters) {
      load(ld_stage, ld_vt, ld_nt, ld_kt);
      ++ld_it;
      if (++ld_kt == ktiles) {
        ld_kt = 0;
        ld_tile += gridDim.x;
        ld_vt = (int)(ld_tile / n_tiles);
        ld_nt = (int)(ld_tile % n_tiles);
      }
    }
    fs_cp_async_commit();
    ld_stage = ld_stage + 1 == STAGES ? 0 : ld_stage + 1;
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1 - LAG; ++s) issue();

  int stage = 0;
  for (fs_i64 tile = first; tile < total_tiles; tile += gridDim.x) {
    for (int kt = 0; kt < ktiles; ++kt) {
      fs_cp_async_wait<STAGES - 2 - LAG>();
      __syncthreads();
      issue();  // into the stage computed 1 + LAG iterations ago
      compute(stage);
      stage = stage + 1 == STAGES ? 0 : stage + 1;
    }
    finish((int)(tile / n_tiles), (int)(tile % n_tiles));
  }
  fs_cp_async_wait<0>();
}
