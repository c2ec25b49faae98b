// bench_rows.hpp: the batch sizes fusedsample_bench times (--fs_rows) and how
// many rows of random inputs it allocates for them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusedsample::bench {

// "1,2,300" -> {1, 2, 300}; every entry a positive integer.
inline std::vector<std::int64_t> parse_rows(const std::string& text) {
  std::vector<std::int64_t> rows;
  std::stringstream in(text);
  std::string tok;
  while (std::getline(in, tok, ',')) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(tok, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != tok.size() || v < 1)
      throw std::invalid_argument("--fs_rows: '" + tok + "' in '" + text + "' is not a positive batch size");
    rows.push_back(v);
  }
  if (rows.empty()) throw std::invalid_argument("--fs_rows: no batch sizes in '" + text + "'");
  return rows;
}

// Rows of H (and of the unfused pipeline's logits) to allocate: the largest
// batch timed, and at least 256 (the record's largest). Every launch reads
// only its own rows, so one allocation serves all.
inline std::int64_t data_rows(const std::vector<std::int64_t>& rows) {
  return std::max<std::int64_t>(256, rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end()));
}

}  // namespace fusedsample::bench
