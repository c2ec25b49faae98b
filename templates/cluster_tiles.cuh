// cluster_tiles.cuh: which tile each block of a thread-block cluster computes
// in the cooperative kernel (wgmma_coop, FS_CLUSTER = C > 1). The C blocks of
// a cluster always work on C tiles that share one operand, which one block
// loads from L2 and the copy engine multicasts into every block's shared
// memory (cluster.cuh):
//   share W  when C divides the batch tiles: the cluster takes C consecutive
//            batch tiles of one vocabulary tile (N = 256 with T_N = 128);
//   share H  otherwise: C consecutive vocabulary tiles of one batch tile
//            (N <= T_N); a tile past the last vocabulary tile is empty: its
//            block only keeps the cluster in step (zeros in, nothing sampled).
// A group is a cluster's unit of work; groups are dealt out over clusters
// (group = cluster, += clusters) as tiles are over blocks when C = 1, where
// a group is a tile and the mapping is the plain tile = vtile * n_tiles + ntile.
// The shared operand's box is multicast in slices (CUTLASS's scheme): rank r
// of the cluster copies rows [r R / S, (r + 1) R / S) of it (R rows, S
// slices) into every block, so the copies of a stage start from every block's
// producer at once; a slice is whole 8-row swizzle atoms (1024 bytes), and a
// box that does not split so (T_N = 8 shared by two blocks) is copied whole by
// rank 0 (S = 1). The launch encodes the shared operand's tensor map with
// R / S box rows (tma_boxes.cuh).
// One definition for the kernel and for the launch (runtime/sampler.cpp).
#pragma once
#include "fs_types.cuh"

FS_HD bool fs_cluster_shares_w(fs_i64 n_tiles, int cluster) { return cluster > 1 && n_tiles % cluster == 0; }

// Groups of a launch over num_vtiles x n_tiles tiles.
FS_HD fs_i64 fs_cluster_groups(fs_i64 num_vtiles, fs_i64 n_tiles, int cluster) {
  if (cluster <= 1) return num_vtiles * n_tiles;
  if (fs_cluster_shares_w(n_tiles, cluster)) return num_vtiles * (n_tiles / cluster);
  return (num_vtiles + cluster - 1) / cluster * n_tiles;
}

// Slices of a shared box of `rows` rows.
FS_HD int fs_cluster_slices(int rows, int cluster) { return cluster > 1 && rows % (8 * cluster) == 0 ? cluster : 1; }

struct fs_tile_ref {
  fs_i64 vtile, ntile;  // vtile >= the vocabulary's tiles: an empty tile (share H only)
};

// The tile of the block of cluster rank `rank` in group `group`.
FS_HD fs_tile_ref fs_cluster_tile(fs_i64 group, int rank, fs_i64 n_tiles, int cluster) {
  if (cluster <= 1) return fs_tile_ref{group / n_tiles, group % n_tiles};
  if (fs_cluster_shares_w(n_tiles, cluster)) {
    const fs_i64 per_vtile = n_tiles / cluster;
    return fs_tile_ref{group / per_vtile, (group % per_vtile) * cluster + rank};
  }
  return fs_tile_ref{(group / n_tiles) * cluster + rank, group % n_tiles};
}
