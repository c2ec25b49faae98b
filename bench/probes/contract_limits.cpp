// contract_limits.cpp: a session-40 probe, host only, not part of the build. How far the contract's draw
// (docs/rng.md sections 3-6: 23-bit uniforms, the fp32 score fmaf(l, 1/tau, g), ties to the lowest index) is from
// softmax(l / tau), in the two places where it is not exact (docs/rng.md section 9):
//   1. ties of rounded scores: two tokens of equal logit L, drawn with the contract's noise (fs_gumbel_noise, the
//      kernels' code compiled for the host), token 0's share against 1/2;
//   2. the noise's bounded range: the probability that a token at scaled gap D below another wins, from the exact
//      count of the 2^23 uniform levels of its group word and its own word (gumbel_race.cuh's formulas in double),
//      against the continuous e^-D / (1 + e^-D).
// Build and run from the repository root:
//   g++ -O2 -std=c++20 -ffp-contract=off -I. bench/probes/contract_limits.cpp -o contract_limits && ./contract_limits
#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "templates/fs_params.cuh"
#include "templates/gumbel_race.cuh"

namespace {

constexpr double kLevels = 8388608.0;  // 2^23 uniform levels u_k = (k + 1/2) 2^-23

// The levels with u_k > exp(-t), t >= 0: those whose -log(u) is below t.
double levels_below(double t) {
  const double m = -std::expm1(-t) * kLevels - 0.5;
  return m <= 0 ? 0 : std::min(std::ceil(m), kLevels);
}

// P(a + E < q): the group's race minimum a = -log(u_G) / 16 plus a token's own Exp(1), both from levels.
double p_sum_below(double q) {
  double s = 0;
  for (long j = 0;; ++j) {  // group levels from the largest u (smallest a) down
    const double a = -std::log1p(-(j + 0.5) / kLevels) / 16;
    if (a >= q) break;
    s += levels_below(q - a) / kLevels;
  }
  return s / kLevels;
}

// P(g > x) of one token: the lead (1 in 16) has noise -log(a), the others -log(a + E).
double p_noise_above(double x) {
  const double q = std::exp(-x);
  return levels_below(16 * q) / kLevels / 16 + 15.0 / 16 * p_sum_below(q);
}

void tie_bias() {
  std::printf("1. two tokens of equal logit L: token 0's share (softmax: 0.5)\n");
  std::printf("   L/tau      ulp(L/tau)   draws     share     0.5 + ulp/8\n");
  const struct {
    float l, tau;
    long draws;
  } cases[] = {{10.0f, 1e-6f, 200000}, {1.0e6f, 1.0f, 400000}, {50.0f, 1e-3f, 2000000}, {2048.0f, 1.0f, 2000000}};
  for (const auto& c : cases) {
    const float inv_tau = 1.0f / c.tau, x = c.l * inv_tau;
    long zero = 0;
    for (long d = 0; d < c.draws; ++d) {
      float best = -INFINITY;
      int bi = FS_NO_INDEX;
      for (int v = 0; v < 2; ++v) {
        const float s = std::fmaf(c.l, inv_tau, fs_gumbel_noise(42, fs_u64(d), fs_u64(v), 0));
        if (fs_better(s, v, best, bi)) best = s, bi = v;
      }
      zero += bi == 0;
    }
    const double ulp = std::nextafter(x, INFINITY) - x;
    std::printf("   %-10.4g %-12.4g %-9ld %.4f    %.4f  (standard error %.4f)\n", double(x), ulp, c.draws,
                double(zero) / c.draws, 0.5 + ulp / 8, std::sqrt(0.25 / c.draws));
  }
}

void tail() {
  std::printf("2. a token at scaled gap D below another: P(it wins), contract / continuous\n");
  std::printf("   D      continuous   contract     ratio\n");
  for (double gap : {14.0, 16.0, 18.0, 19.0, 20.0, 21.0, 22.0, 22.3}) {
    // Over the other token's noise y (midpoint rule; the Gumbel density's mass below FS_NOISE_MIN is 2e-8), up
    // to where gap + y passes the largest noise.
    double p = 0;
    const double dy = 1e-3;
    for (double y = FS_NOISE_MIN + dy / 2; gap + y < FS_NOISE_MAX; y += dy)
      p += std::exp(-y - std::exp(-y)) * p_noise_above(gap + y) * dy;
    const double cont = std::exp(-gap) / (1 + std::exp(-gap));
    std::printf("   %-6.1f %.4e   %.4e   %.4f\n", gap, cont, p, p / cont);
  }
}

}  // namespace

int main() {
  tie_bias();
  tail();
}
