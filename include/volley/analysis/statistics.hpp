#pragma once
/// \file
/// Small-sample statistics for comparing repeated runs (e.g. "is tuning B faster than A?"): sample
/// summaries, Student-t confidence intervals and Welch's unequal-variance t-test. Pure functions
/// over doubles, standard library only; no I/O and no knowledge of volley's result types.
/// Thread: any (every function is pure).

#include <cstddef>
#include <span>

namespace volley::analysis {

/// Descriptive statistics of a sample. With n == 0 every field but n is NaN; with n == 1 stddev
/// is NaN (the sample standard deviation needs two values).
struct Summary {
  std::size_t n = 0;
  double mean = 0;    ///< Arithmetic mean.
  double stddev = 0;  ///< Sample standard deviation (divides by n - 1).
  double min = 0;
  double max = 0;
  double median = 0;  ///< Middle value; mean of the two middle values when n is even.
};

/// Summary of `values` (copied and sorted internally; NaNs are not filtered). Thread: any.
[[nodiscard]] Summary summarize(std::span<const double> values);

/// A two-sided confidence interval for the mean: [low, high] = mean -/+ half_width.
struct ConfidenceInterval {
  double low = 0;
  double high = 0;
  double half_width = 0;
};

/// 95% interval for the mean of `values` using Student's t with n - 1 degrees of freedom:
/// half_width = t_{0.975, n-1} * s / sqrt(n). All fields NaN when n < 2. Thread: any.
[[nodiscard]] ConfidenceInterval confidence_interval_95(std::span<const double> values);

/// As above for any confidence `level` in (0, 1) (e.g. 0.99); NaN fields outside that range.
[[nodiscard]] ConfidenceInterval confidence_interval(std::span<const double> values, double level);

/// Result of Welch's two-sided t-test for a difference in means.
struct WelchResult {
  double t = 0;              ///< (mean(a) - mean(b)) / sqrt(var(a)/n_a + var(b)/n_b).
  double df = 0;             ///< Welch-Satterthwaite degrees of freedom.
  double p_value = 0;        ///< Two-sided: P(|T| >= |t|) under equal means.
  bool enough_data = false;  ///< False when either side has fewer than 2 values (all fields NaN).
};

/// Welch's t-test of `a` against `b`. When both samples have zero variance: p = 1 (t = 0) if the
/// means are equal, else p = 0 (t = +/-inf); df is then n_a + n_b - 2. Thread: any.
[[nodiscard]] WelchResult welch_t_test(std::span<const double> a, std::span<const double> b);

/// The paired two-sided t-test of `a` against `b` (a[i] and b[i] measured together, e.g. in one
/// round of an interleaved comparison): a one-sample t-test of the differences a[i] - b[i], with
/// n - 1 degrees of freedom. Pairing takes what the rounds share (drift of a machine between
/// rounds) out of the judgment. enough_data is false (fields NaN) with fewer than 2 pairs or
/// sizes that differ; constant differences give p = 1 when they are 0, else p = 0.
/// Thread: any.
[[nodiscard]] WelchResult paired_t_test(std::span<const double> a, std::span<const double> b);

/// The paired test on ratios: the paired t-test of log(a[i]) against log(b[i]), so a change that
/// multiplies a rate (as a tuning does: a rate twice as high in a fast round and a slow one) is
/// judged by how steady its factor is, not by how steady its amount is. Where any value is not
/// positive it is the paired t-test of the values themselves. Thread: any.
[[nodiscard]] WelchResult paired_ratio_t_test(std::span<const double> a, std::span<const double> b);

/// Regularized incomplete beta function I_x(a, b) for a, b > 0 and x in [0, 1] (continued
/// fraction, Numerical Recipes' betacf with modified Lentz); NaN outside the domain.
[[nodiscard]] double regularized_incomplete_beta(double a, double b, double x);

/// Student's t cumulative distribution P(T <= t) with `df` > 0 degrees of freedom (non-integer
/// allowed; infinite df gives the standard normal). NaN for df <= 0 or NaN input.
[[nodiscard]] double student_t_cdf(double t, double df);

/// Quantile t such that student_t_cdf(t, df) == p, for p in (0, 1) and df > 0 (bisection on the
/// CDF to full double precision); -inf / +inf at p == 0 / 1, NaN outside [0, 1] or for df <= 0.
[[nodiscard]] double student_t_quantile(double p, double df);

}  // namespace volley::analysis
