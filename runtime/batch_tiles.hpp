// batch_tiles.hpp: which kernel config a batch runs, between the tuned batch
// buckets (tuning_db.hpp). Above 64 rows the Sampler keeps one module per 8
// rows of a batch part (a module slot), whose config is its bucket's winner
// with the batch tile fitted to the part (fit_batch_tile), or above 128 rows
// the bucket below's grown to it (grow_batch_tile). Host only; no GPU needed (the CPU
// tests exercise it with tables of their own).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::runtime {

// Module slots per sample bucket: the batch buckets up to 64 rows (0..6),
// then one per 8 rows of a batch part from 65 to 256 (7..30: 65..72 is
// slot 7, 121..128 slot 14, 129..136 slot 15, 249..256 slot 30). Each slot
// lies inside one batch bucket, and the midpoints between the buckets above
// 128 (144, 176, 208, 240) end slots. (Until session 66 the buckets up to
// 128 rows had one slot each: N = 65-127 ran bucket 128's tile.)
inline constexpr std::int64_t kFittedFirstRows = 65;  // the first part of a fitted slot
inline constexpr int kFittedFirstSlot = 7;            // batch_bucket(kFittedFirstRows - 1) + 1
inline constexpr int kModuleSlots = kFittedFirstSlot + 24;
int module_slot(std::int64_t part_rows);  // part_rows in 1..256 (batch_part_rows); throws InvalidArgument otherwise
std::int64_t slot_rows(int slot);         // the most rows of the slot's parts; throws InvalidArgument outside [0, 31)

// The config a batch part of part_rows rows (1..256) runs, from the tuned
// winner of each bucket (bucket_spec(bucket rows)) and the GPU's shared
// memory per block:
//   - the part's bucket winner, its batch tile fitted to the part
//     (fit_batch_tile) where that tile is the bucket's own rows (the tuner's
//     fitted tile: a winner wider than its bucket was measured against the
//     fitted one and kept, so it runs as tuned);
//   - above 128 rows, where that winner's batch tile is narrower than the
//     part (several batch tiles per part: nothing to fit) and the part
//     is nearer the bucket below (ties too: 129-144, 161-176, 193-208,
//     225-240 rows), the bucket below's winner grown to the part instead, if
//     it is one register-epilogue tile (grow_batch_tile) that fits max_shared.
// H200, session 65: fitting is 3.0-4.8 % faster on average over the buckets
// 192, 224 and the large shape's 256; growing, at the small shape's
// N = 225-240 (bucket 256: two 128-row tiles), 6.4 %. Growing also where the
// own winner can be fitted was 2.2 % slower at the small shape's N = 161-176.
KernelSpec batch_spec(std::int64_t part_rows, const std::function<KernelSpec(std::int64_t bucket_rows)>& bucket_spec,
                      std::size_t max_shared);

}  // namespace fusedsample::runtime
