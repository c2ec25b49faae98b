// batch_tiles.cpp: module slots and the config a batch part runs
// (batch_tiles.hpp).
#include "runtime/batch_tiles.hpp"

#include <fmt/format.h>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fusedsample::runtime {

int module_slot(std::int64_t part_rows) {
  if (part_rows < 1 || part_rows > kMaxBucketRows)
    throw InvalidArgument(fmt::format("module_slot: a batch part has 1 to {} rows, not {}", kMaxBucketRows, part_rows));
  return part_rows < kFittedFirstRows ? batch_bucket(part_rows)
                                     : kFittedFirstSlot + int((part_rows - kFittedFirstRows) / 8);
}

std::int64_t slot_rows(int slot) {
  if (slot < 0 || slot >= kModuleSlots) throw InvalidArgument(fmt::format("no module slot {}", slot));
  return slot < kFittedFirstSlot ? bucket_rows(slot) : kFittedFirstRows + 7 + 8 * std::int64_t(slot - kFittedFirstSlot);
}

KernelSpec batch_spec(std::int64_t part_rows, const std::function<KernelSpec(std::int64_t bucket_rows)>& bucket_spec,
                      std::size_t max_shared) {
  const int b = batch_bucket(part_rows);
  const std::int64_t rows = bucket_rows(b);
  const KernelSpec s = bucket_spec(rows);
  if (part_rows > 128 && s.tile_n < part_rows) {
    const std::int64_t below = bucket_rows(b - 1);
    if (2 * (part_rows - below) <= rows - below)
      if (const auto grown = grow_batch_tile(bucket_spec(below), part_rows); grown && grown->shared_bytes() <= max_shared)
        return *grown;
  }
  return s.tile_n == rows ? fit_batch_tile(s, part_rows) : s;
}

}  // namespace fusedsample::runtime
