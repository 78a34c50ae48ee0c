// Reference values were computed with mpmath 1.3 at 40 digits (betainc + findroot); the Welch
// example is Wikipedia's "Welch's t-test" example 1 (t = -2.46, df = 25.0, p = 0.021).
#include "volley/analysis/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace volley::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(StudentTQuantileTest, KnownTwoSided95Values) {
  struct Case {
    double df;
    double t975;
    double t95;
  };
  const Case cases[] = {
      {1, 12.7062047361747, 6.31375151467504},   {2, 4.30265272974946, 2.91998558035373},
      {3, 3.18244630528371, 2.35336343480182},   {4, 2.77644510519779, 2.13184678632665},
      {5, 2.57058183563632, 2.01504837333302},   {10, 2.22813885198627, 1.81246112281168},
      {20, 2.08596344726586, 1.72471824292079},  {30, 2.04227245630124, 1.69726088659396},
      {100, 1.98397151852355, 1.66023432608534}, {1000, 1.96233908082641, 1.64637881728546},
      {2.5, 3.57465484200368, 2.55821861413594}, {24.9, 2.05995803245983, 1.70840461109972},
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(student_t_quantile(0.975, c.df), c.t975, 1e-10 * c.t975) << "df=" << c.df;
    EXPECT_NEAR(student_t_quantile(0.95, c.df), c.t95, 1e-10 * c.t95) << "df=" << c.df;
    EXPECT_NEAR(student_t_quantile(0.025, c.df), -c.t975, 1e-10 * c.t975) << "df=" << c.df;
  }
  // The values quoted in every table.
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302653, 5e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445, 5e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228139, 5e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272, 5e-7);
  EXPECT_NEAR(student_t_quantile(0.975, kInf), 1.959963984540054, 1e-12);  // normal
}

TEST(StudentTQuantileTest, EdgesAndInverse) {
  EXPECT_EQ(student_t_quantile(0.5, 7), 0.0);
  EXPECT_EQ(student_t_quantile(0.0, 7), -kInf);
  EXPECT_EQ(student_t_quantile(1.0, 7), kInf);
  EXPECT_TRUE(std::isnan(student_t_quantile(1.5, 7)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.9, 0)));
  EXPECT_TRUE(std::isnan(student_t_quantile(std::nan(""), 3)));
  for (const double df : {1.0, 3.0, 12.5, 200.0}) {
    for (const double p : {1e-9, 0.01, 0.3, 0.7, 0.999, 1 - 1e-9}) {
      EXPECT_NEAR(student_t_cdf(student_t_quantile(p, df), df), p, 1e-12 + 1e-9 * p)
          << "df=" << df << " p=" << p;
    }
  }
}

TEST(StudentTCdfTest, SymmetryAndKnownValue) {
  EXPECT_DOUBLE_EQ(student_t_cdf(0.0, 5), 0.5);
  EXPECT_NEAR(student_t_cdf(2.0, 5) + student_t_cdf(-2.0, 5), 1.0, 1e-15);
  // Cauchy (df = 1): CDF(1) = 3/4 exactly.
  EXPECT_NEAR(student_t_cdf(1.0, 1), 0.75, 1e-14);
  EXPECT_NEAR(student_t_cdf(4.30265272974946, 2), 0.975, 1e-13);
  EXPECT_EQ(student_t_cdf(kInf, 3), 1.0);
  EXPECT_EQ(student_t_cdf(-kInf, 3), 0.0);
  EXPECT_TRUE(std::isnan(student_t_cdf(1.0, -1)));
}

TEST(IncompleteBetaTest, KnownValues) {
  EXPECT_NEAR(regularized_incomplete_beta(2, 3, 0.3), 0.3483, 1e-14);  // a polynomial
  EXPECT_NEAR(regularized_incomplete_beta(0.5, 10, 0.9), 0.99999999998151973, 1e-15);
  EXPECT_NEAR(regularized_incomplete_beta(50, 60, 0.5), 0.83090729390166941, 1e-13);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 0.0), 0.0);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 1.0), 1.0);
  EXPECT_TRUE(std::isnan(regularized_incomplete_beta(0, 3, 0.5)));
  EXPECT_TRUE(std::isnan(regularized_incomplete_beta(2, 3, 1.5)));
}

TEST(SummarizeTest, Basic) {
  const std::vector<double> v = {4, 1, 3, 2, 10};
  const auto s = summarize(v);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(12.5));  // squares 0 9 1 4 36 = 50, / 4
  const std::vector<double> even = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(summarize(even).median, 2.5);
}

TEST(SummarizeTest, EmptyAndSingle) {
  const auto e = summarize({});
  EXPECT_EQ(e.n, 0u);
  EXPECT_TRUE(std::isnan(e.mean));
  EXPECT_TRUE(std::isnan(e.median));
  const std::vector<double> one = {7.5};
  const auto s = summarize(one);
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.mean, 7.5);
  EXPECT_EQ(s.median, 7.5);
  EXPECT_TRUE(std::isnan(s.stddev));
}

TEST(SummarizeTest, LargeOffsetKeepsPrecision) {
  // Variance 1 around 1e9: a one-pass sum-of-squares formula would lose every digit.
  const std::vector<double> v = {1e9 - 1, 1e9, 1e9 + 1};
  EXPECT_DOUBLE_EQ(summarize(v).stddev, 1.0);
}

TEST(ConfidenceIntervalTest, KnownInterval) {
  const std::vector<double> v = {10.2, 9.8, 10.5, 10.1, 9.9, 10.4};
  const auto ci = confidence_interval_95(v);
  EXPECT_NEAR(ci.half_width, 0.28739978631044944, 1e-12);
  EXPECT_NEAR(ci.low, 10.15 - 0.28739978631044944, 1e-12);
  EXPECT_NEAR(ci.high, 10.15 + 0.28739978631044944, 1e-12);
  const auto wider = confidence_interval(v, 0.99);
  EXPECT_GT(wider.half_width, ci.half_width);
}

TEST(ConfidenceIntervalTest, TooFewOrConstant) {
  const std::vector<double> one = {3.0};
  EXPECT_TRUE(std::isnan(confidence_interval_95(one).half_width));
  EXPECT_TRUE(std::isnan(confidence_interval_95({}).low));
  const std::vector<double> same = {2.0, 2.0, 2.0};
  const auto ci = confidence_interval_95(same);
  EXPECT_EQ(ci.half_width, 0.0);
  EXPECT_EQ(ci.low, 2.0);
  EXPECT_EQ(ci.high, 2.0);
  EXPECT_TRUE(std::isnan(confidence_interval(same, 1.0).low));
}

TEST(WelchTTest, WikipediaExampleOne) {
  const std::vector<double> a1 = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                  21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  const std::vector<double> a2 = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                  24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  const auto r = welch_t_test(a1, a2);
  ASSERT_TRUE(r.enough_data);
  EXPECT_NEAR(r.t, -2.4553563982860045, 1e-12);
  EXPECT_NEAR(r.df, 24.988529290231414, 1e-10);
  EXPECT_NEAR(r.p_value, 0.02137800146286706, 1e-12);
  const auto swapped = welch_t_test(a2, a1);
  EXPECT_NEAR(swapped.t, 2.4553563982860045, 1e-12);
  EXPECT_NEAR(swapped.p_value, r.p_value, 1e-15);
}

TEST(WelchTTest, UnequalSizesAndVariances) {
  const std::vector<double> c1 = {19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0};
  const std::vector<double> c2 = {28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7,
                                  23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 24.0, 13.2};
  const auto r = welch_t_test(c1, c2);
  EXPECT_NEAR(r.t, -2.2192409158236251, 1e-12);
  EXPECT_NEAR(r.df, 24.496223124201238, 1e-10);
  EXPECT_NEAR(r.p_value, 0.035972271029796703, 1e-12);
  const std::vector<double> x = {1.0, 2.0, 3.0};
  const std::vector<double> y = {10.0, 10.5};
  const auto small = welch_t_test(x, y);
  EXPECT_NEAR(small.t, -13.112870334943934, 1e-11);
  EXPECT_NEAR(small.df, 2.635036496350365, 1e-12);
  EXPECT_NEAR(small.p_value, 0.0017930717999468382, 1e-13);
}

TEST(WelchTTest, NotEnoughData) {
  const std::vector<double> one = {1.0};
  const std::vector<double> two = {1.0, 2.0};
  const auto r = welch_t_test(one, two);
  EXPECT_FALSE(r.enough_data);
  EXPECT_TRUE(std::isnan(r.p_value));
  EXPECT_FALSE(welch_t_test(two, {}).enough_data);
}

TEST(WelchTTest, ZeroVarianceBothSides) {
  const std::vector<double> a = {5.0, 5.0, 5.0};
  const std::vector<double> b = {5.0, 5.0};
  const std::vector<double> c = {6.0, 6.0, 6.0, 6.0};
  const auto same = welch_t_test(a, b);
  EXPECT_TRUE(same.enough_data);
  EXPECT_EQ(same.p_value, 1.0);
  EXPECT_EQ(same.t, 0.0);
  EXPECT_EQ(same.df, 3.0);
  const auto differ = welch_t_test(a, c);
  EXPECT_EQ(differ.p_value, 0.0);
  EXPECT_EQ(differ.t, -kInf);
  // One constant side: df comes from the other side alone (n - 1).
  const std::vector<double> varied = {4.0, 5.0, 6.0, 7.0};
  const auto one_side = welch_t_test(a, varied);
  EXPECT_NEAR(one_side.df, 3.0, 1e-12);
  EXPECT_GT(one_side.p_value, 0.0);
  EXPECT_LT(one_side.p_value, 1.0);
}

}  // namespace
}  // namespace volley::analysis

namespace volley::analysis {
namespace {

// Differences 1, 2, 3, 1, 3: mean 2, standard deviation 1, t = 2 / (1 / sqrt(5)) = 4.472 with
// 4 degrees of freedom, p = 0.011056 (numerical integration of Student's t density).
TEST(PairedTTest, KnownValue) {
  const std::vector<double> a{11, 12, 13, 11, 13};
  const std::vector<double> b{10, 10, 10, 10, 10};
  const WelchResult r = paired_t_test(a, b);
  ASSERT_TRUE(r.enough_data);
  EXPECT_NEAR(r.t, 4.472136, 1e-6);
  EXPECT_DOUBLE_EQ(r.df, 4.0);
  EXPECT_NEAR(r.p_value, 0.011056, 1e-5);
}

// Drift shared by the rounds: each pair differs by about 1 while the rounds wander by 100.
// Welch's test sees the wander as noise; the paired test sees the constant difference.
TEST(PairedTTest, PairingRemovesWhatTheRoundsShare) {
  const std::vector<double> a{101, 200.8, 301.2, 401, 500.9};
  const std::vector<double> b{100, 200, 300, 400, 500};
  EXPECT_GT(welch_t_test(a, b).p_value, 0.9);
  EXPECT_LT(paired_t_test(a, b).p_value, 0.001);
}

TEST(PairedTTest, NotEnoughOrUnequalData) {
  EXPECT_FALSE(paired_t_test(std::vector<double>{1}, std::vector<double>{2}).enough_data);
  EXPECT_FALSE(paired_t_test(std::vector<double>{1, 2}, std::vector<double>{2}).enough_data);
  const WelchResult same = paired_t_test(std::vector<double>{1, 2}, std::vector<double>{1, 2});
  EXPECT_DOUBLE_EQ(same.p_value, 1.0);
  const WelchResult shifted = paired_t_test(std::vector<double>{2, 3}, std::vector<double>{1, 2});
  EXPECT_DOUBLE_EQ(shifted.p_value, 0.0);
}

// A tuning that multiplies a rate by about 65 in each of three rounds, while the rounds' own
// speed wanders by three times: the amounts vary too much for the paired test on differences
// (p about 0.09), the factors are steady (p below 0.01).
TEST(PairedRatioTTest, JudgesAFactorThatHoldsAcrossRoundsOfDifferentSpeed) {
  const std::vector<double> usual{30000, 65000, 100000};
  const std::vector<double> small{1000, 1000, 1000};
  EXPECT_GT(paired_t_test(usual, small).p_value, 0.05);
  const WelchResult r = paired_ratio_t_test(usual, small);
  ASSERT_TRUE(r.enough_data);
  EXPECT_LT(r.p_value, 0.01);
  EXPECT_GT(r.t, 0.0);
}

// Every pair differs by the factor 2 while the pairs' amounts differ a hundredfold: certain.
TEST(PairedRatioTTest, AConstantFactorIsCertain) {
  const WelchResult r =
      paired_ratio_t_test(std::vector<double>{2, 20, 200}, std::vector<double>{1, 10, 100});
  EXPECT_LT(r.p_value, 1e-9);
  EXPECT_GT(paired_t_test(std::vector<double>{2, 20, 200}, std::vector<double>{1, 10, 100}).p_value,
            0.2);
}

// A zero (no transaction in one run) has no logarithm: the values' own differences are tested.
TEST(PairedRatioTTest, ValuesThatAreNotPositiveAreTestedByTheirDifferences) {
  const std::vector<double> a{0, 1, 2};
  const std::vector<double> b{1, 2, 4};
  const WelchResult ratio = paired_ratio_t_test(a, b);
  const WelchResult plain = paired_t_test(a, b);
  EXPECT_DOUBLE_EQ(ratio.t, plain.t);
  EXPECT_DOUBLE_EQ(ratio.p_value, plain.p_value);
}

}  // namespace
}  // namespace volley::analysis
