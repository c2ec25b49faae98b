// reference_distribution_test.cpp: the CPU reference sampler draws from
// softmax(logits / temperature): chi-squared goodness of fit (machinery
// written from the definitions and checked against tables), rejection of
// a wrong temperature, power against a biased top token, even tie splits.
//
// The inputs are hand-built (tests/support/reference_problem.hpp): with d = 8
// and hidden row n = e_c, logit_v = W[v][c] exactly (fp32 storage, one nonzero
// product), so every expectation below is computed here from the logits we
// chose, never taken from the sampler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/reference.hpp"
#include "tests/support/reference_problem.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::reference_tests;

// -------------------------------------------------------- goodness of fit
//
// Chi-squared machinery written from the definitions: the regularized upper
// incomplete gamma Q(a, x) (series below a + 1, Lentz continued fraction
// above), P(chi2_k > x) = Q(k/2, x/2), critical values by bisection.

double upper_gamma_q(double a, double x) {
  if (x <= 0) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 10000 && std::fabs(term) > std::fabs(sum) * 1e-16; ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return 1.0 - std::exp(log_prefix) * sum;
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

double chi2_sf(double x, int df) { return upper_gamma_q(df / 2.0, x / 2.0); }

double chi2_critical(int df, double alpha) {
  double lo = 0, hi = df + 100.0 * std::sqrt(2.0 * df) + 100;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (chi2_sf(mid, df) > alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// Wilson-Hilferty: chi2_k quantile ~ k (1 - 2/(9k) + z sqrt(2/(9k)))^3.
double wilson_hilferty(int df, double z) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1 - a + z * std::sqrt(a), 3);
}

constexpr double kAlpha = 1e-4;
constexpr double kZ = 3.7190164854556804;  // upper 1e-4 quantile of N(0, 1)

TEST(ChiSquared, CriticalValuesMatchTables) {
  // Published chi-squared table values (upper 1e-4 tail) and normal quantiles.
  EXPECT_NEAR(chi2_critical(1, kAlpha), 3.8905918864 * 3.8905918864, 1e-3);  // z_{0.99995}^2 = 15.137
  EXPECT_NEAR(chi2_critical(10, kAlpha), 35.564, 2e-3);
  EXPECT_NEAR(chi2_critical(2, kAlpha), -2 * std::log(kAlpha), 1e-6);  // chi2_2 is exponential
  for (int df : {20, 50, 99, 150}) EXPECT_NEAR(chi2_critical(df, kAlpha), wilson_hilferty(df, kZ), 0.01 * wilson_hilferty(df, kZ)) << df;
}

std::vector<double> softmax(const std::vector<float>& logits, double tau) {
  double m = -INFINITY;
  for (float l : logits) m = std::max(m, double(l) / tau);
  std::vector<double> p(logits.size());
  double z = 0;
  for (std::size_t i = 0; i < p.size(); ++i) z += p[i] = std::exp(double(logits[i]) / tau - m);
  for (double& x : p) x /= z;
  return p;
}

// Bins of indices, smallest expected counts merged until each has >= 5.
std::vector<std::vector<int>> merge_bins(const std::vector<double>& p, double n) {
  std::vector<int> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return p[std::size_t(a)] < p[std::size_t(b)]; });
  std::vector<std::vector<int>> bins;
  std::vector<int> cur;
  double acc = 0;
  for (int i : order) {
    cur.push_back(i);
    acc += n * p[std::size_t(i)];
    if (acc >= 5) bins.push_back(cur), cur.clear(), acc = 0;
  }
  if (!cur.empty()) bins.back().insert(bins.back().end(), cur.begin(), cur.end());
  return bins;
}

struct Fit {
  double stat;
  int df;
  double critical;
  double noncentrality;  // of the alternative `q` when the truth is `p`
};

// Pearson's statistic of `counts` against `q`; noncentrality n sum (p-q)^2/q.
Fit chi_squared(const std::vector<std::int64_t>& counts, const std::vector<double>& q, const std::vector<double>& p) {
  double n = 0;
  for (auto c : counts) n += double(c);
  const auto bins = merge_bins(q, n);
  Fit f{0, int(bins.size()) - 1, 0, 0};
  for (const auto& b : bins) {
    double obs = 0, eq = 0, ep = 0;
    for (int i : b) obs += double(counts[std::size_t(i)]), eq += q[std::size_t(i)], ep += p[std::size_t(i)];
    f.stat += (obs - n * eq) * (obs - n * eq) / (n * eq);
    f.noncentrality += n * (ep - eq) * (ep - eq) / eq;
  }
  f.critical = chi2_critical(f.df, kAlpha);
  return f;
}

// The distribution with index `top`'s probability scaled by (1 + eps) and the
// others scaled down to keep the total at 1.
std::vector<double> bias_token(const std::vector<double>& p, int top, double eps) {
  std::vector<double> q(p);
  const double pt = p[std::size_t(top)] * (1 + eps);
  for (double& x : q) x *= (1 - pt) / (1 - p[std::size_t(top)]);
  q[std::size_t(top)] = pt;
  return q;
}

constexpr int kV = 100;
constexpr int kSamples = 150000;  // per row; two rows
constexpr float kTau = 0.7f;

// Rank r's logit sits at index (r * 37 + 11) % 100, so neither the order nor
// the Philox word position (v & 3) lines up with the logit ranking.
int spread_index(int rank) { return (rank * 37 + 11) % kV; }
int peaked_index(int rank) { return (rank * 53 + 29) % kV; }

// Row 0, "spread": two exactly tied leaders (12.7% each), then a slow decay;
// every token has expected count >= 40. Row 1, "peaked": one token at 81%.
struct Draws {
  std::vector<float> spread, peaked;
  std::vector<std::int64_t> spread_counts, peaked_counts;
};

const Draws& draws() {
  static const Draws d = [] {
    Draws d;
    d.spread.assign(kV, 0.0f);
    d.peaked.assign(kV, 0.0f);
    for (int r = 0; r < kV; ++r) {
      d.spread[std::size_t(spread_index(r))] = r < 2 ? 2.0f : 1.2f - 0.035f * float(r);
      d.peaked[std::size_t(peaked_index(r))] = r == 0 ? 4.0f : 1.0f - 0.04f * float(r);
    }
    Problem p(kV);
    p.set_column(2, d.spread);
    p.set_column(5, d.peaked);
    p.add_row(2, kTau, 0x1234567887654321ull, 3);
    p.add_row(5, kTau, 0x0badc0ffee0ddf00ull, 4);
    const auto r = p.run(kSamples);  // samples 0..S-1 vary the Philox counter
    d.spread_counts.assign(kV, 0);
    d.peaked_counts.assign(kV, 0);
    for (int s = 0; s < kSamples; ++s) {
      const auto a = r[std::size_t(s)].index, b = r[std::size_t(kSamples + s)].index;
      if (a < 0 || a >= kV || b < 0 || b >= kV) ADD_FAILURE() << "index out of range";
      else ++d.spread_counts[std::size_t(a)], ++d.peaked_counts[std::size_t(b)];
    }
    return d;
  }();
  return d;
}

TEST(ReferenceDistribution, MatchesSoftmaxOverTemperature) {
  const Draws& d = draws();
  for (const auto* row : {&d.spread, &d.peaked}) {
    const auto& counts = row == &d.spread ? d.spread_counts : d.peaked_counts;
    const auto p = softmax(*row, kTau);
    const Fit f = chi_squared(counts, p, p);
    EXPECT_LT(f.stat, f.critical) << (row == &d.spread ? "spread" : "peaked") << " row: chi2 = " << f.stat << " with "
                                  << f.df << " df";
    // Too good a fit is suspicious too (e.g. counts derived from p).
    EXPECT_GT(f.stat, chi2_critical(f.df, 1 - kAlpha));
  }
}

// Sampling with the wrong temperature, or with tau applied twice, is rejected.
TEST(ReferenceDistribution, RejectsWrongTemperature) {
  const Draws& d = draws();
  const auto p = softmax(d.spread, kTau);
  for (double wrong : {0.72, 0.68, 1.0, 0.49}) {
    const auto q = softmax(d.spread, wrong);
    const Fit f = chi_squared(d.spread_counts, q, p);
    EXPECT_GT(f.stat, f.critical) << "tau " << wrong << ", noncentrality " << f.noncentrality;
  }
}

// Power against a biased top token. The omnibus test (99 df) needs a large
// noncentrality lambda: with lambda = n sum (p-q)^2 / q, the statistic is
// ~ df + lambda +- sqrt(2 (df + 2 lambda)); we require the critical value at
// least 3 such standard deviations below the mean, so the rejection is not
// luck. The omnibus row resolves a 10% relative bias; the top-vs-rest test
// (1 df, a two-sided binomial test) on the peaked row resolves 1%.
TEST(ReferenceDistribution, HasPowerAgainstABiasedTopToken) {
  const Draws& d = draws();
  {
    const auto p = softmax(d.spread, kTau);
    const int top = spread_index(0);
    const Fit f = chi_squared(d.spread_counts, bias_token(p, top, 0.10), p);
    const double sd = std::sqrt(2.0 * (f.df + 2 * f.noncentrality));
    EXPECT_GT(f.df + f.noncentrality - 3 * sd, f.critical) << "lambda " << f.noncentrality;
    EXPECT_GT(f.stat, f.critical);
  }
  {
    const auto p = softmax(d.peaked, kTau);
    const int top = peaked_index(0);
    std::vector<std::int64_t> two = {d.peaked_counts[std::size_t(top)], 0};
    for (int v = 0; v < kV; ++v)
      if (v != top) two[1] += d.peaked_counts[std::size_t(v)];
    const std::vector<double> p2 = {p[std::size_t(top)], 1 - p[std::size_t(top)]};
    const Fit ok = chi_squared(two, p2, p2);
    EXPECT_EQ(ok.df, 1);
    EXPECT_LT(ok.stat, ok.critical) << "top-vs-rest against the true softmax";
    for (double eps : {0.01, -0.01}) {
      const std::vector<double> q2 = {p2[0] * (1 + eps), 1 - p2[0] * (1 + eps)};
      const Fit f = chi_squared(two, q2, p2);
      const double sd = std::sqrt(2.0 * (f.df + 2 * f.noncentrality));
      EXPECT_GT(f.df + f.noncentrality - 3 * sd, f.critical) << "lambda " << f.noncentrality;
      EXPECT_GT(f.stat, f.critical) << "top token biased by " << eps << " relative was not rejected";
    }
  }
}

// Two exactly tied logits must split their wins evenly (two-sided binomial
// test at 1e-4): noise that favours one index or one Philox word position
// would skew this. The reference scores in double, so the two scores tie
// about once in 10^7 draws and the tie rule cannot show here; it is tested
// where it acts, at coarse fp32 scores (ScoreTies.*, score_ties_test.cpp).
TEST(ReferenceDistribution, TiedLogitsSplitEvenly) {
  const Draws& d = draws();
  const double a = double(d.spread_counts[std::size_t(spread_index(0))]);
  const double b = double(d.spread_counts[std::size_t(spread_index(1))]);
  ASSERT_NE(spread_index(0) & 3, spread_index(1) & 3);
  const double m = a + b;
  EXPECT_GT(m, 0.2 * kSamples);
  const double z = (a - b) / std::sqrt(m);  // (a - m/2) / sqrt(m/4)
  EXPECT_LT(std::fabs(z), 3.8905918864) << a << " vs " << b;
  // Power: a 55/45 split would give |z| = 0.1 sqrt(m), far beyond.
  EXPECT_GT(0.1 * std::sqrt(m), 3.8905918864 + 3);
}

}  // namespace
