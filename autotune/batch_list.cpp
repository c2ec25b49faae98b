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
      for (int k = batch_bucket(a); k <= batch_bucket(b); ++k) out.push_back(k);
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
