#include "volley/analysis/statistics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace volley::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Above this many degrees of freedom Student's t is the standard normal to double precision
// for every quantile a report uses, and the beta continued fraction would converge slowly.
constexpr double kNormalDf = 1e10;

// log(Gamma(x)) for x > 0: Lanczos approximation (g = 7, 9 terms; relative error ~1e-15). Written
// here because std::lgamma may write the global `signgam`, which is a data race across threads.
double log_gamma(double x) {
  constexpr std::array<double, 9> kC = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  if (x < 0.5) {  // reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    return std::log(std::numbers::pi / std::abs(std::sin(std::numbers::pi * x))) -
           log_gamma(1.0 - x);
  }
  x -= 1.0;
  double sum = kC[0];
  for (std::size_t i = 1; i < kC.size(); ++i) sum += kC[i] / (x + static_cast<double>(i));
  const double t = x + 7.5;
  return 0.5 * std::log(2.0 * std::numbers::pi) + (x + 0.5) * std::log(t) - t + std::log(sum);
}

// Continued fraction for I_x(a, b) (Numerical Recipes betacf, modified Lentz's method).
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 100'000;
  constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
  constexpr double kTiny = std::numeric_limits<double>::min() / kEpsilon;
  const double qab = a + b;
  const double qap = a + 1.0;
  const double qam = a - 1.0;
  double c = 1.0;
  double d = 1.0 - qab * x / qap;
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double md = m;
    const double m2 = 2.0 * md;
    double aa = md * (b - md) * x / ((qam + m2) * (a + m2));  // even step
    d = 1.0 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + md) * (qab + md) * x / ((a + m2) * (qap + m2));  // odd step
    d = 1.0 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) <= kEpsilon) break;
  }
  return h;
}

// I_x(a, b) given both x and y = 1 - x (callers that know y exactly keep its precision).
double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  const double log_front =
      log_gamma(a + b) - log_gamma(a) - log_gamma(b) + a * std::log(x) + b * std::log(y);
  const double front = std::exp(log_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, y) / b;
}

// P(T > t) for t >= 0.
double student_t_upper_tail(double t, double df) {
  if (df > kNormalDf) return 0.5 * std::erfc(t / std::numbers::sqrt2);
  const double t2 = t * t;
  if (std::isinf(t2)) return 0.0;
  // P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2).
  const double x = df / (df + t2);
  const double y = t2 / (df + t2);
  return 0.5 * incomplete_beta(0.5 * df, 0.5, x, y);
}

struct Moments {
  double mean = kNaN;
  double variance = kNaN;  // sample variance (n - 1)
};

Moments moments(std::span<const double> v) {
  Moments m;
  if (v.empty()) return m;
  double sum = 0.0;
  for (const double x : v) sum += x;
  m.mean = sum / static_cast<double>(v.size());
  if (v.size() < 2) return m;
  double ss = 0.0;
  double residual = 0.0;  // two-pass with the compensation term (Chan, Golub and LeVeque)
  for (const double x : v) {
    ss += (x - m.mean) * (x - m.mean);
    residual += x - m.mean;
  }
  const double n = static_cast<double>(v.size());
  m.variance = std::max(0.0, (ss - residual * residual / n) / (n - 1.0));
  return m;
}

}  // namespace

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) {
    s.mean = s.stddev = s.min = s.max = s.median = kNaN;
    return s;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const Moments m = moments(values);
  s.mean = m.mean;
  s.stddev = std::sqrt(m.variance);  // NaN stays NaN for n == 1
  s.min = sorted.front();
  s.max = sorted.back();
  const std::size_t mid = sorted.size() / 2;
  s.median = sorted.size() % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  return s;
}

ConfidenceInterval confidence_interval(std::span<const double> values, double level) {
  if (values.size() < 2 || !(level > 0.0 && level < 1.0)) return {kNaN, kNaN, kNaN};
  const Moments m = moments(values);
  const double n = static_cast<double>(values.size());
  const double t = student_t_quantile(1.0 - (1.0 - level) / 2.0, n - 1.0);
  const double half = m.variance == 0.0 ? 0.0 : t * std::sqrt(m.variance / n);
  return {m.mean - half, m.mean + half, half};
}

ConfidenceInterval confidence_interval_95(std::span<const double> values) {
  return confidence_interval(values, 0.95);
}

WelchResult welch_t_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return {kNaN, kNaN, kNaN, false};
  const Moments ma = moments(a);
  const Moments mb = moments(b);
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double ua = ma.variance / na;  // squared standard error of each mean
  const double ub = mb.variance / nb;
  const double diff = ma.mean - mb.mean;
  WelchResult r;
  r.enough_data = true;
  if (ua + ub == 0.0) {  // both samples constant
    r.df = na + nb - 2.0;
    r.t = diff == 0.0 ? 0.0 : std::copysign(kInf, diff);
    r.p_value = diff == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.t = diff / std::sqrt(ua + ub);
  // Welch-Satterthwaite, scaled by the larger term so tiny variances do not underflow.
  const double scale = std::max(ua, ub);
  const double sa = ua / scale;
  const double sb = ub / scale;
  r.df = (sa + sb) * (sa + sb) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
  r.p_value = std::clamp(2.0 * student_t_upper_tail(std::abs(r.t), r.df), 0.0, 1.0);
  return r;
}

WelchResult paired_t_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || a.size() != b.size()) return {kNaN, kNaN, kNaN, false};
  std::vector<double> diffs(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) diffs[i] = a[i] - b[i];
  const Moments m = moments(diffs);
  const double n = static_cast<double>(diffs.size());
  WelchResult r;
  r.enough_data = true;
  r.df = n - 1.0;
  if (m.variance == 0.0) {  // every pair differs by the same amount
    r.t = m.mean == 0.0 ? 0.0 : std::copysign(kInf, m.mean);
    r.p_value = m.mean == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.t = m.mean / std::sqrt(m.variance / n);
  r.p_value = std::clamp(2.0 * student_t_upper_tail(std::abs(r.t), r.df), 0.0, 1.0);
  return r;
}

WelchResult paired_ratio_t_test(std::span<const double> a, std::span<const double> b) {
  const auto positive = [](double v) { return v > 0.0; };
  if (!std::ranges::all_of(a, positive) || !std::ranges::all_of(b, positive)) {
    return paired_t_test(a, b);
  }
  std::vector<double> log_a(a.size());
  std::vector<double> log_b(b.size());
  std::ranges::transform(a, log_a.begin(), [](double v) { return std::log(v); });
  std::ranges::transform(b, log_b.begin(), [](double v) { return std::log(v); });
  return paired_t_test(log_a, log_b);
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0.0) || !(b > 0.0) || !(x >= 0.0 && x <= 1.0)) return kNaN;
  return incomplete_beta(a, b, x, 1.0 - x);
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0.0)) return kNaN;
  const double upper = student_t_upper_tail(std::abs(t), df);
  return t >= 0.0 ? 1.0 - upper : upper;
}

double student_t_quantile(double p, double df) {
  if (!(p >= 0.0 && p <= 1.0) || !(df > 0.0)) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  if (p == 0.5) return 0.0;
  // Solve on the upper tail q = P(T > t), which keeps precision for p close to 1.
  const bool upper_half = p > 0.5;
  const double q = upper_half ? 1.0 - p : p;
  double lo = 0.0;
  double hi = 1.0;
  while (student_t_upper_tail(hi, df) > q) {
    lo = hi;
    hi *= 2.0;
    if (std::isinf(hi)) return upper_half ? kInf : -kInf;
  }
  for (int i = 0; i < 2000; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;  // adjacent doubles: converged
    if (student_t_upper_tail(mid, df) > q) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const double t = 0.5 * (lo + hi);
  return upper_half ? t : -t;
}

}  // namespace volley::analysis
