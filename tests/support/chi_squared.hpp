// chi_squared.hpp: the chi-squared machinery of the Sampler distribution
// test (tests/runtime/sampler_distribution_gpu_test.cpp): goodness of fit
// with merged bins, critical values and the power against a biased top token.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusedsample::testing {

// ---------------------------------------------------------------------------
// Chi-squared statistics
// ---------------------------------------------------------------------------

inline double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// Upper-tail standard normal quantile for p = 1e-4.
inline constexpr double kZ1e4 = 3.7190164854556804;

// Wilson-Hilferty: the chi-squared quantile with `dof` degrees of freedom
// whose upper tail is the normal tail of z.
inline double chi2_critical_wh(double dof, double z) {
  const double a = 2.0 / (9.0 * dof);
  const double t = 1.0 - a + z * std::sqrt(a);
  return dof * t * t * t;
}

// P(chi2_dof > x) by Wilson-Hilferty.
inline double chi2_upper_tail_wh(double dof, double x) {
  const double a = 2.0 / (9.0 * dof);
  const double z = (std::cbrt(x / dof) - (1.0 - a)) / std::sqrt(a);
  return normal_upper_tail(z);
}

// P(noncentral chi2(dof, lambda) > x): Patnaik's approximation c*chi2(nu)
// with c = (k + 2l)/(k + l), nu = (k + l)^2/(k + 2l), then Wilson-Hilferty.
inline double noncentral_chi2_power(double dof, double lambda, double x) {
  const double c = (dof + 2 * lambda) / (dof + lambda);
  const double nu = (dof + lambda) * (dof + lambda) / (dof + 2 * lambda);
  return chi2_upper_tail_wh(nu, x / c);
}

struct Chi2Result {
  double statistic = 0;
  int dof = 0;
  int bins = 0;
  double critical = 0;  // p = 1e-4
  double lambda_top_bias = 0;  // noncentrality of a 1% relative bias on the top token
  double power = 0;            // of the test against that bias
  std::uint64_t impossible_hits = 0;  // samples of tokens with p < 1e-12
};

// Goodness of fit of counts[V] (total M) against probabilities p[V]. Bins
// with expected count < 5 merge into one "rest" bin (itself merged into the
// smallest kept bin if still under 5).
inline Chi2Result chi2_goodness_of_fit(const std::vector<std::uint64_t>& counts, const std::vector<double>& p) {
  Chi2Result r;
  double M = 0;
  for (auto c : counts) M += double(c);
  std::vector<double> obs, expct, prob;
  double rest_o = 0, rest_e = 0, rest_p = 0;
  std::size_t top = 0;
  for (std::size_t v = 0; v < p.size(); ++v) {
    if (p[v] > p[top]) top = v;
    if (p[v] < 1e-12) r.impossible_hits += counts[v];
    const double e = M * p[v];
    if (e >= 5) {
      obs.push_back(double(counts[v]));
      expct.push_back(e);
      prob.push_back(p[v]);
    } else {
      rest_o += double(counts[v]);
      rest_e += e;
      rest_p += p[v];
    }
  }
  if (rest_e >= 5 || expct.empty()) {
    obs.push_back(rest_o);
    expct.push_back(rest_e);
    prob.push_back(rest_p);
  } else if (rest_o > 0 || rest_e > 0) {
    const std::size_t smallest = std::size_t(std::min_element(expct.begin(), expct.end()) - expct.begin());
    obs[smallest] += rest_o;
    expct[smallest] += rest_e;
    prob[smallest] += rest_p;
  }
  r.bins = int(obs.size());
  r.dof = r.bins - 1;
  for (std::size_t i = 0; i < obs.size(); ++i) r.statistic += (obs[i] - expct[i]) * (obs[i] - expct[i]) / expct[i];
  if (r.dof < 1) return r;
  r.critical = chi2_critical_wh(r.dof, kZ1e4);
  // Alternative: the top token's probability is 1% higher, every other bin
  // gives up mass in proportion. lambda = M sum (p'_i - p_i)^2 / p_i.
  const double pt = p[top], eps = 0.01 * pt;
  r.lambda_top_bias = M * (eps * eps / pt + eps * eps / (1.0 - pt));
  r.power = noncentral_chi2_power(r.dof, r.lambda_top_bias, r.critical);
  return r;
}

}  // namespace fusedsample::testing
