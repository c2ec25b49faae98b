// batch_list.cpp: which batch buckets to tune, from the command line's
// "--batches" text.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuner.hpp"

namespace fusedsample {
namespace {

std::int64_t parse_rows(std::string_view part, std::string_view text) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
  if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v < 1)
    throw InvalidArgument(
        fmt::format("bad batch size '{}' in '{}': expected a positive integer (e.g. \"1-256\" or \"1,8,64\")", part, text));
  return v;
}

// The buckets that serve some batch size in [a, b]. Up to 256 rows the
// bucket grows with the rows; past it the bucket is a part's
// (batch_part_rows), which rises and falls, so the sizes are walked. Past
// 2048 rows (k >= 9 parts of more than 227 rows) every size is bucket 256's.
void add_range(std::int64_t a, std::int64_t b, std::vector<int>& out) {
  constexpr std::int64_t kWalked = 2048;
  for (std::int64_t r = a; r <= std::min(b, kWalked); ++r) out.push_back(batch_bucket(r));
  if (b > kWalked) out.push_back(batch_bucket(b));
}

}  // namespace

std::vector<int> parse_batch_list(std::string_view text) {
  if (text.empty()) throw InvalidArgument("empty batch list (e.g. \"1-256\" or \"1,8,64\")");
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(start, end - start);
    if (const auto dash = part.find('-'); dash != std::string_view::npos) {
      const std::int64_t a = parse_rows(part.substr(0, dash), text);
      const std::int64_t b = parse_rows(part.substr(dash + 1), text);
      if (a > b) throw InvalidArgument(fmt::format("bad batch range '{}' in '{}': {} > {}", part, text, a, b));
      add_range(a, b, out);
    } else {
      out.push_back(batch_bucket(parse_rows(part, text)));
    }
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fusedsample
