#include "autotune/call_order.hpp"

#include <functional>

namespace fusedsample::autotune {

std::vector<std::size_t> rotating_call_order(std::size_t n, int rounds) {
  std::vector<std::size_t> order;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < n; ++k) order.push_back((std::size_t(r) + k) % n);
  return order;
}

namespace {

// The de Bruijn sequence B(n, 2): the concatenation, in lexicographic order,
// of the Lyndon words over 0..n-1 whose length divides 2 (the
// Fredricksen-Kessler-Maiorana construction).
std::vector<std::size_t> de_bruijn_pairs(std::size_t n) {
  std::vector<std::size_t> seq, a(3, 0);
  std::function<void(std::size_t, std::size_t)> gen = [&](std::size_t t, std::size_t p) {
    if (t > 2) {
      if (2 % p == 0) seq.insert(seq.end(), a.begin() + 1, a.begin() + 1 + std::ptrdiff_t(p));
      return;
    }
    a[t] = a[t - p];
    gen(t + 1, p);
    for (std::size_t j = a[t - p] + 1; j < n; ++j) {
      a[t] = j;
      gen(t + 1, t);
    }
  };
  gen(1, 1);
  return seq;
}

}  // namespace

std::vector<std::size_t> balanced_call_order(std::size_t n, int rounds) {
  if (n == 0 || rounds <= 0) return {};
  const std::vector<std::size_t> cycle = de_bruijn_pairs(n);  // each line n times
  std::vector<std::size_t> order;
  for (std::size_t reps = (std::size_t(rounds) + n - 1) / n; reps > 0; --reps)
    order.insert(order.end(), cycle.begin(), cycle.end());
  return order;
}

}  // namespace fusedsample::autotune
