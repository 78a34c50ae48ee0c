#include "volley/analysis/sweep_table.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace volley::analysis {
namespace {

using nlohmann::json;

json ok_run(double tps) {
  return json{{"status", "ok"}, {"totals", {{"transactions_per_s", tps}}}};
}

SweepPoint point(int value, const std::vector<double>& rates) {
  SweepPoint p{value, {}};
  for (const double r : rates) p.runs.push_back(ok_run(r));
  return p;
}

// Two runs give a 95% interval 12.7 standard errors wide: the table says why it is so wide,
// and for which values, rather than print "42.98k ± 181.53k" without a word.
TEST(SweepTableTest, TooFewRepeatsAreNamedByValue) {
  const std::string text =
      format_sweep_table("t", {point(1, {100, 110}), point(4, {300, 310, 305}), point(16, {500})});
  EXPECT_NE(text.find("too few repeats to judge at t=1,16"), std::string::npos) << text;
  EXPECT_NE(text.find("-n 5"), std::string::npos) << text;
}

TEST(SweepTableTest, EnoughRepeatsSayNothingMore) {
  const std::string text = format_sweep_table("t", {point(1, {100, 110, 105})});
  EXPECT_EQ(text.find("too few repeats"), std::string::npos) << text;
}

}  // namespace
}  // namespace volley::analysis
