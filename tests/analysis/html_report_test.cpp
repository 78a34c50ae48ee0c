#include "volley/analysis/html_report.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace volley::analysis {
namespace {

using nlohmann::json;

json fake_run(double tps) {
  json timed = {{"step", 0}, {"latency_ns", {{"p50", 1000}, {"p99", 5000}, {"p99_9", 9000}}}};
  return json{{"status", "ok"},
              {"timed_steps", {0}},
              {"groups", {{{"transactions", {timed}}}}},
              {"totals", {{"transactions_per_s", tps}, {"errors", {{"total", 0}}}}},
              {"cpu",
               {{"local", {{"service_demand", {{"process_us_per_transaction", 10.0}}}}},
                {"remote", {{{"service_demand", {{"process_us_per_transaction", 12.0}}}}}}}}};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

Series sweep(const std::vector<int>& values) {
  Series s;
  s.vary_name = "t";
  s.log_x = true;
  for (const int v : values)
    s.points.push_back(SweepPoint{v, {fake_run(v * 100.0), fake_run(v * 110.0)}});
  return s;
}

TEST(HtmlReportTest, ThreeChartsWithAPointPerMeasuredValue) {
  const std::string html = render_html_report("sweep <t>", {{"sweep", sweep({1, 4, 16, 64})}});
  EXPECT_EQ(count(html, "<svg"), 3U);
  // 4 values: 4 on the rate chart, 4 on p99, 4 + 4 on CPU per transaction (both sides).
  EXPECT_EQ(count(html, "class=\"point\""), 16U);
  EXPECT_EQ(count(html, "class=\"ci\""), 4U);  // error bars: two repeats give an interval
  EXPECT_NE(html.find("(log scale)"), std::string::npos);
  EXPECT_NE(html.find("sweep &lt;t&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the namespace
  EXPECT_EQ(count(html, "<tr>"), 5U);  // header + a row per point
}

// A comparison's page says what changed, by how much, whether it is more than noise, and which
// settings differed, before its charts.
TEST(HtmlReportTest, ComparisonPageHasAVerdictPerRowAndTheSettingsThatDiffered) {
  Series base = sweep({1, 4});
  Series next = sweep({1, 4});
  for (auto& p : next.points) {
    for (auto& run : p.runs)
      run["totals"]["transactions_per_s"] = run["totals"]["transactions_per_s"].get<double>() * 0.5;
  }
  base.system_local = json{{"sysctl", {{"net.core.rps_sock_flow_entries", "0"}}}};
  next.system_local = json{{"sysctl", {{"net.core.rps_sock_flow_entries", "32768"}}}};
  const Comparison c = compare_series(base, next);
  const std::string html = render_html_report("compare", {{"base", base}, {"new", next}}, &c);
  EXPECT_EQ(count(html, "<table class=\"verdicts\">"), 2U);  // a table per point
  EXPECT_EQ(count(html, "class=\"verdict worse\""), 2U);     // transactions/s halved at each
  EXPECT_NE(html.find("-50.0%"), std::string::npos);
  EXPECT_NE(html.find("rps_sock_flow_entries: 0 -&gt; 32768"), std::string::npos);
  EXPECT_NE(html.find("Too few repeats to judge"), std::string::npos);  // two runs a side
  EXPECT_LT(html.find("Verdicts"), html.find("<svg"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(HtmlReportTest, ComparisonDrawsBothSeries) {
  const std::string html =
      render_html_report("compare", {{"base", sweep({1, 4})}, {"new", sweep({1, 4, 16})}});
  EXPECT_EQ(count(html, "<svg"), 3U);
  EXPECT_EQ(count(html, "class=\"point\""), (2U + 3U) * 4U);
  EXPECT_NE(html.find(">base<"), std::string::npos);
  EXPECT_NE(html.find(">new<"), std::string::npos);
}

TEST(HtmlReportTest, LinearAxisAndWordsWork) {
  Series s = sweep({1, 2, 3});
  s.log_x = false;
  EXPECT_EQ(render_html_report("x", {{"sweep", s}}).find("(log scale)"), std::string::npos);
  Series words;
  words.points.push_back(SweepPoint{"tcp", {fake_run(1)}});
  words.points.push_back(SweepPoint{"udp", {fake_run(2)}});
  const std::string html = render_html_report("x", {{"sweep", words}});
  EXPECT_EQ(count(html, "class=\"point\""), 8U);
  EXPECT_NE(html.find(">udp<"), std::string::npos);
}

}  // namespace
}  // namespace volley::analysis
