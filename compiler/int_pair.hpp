// int_pair.hpp: "A<sep>B" read as two ints, the whole text (a compute
// capability "9.0", a warp layout "4x1"). std::from_chars, not sscanf's %d:
// a number that does not fit an int is refused, not wrapped ("4294967305.0"
// read as 9.0).
#pragma once
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

namespace fusedsample::detail {

inline std::optional<std::pair<int, int>> parse_int_pair(std::string_view text, char sep) {
  const char* const end = text.data() + text.size();
  int a = 0, b = 0;
  const auto [mid, e1] = std::from_chars(text.data(), end, a);
  if (e1 != std::errc() || mid == end || *mid != sep) return std::nullopt;
  const auto [tail, e2] = std::from_chars(mid + 1, end, b);
  if (e2 != std::errc() || tail != end) return std::nullopt;
  return std::pair{a, b};
}

}  // namespace fusedsample::detail
