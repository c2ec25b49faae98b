// reference_sampler_test.cpp: the CPU reference sampler on hand-built inputs.
// With d = 8 and hidden row n = e_c, logit_v = W[v][c] exactly (fp32 storage,
// one nonzero product), so every expectation below is computed here from the
// logits we chose, never taken from the sampler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/reference.hpp"
#include "templates/gumbel.cuh"
#include "templates/philox.cuh"

namespace fs = fusedsample;

namespace {

constexpr int kD = 8;

// W [V, 8] with column c holding logits[c] (other columns zero).
struct Problem {
  std::int64_t vocab;
  std::vector<float> W;
  std::vector<float> H;  // [N, 8]
  std::vector<fs::ReferenceRowParams> params;

  explicit Problem(std::int64_t v) : vocab(v), W(std::size_t(v) * kD, 0.0f) {}
  void set_column(int c, const std::vector<float>& logits) {
    for (std::int64_t v = 0; v < vocab; ++v) W[std::size_t(v) * kD + c] = logits[std::size_t(v)];
  }
  // A batch row whose logits are column c, sampled with (tau, seed, offset).
  void add_row(int c, float tau, std::uint64_t seed, std::uint64_t offset) {
    for (int k = 0; k < kD; ++k) H.push_back(k == c ? 1.0f : 0.0f);
    params.push_back({tau, seed, offset});
  }
  std::int64_t rows() const { return std::int64_t(params.size()); }
  std::vector<fs::ReferenceResult> run(int samples) const {
    return fs::reference_sample(W.data(), H.data(), fs::DType::fp32, vocab, kD, rows(), params, samples);
  }
};

// ------------------------------------------------------------------ greedy

TEST(ReferenceGreedy, ReturnsArgmax) {
  const std::vector<float> logits = {-3.0f, 1.5f, 0.25f, 7.0f, -8.0f, 6.999f, 2.0f, 0.0f, -1.0f, 3.0f};
  Problem p(std::int64_t(logits.size()));
  p.set_column(0, logits);
  for (std::uint64_t seed : {0ull, 1ull, 99ull}) p.add_row(0, 0.0f, seed, seed * 7);
  const auto r = p.run(3);
  for (const auto& x : r) {
    EXPECT_EQ(x.index, 3);
    EXPECT_EQ(x.best, 7.0);  // greedy adds no noise
    EXPECT_NEAR(x.runner_up, 6.999, 1e-6);
  }
}

TEST(ReferenceGreedy, ExactTiesGoToTheLowestIndex) {
  Problem p(12);
  p.set_column(0, {1, 5, 2, 5, 0, 5, 5, 3, 5, 4, 1, 5});           // tie at 1, 3, 5, 6, 8, 11
  p.set_column(1, {-2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2});  // all tied: index 0
  p.set_column(2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9});              // tie at the end
  p.add_row(0, 0.0f, 1, 0);
  p.add_row(1, 0.0f, 2, 0);
  p.add_row(2, 0.0f, 3, 0);
  const auto r = p.run(2);
  EXPECT_EQ(r[0].index, 1);
  EXPECT_EQ(r[1].index, 1);
  EXPECT_EQ(r[2].index, 0);
  EXPECT_EQ(r[3].index, 0);
  EXPECT_EQ(r[4].index, 10);
  EXPECT_EQ(r[5].index, 10);
}

TEST(ReferenceGreedy, NegativeLogitsAndSingleToken) {
  Problem p(5);
  p.set_column(0, {-9, -4, -7, -4.5f, -100});
  p.set_column(1, {-1e30f, -1e30f, -1e30f, -1e30f, -3e38f});
  p.add_row(0, 0.0f, 0, 0);
  p.add_row(1, 0.0f, 0, 0);
  const auto r = p.run(1);
  EXPECT_EQ(r[0].index, 1);
  EXPECT_EQ(r[1].index, 0);

  Problem one(1);
  one.set_column(0, {-5});
  one.add_row(0, 0.0f, 0, 0);
  one.add_row(0, 1.0f, 0, 0);
  const auto r1 = one.run(4);
  for (const auto& x : r1) EXPECT_EQ(x.index, 0);
}

// As the kernels (templates/epilogue.cuh, fs_params.cuh's fs_better): a NaN score never
// wins, a row of only NaN gets -1, and a row of -inf scores picks index 0.
TEST(ReferenceSpecialValues, NanNeverWinsInfRowPicksFirst) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // One problem per column pattern: a NaN weight poisons every logit whose
  // hidden row has a (zero) entry against it, since NaN * 0 = NaN.
  auto run = [](const std::vector<float>& logits, float tau, int samples) {
    Problem p(std::int64_t(logits.size()));
    p.set_column(0, logits);
    p.add_row(0, tau, 5, 6);
    return p.run(samples);
  };
  for (float tau : {0.0f, 1.0f}) {
    const auto r = run({1.0f, nan, 3.0f, nan, 2.0f}, tau, 64);
    for (const auto& x : r) {
      EXPECT_NE(x.index, 1);
      EXPECT_NE(x.index, 3);
      EXPECT_GE(x.index, 0);
    }
    if (tau == 0.0f) {
      EXPECT_EQ(r[0].index, 2);
    }
    const auto all_nan = run({nan, nan, nan}, tau, 4);
    for (const auto& x : all_nan) EXPECT_EQ(x.index, -1);
    const auto all_neg_inf = run({-inf, -inf, -inf, -inf, -inf}, tau, 4);
    for (const auto& x : all_neg_inf) EXPECT_EQ(x.index, 0);
    const auto pos_inf = run({1.0f, inf, 2.0f, inf}, tau, 4);
    for (const auto& x : pos_inf) EXPECT_EQ(x.index, 1) << "+inf logits: the first one wins";
  }
}

// ------------------------------------------------------ invalid temperature

TEST(ReferenceTemperature, InvalidTemperatureGivesMinusOne) {
  Problem p(6);
  p.set_column(0, {0, 1, 2, 3, 4, 5});
  const float bad[] = {-1.0f, -0.0001f, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity()};
  for (float t : bad) p.add_row(0, t, 1, 2);
  p.add_row(0, 1.0f, 1, 2);  // a valid row between/after invalid ones is unaffected
  p.add_row(0, -0.0f, 1, 2);  // -0 == 0: greedy
  const int S = 3;
  const auto r = p.run(S);
  for (std::size_t n = 0; n < std::size(bad); ++n)
    for (int s = 0; s < S; ++s) EXPECT_EQ(r[n * S + s].index, -1) << "temperature " << bad[n];
  for (int s = 0; s < S; ++s) {
    EXPECT_GE(r[std::size(bad) * S + s].index, 0);
    EXPECT_EQ(r[(std::size(bad) + 1) * S + s].index, 5);
  }
}

// ------------------------------------------------------------------- noise

// The noise of gumbel_race.cuh: the group word (Philox counter word 0 =
// 2^31 | v >> 6, word (v >> 4) & 3) and the token's own word (counter v >> 2,
// word v & 3), spelled out here from the Philox primitive.
TEST(ReferenceNoise, GumbelIsTheGroupRaceOfPhiloxWords) {
  for (std::uint64_t seed : {0ull, 42ull, 0xdeadbeefcafef00dull})
    for (std::uint64_t offset : {0ull, 3ull, 1ull << 40})
      for (std::uint64_t v : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 1023ull, 151935ull, (1ull << 33) + 6})
        for (std::uint32_t s : {0u, 1u, 5u}) {
          const fs_philox_ctr r = fs_noise_block(seed, offset, v, s);
          fs_philox_ctr gc;
          gc.v[0] = 0x80000000u | fs_u32(v >> 6);
          gc.v[1] = s;
          gc.v[2] = fs_u32(offset);
          gc.v[3] = fs_u32(offset >> 32);
          const fs_u32 gw = fs_philox4x32_10(gc, fs_u32(seed), fs_u32(seed >> 32)).v[(v >> 4) & 3];
          const float a = -fs_log(fs_uniform_from_bits(gw)) * 0.0625f;
          const float e = int(v & 15) == int(gw & 15) ? a : a + -fs_log(fs_uniform_from_bits(r.v[v & 3]));
          const float expected = -fs_log(e);
          EXPECT_EQ(fs::reference_gumbel(seed, offset, v, s), expected)
              << "seed " << seed << " offset " << offset << " v " << v << " sample " << s;
        }
}

// The winner is the argmax of logit / tau + reference_gumbel(seed, offset, v, s),
// recomputed here by brute force.
TEST(ReferenceNoise, WinnerIsArgmaxOfPerturbedScores) {
  const int V = 37;
  std::vector<float> logits(V);
  for (int v = 0; v < V; ++v) logits[std::size_t(v)] = float((v * 7) % 11) * 0.25f - 1.0f;
  Problem p(V);
  p.set_column(3, logits);
  const float taus[] = {0.5f, 1.0f, 2.0f};
  for (int i = 0; i < 3; ++i) p.add_row(3, taus[i], 1000 + i, 17 * i);
  const int S = 16;
  const auto r = p.run(S);
  for (int n = 0; n < 3; ++n)
    for (int s = 0; s < S; ++s) {
      double best = -INFINITY, second = -INFINITY;
      int bi = -1;
      for (int v = 0; v < V; ++v) {
        const double sc = double(logits[std::size_t(v)]) * double(1.0f / taus[n]) +
                          double(fs::reference_gumbel(p.params[std::size_t(n)].seed, p.params[std::size_t(n)].offset,
                                                      std::uint64_t(v), std::uint32_t(s)));
        if (sc > best) second = best, best = sc, bi = v;
        else if (sc > second) second = sc;
      }
      const auto& x = r[std::size_t(n * S + s)];
      EXPECT_EQ(x.index, bi) << "row " << n << " sample " << s;
      EXPECT_EQ(x.best, best);
      EXPECT_EQ(x.runner_up, second);
      EXPECT_GT(x.tolerance, 0.0);
      EXPECT_LT(x.tolerance, 1e-4);
    }
}

// Results depend on (seed, offset, v, sample) only, not on where the row sits
// in the batch: permuting rows (with their params) permutes the results.
TEST(ReferenceNoise, IndependentOfRowPosition) {
  const int V = 64, S = 5;
  Problem p(V);
  for (int c = 0; c < kD; ++c) {
    std::vector<float> col(V);
    for (int v = 0; v < V; ++v) col[std::size_t(v)] = std::sin(float(v * (c + 1))) * 2.0f;
    p.set_column(c, col);
  }
  struct Row {
    int c;
    float tau;
    std::uint64_t seed, offset;
  };
  const std::vector<Row> rows = {{0, 1.0f, 7, 0},  {1, 0.8f, 7, 1},  {2, 1.3f, 8, 0}, {3, 1.0f, 7, 0},
                                 {4, 0.0f, 9, 5},  {5, 0.5f, 1, 99}, {6, 2.0f, 2, 3}, {7, 1.0f, 3, 4},
                                 {0, 1.0f, 7, 0},  {0, 1.0f, 7, 1}};
  for (const Row& r : rows) p.add_row(r.c, r.tau, r.seed, r.offset);
  const auto base = p.run(S);

  std::vector<int> perm(rows.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  std::rotate(perm.begin(), perm.begin() + 3, perm.end());
  Problem q(V);
  q.W = p.W;
  for (int i : perm) q.add_row(rows[std::size_t(i)].c, rows[std::size_t(i)].tau, rows[std::size_t(i)].seed, rows[std::size_t(i)].offset);
  const auto permuted = q.run(S);
  for (std::size_t j = 0; j < perm.size(); ++j)
    for (int s = 0; s < S; ++s) {
      const auto& a = base[std::size_t(perm[j]) * S + s];
      const auto& b = permuted[j * S + s];
      EXPECT_EQ(a.index, b.index) << "row " << perm[j] << " moved to " << j << ", sample " << s;
      EXPECT_EQ(a.best, b.best);
    }
  // Identical rows (0 and 8) agree; a different offset (row 9) is different noise.
  for (int s = 0; s < S; ++s) EXPECT_EQ(base[0 * S + s].best, base[8 * S + s].best);
  int differ = 0;
  for (int s = 0; s < S; ++s) differ += base[0 * S + s].best != base[9 * S + s].best;
  EXPECT_GT(differ, 0);
  // Rows alone give the same answers as in the batch.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Problem one(V);
    one.W = p.W;
    one.add_row(rows[i].c, rows[i].tau, rows[i].seed, rows[i].offset);
    const auto r = one.run(S);
    for (int s = 0; s < S; ++s) EXPECT_EQ(r[std::size_t(s)].index, base[i * S + s].index);
  }
}

TEST(ReferenceArguments, BadShapesThrow) {
  Problem p(4);
  p.add_row(0, 1.0f, 0, 0);
  EXPECT_THROW(fs::reference_sample(nullptr, p.H.data(), fs::DType::fp32, 4, kD, 1, p.params, 1), fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 0, kD, 1, p.params, 1), fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 4, kD, 1, p.params, 0), fs::InvalidArgument);
  EXPECT_THROW(fs::reference_sample(p.W.data(), p.H.data(), fs::DType::fp32, 4, kD, 2, p.params, 1), fs::InvalidArgument);
}

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
// test at 1e-4): noise that favours one index, one Philox word position, or
// a score tie rule leaking into sampling would skew this.
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
