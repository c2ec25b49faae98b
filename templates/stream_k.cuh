// stream_k.cuh: the work schedule of wgmma_coop "sk" specs (FS_STREAM_K):
// data-parallel whole tiles, then stream-K for the last waves, so that no
// block runs a whole tile more than another (a launch of 1002 tiles on 132
// blocks otherwise runs 8 rounds for 7.59 rounds of work: 5 % of the time).
//   - the first (T / B - 1) * B tiles are dealt whole, round-robin (tile b,
//     b + B, ...), as the plain kernel deals all of them;
//   - the remaining T - that (between B and 2B tiles) are cut along the
//     depth: their k-steps, tile after tile, form one sequence that is split
//     into B equal ranges, one per block. A range is at least one tile's
//     k-steps long, so a tile is cut at most once: its first k-steps (a
//     "head", the last piece of one range) and the rest (a "tail", the first
//     piece of the next range).
// The block with the head finishes the tile: it adds the tail's partial sums
// (written to p.partials by the tail's block, then flagged in p.sk_flags) to
// its own and runs the epilogue. Ranges are dealt in reverse block order
// (block B-1 takes the first), so the tail of block b's head lies in block
// b - 1's range: a block only ever waits for a lower-numbered block, which the
// hardware started no later than itself, and which computed the tail as the
// first piece of its range, long before the head's block needs it.
// With T a multiple of B, or T <= B, every tile is dealt whole.
// One definition for the kernel and the host tests.
#pragma once
#include "fs_types.cuh"

struct fs_sk_schedule {
  fs_i64 tiles;     // T
  int ktiles;       // k-steps per tile (K)
  int blocks;       // B (the launch's blocks, all resident at once)
  fs_i64 dp_tiles;  // tiles dealt whole, round-robin
  fs_i64 sk_tiles;  // tiles after them, cut along the depth
};

FS_HD fs_sk_schedule fs_sk_make(fs_i64 tiles, int ktiles, int blocks) {
  fs_sk_schedule s{tiles, ktiles, blocks, tiles, 0};
  if (tiles > blocks && tiles % blocks != 0) {
    s.dp_tiles = (tiles / blocks - 1) * blocks;
    s.sk_tiles = tiles - s.dp_tiles;
  }
  return s;
}

// First k-step (of the whole launch's sequence, tile t's k-step k being t K + k)
// of stream-K range r (r = B: the end of the last range).
FS_HD fs_i64 fs_sk_range_begin(const fs_sk_schedule& s, int r) {
  return s.dp_tiles * s.ktiles + s.sk_tiles * s.ktiles * r / s.blocks;
}
// The range of block b (reverse order: see above).
FS_HD int fs_sk_range_of(const fs_sk_schedule& s, int b) { return s.blocks - 1 - b; }

// One piece of a block's work: k-steps [k0, k1) of tile `tile`.
struct fs_sk_unit {
  int tile;
  int k0, k1;
};
// A tail: its partial sums go to the block's slot of p.partials.
FS_HD bool fs_sk_is_tail(const fs_sk_unit& u) { return u.k0 > 0; }
// A head: the tile's tail is in block b - 1's slot (b: this block).
FS_HD bool fs_sk_is_head(const fs_sk_unit& u, int ktiles) { return u.k0 == 0 && u.k1 < ktiles; }

// A block's walk through its units, for the producer and the consumers
// alike: the next k-step as a 32-bit position in the launch's sequence (tile
// t's k-step k is t K + k; the sampler refuses a stream-K launch of 2^31
// k-steps or more) and the end of the block's range. Six ints: the
// register-epilogue consumers run beside 128 accumulators and the sampling's
// state (a 64-bit cursor spilled there), the producer thread on 40 registers.
// Needs B K < 2^31 as well as T K < 2^31: the sampler launches at most one
// block per tile (B <= T).
struct fs_sk_walk {
  int at, end;        // the next k-step; the end of the block's range
  int dp_end, stride;  // the whole tiles' end (T_dp K); B K, from one whole tile of the block to its next
  int sk_begin, ktiles;  // the block's stream-K range's first k-step; K
};

FS_HD fs_sk_walk fs_sk_walk_start(const fs_sk_schedule& s, int b) {
  const int r = fs_sk_range_of(s, b);
  fs_sk_walk w;
  w.sk_begin = (int)fs_sk_range_begin(s, r);
  w.end = (int)fs_sk_range_begin(s, r + 1);
  w.dp_end = (int)s.dp_tiles * s.ktiles;
  w.stride = s.blocks * s.ktiles;
  w.ktiles = s.ktiles;
  w.at = b < s.dp_tiles ? b * s.ktiles : w.sk_begin;
  return w;
}

// The unit at the walk's position, advancing the walk past it; false when
// the block is done.
FS_HD bool fs_sk_walk_next(fs_sk_walk& w, fs_sk_unit& u) {
  if (w.at < w.dp_end) {  // a whole tile, round-robin
    u.tile = w.at / w.ktiles;
    u.k0 = 0;
    u.k1 = w.ktiles;
    // (compared before adding: at + stride may pass 2^31 after the last whole tile)
    if (w.at >= w.dp_end - w.stride) w.at = w.sk_begin;
    else w.at += w.stride;
    return true;
  }
  if (w.at >= w.end) return false;
  const int tile = w.at / w.ktiles;
  const int t0 = tile * w.ktiles, next = t0 + w.ktiles < w.end ? t0 + w.ktiles : w.end;
  u.tile = tile;
  u.k0 = w.at - t0;
  u.k1 = next - t0;
  w.at = next;
  return true;
}
