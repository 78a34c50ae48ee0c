// The HTML pages as a browser sees them: a sweep, the comparison of two sweeps, a search and a
// run, each written by the real CLI against a local slave, then loaded in headless Chromium. The
// DOM Chromium builds must hold the charts with their data (a line through every point) and, on the
// comparison page, the verdicts; and the page must paint (a screenshot with content). Skipped,
// saying so, where Chromium is not installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/local_run.hpp"
#include "support/paced_profile.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kChromium = "/usr/bin/chromium";

/// The DOM headless Chromium builds from `page`, and a screenshot of it into `png`. Its profile
/// lives beside the page, not in the user's home.
std::string rendered_dom(const fs::path& page, const fs::path& png) {
  const std::vector<std::string> common{
      kChromium,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--window-size=1200,2400",
      "--user-data-dir=" + (page.parent_path() / "chromium-profile").string()};
  std::vector<std::string> shot = common;
  shot.push_back("--screenshot=" + png.string());
  shot.push_back("file://" + page.string());
  Process(shot).wait(60s);
  std::vector<std::string> dump = common;
  dump.push_back("--dump-dom");
  dump.push_back("file://" + page.string());
  return Process(dump).wait(60s).out;
}

/// The number of chart lines in `dom` that join at least `points` points.
std::size_t lines_with(const std::string& dom, std::size_t points) {
  std::size_t n = 0;
  for (auto at = dom.find("<polyline"); at != std::string::npos;
       at = dom.find("<polyline", at + 1)) {
    const auto end = dom.find('>', at);
    const auto attr = dom.find("points=\"", at);
    if (end == std::string::npos || attr == std::string::npos || attr > end) continue;
    const auto from = attr + 8;
    const auto to = dom.find('"', from);
    if (to == std::string::npos) continue;
    const auto commas = std::count(dom.begin() + static_cast<std::ptrdiff_t>(from),
                                   dom.begin() + static_cast<std::ptrdiff_t>(to), ',');
    if (static_cast<std::size_t>(commas) >= points) ++n;
  }
  return n;
}

void expect_page(const fs::path& page, const fs::path& png, std::size_t points,
                 const std::string& must_hold) {
  ASSERT_TRUE(fs::exists(page)) << page;
  const std::string dom = rendered_dom(page, png);
  ASSERT_FALSE(dom.empty()) << "Chromium built no DOM from " << page;
  EXPECT_GE(lines_with(dom, points), 3U)
      << page << ": fewer than 3 charts with a line through " << points << " points";
  EXPECT_NE(dom.find(must_hold), std::string::npos) << page << " lacks " << must_hold;
  ASSERT_TRUE(fs::exists(png)) << "no screenshot of " << page;
  EXPECT_GT(fs::file_size(png), 20'000U) << "a blank page: " << page;
}

TEST(HtmlPages, SweepComparisonAndSearchRenderWithTheirDataInChromium) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << kChromium << " is not installed";
  TempDir dir;
  const auto profile = dir.write("paced.xml", paced_think_profile("$t", "$h", "400ms", "20ms"));
  const auto sweep =
      run_volley({"sweep", profile, "--local", "--set", "r=10", "--vary", "t=1,2,4", "-n", "3",
                  "--json", dir.path() / "s.json", "--html", dir.path() / "s.html", "-q"},
                 120s);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  expect_page(dir.path() / "s.html", dir.path() / "s.png", 3, "<table");

  const auto compare = run_volley(
      {"compare", dir.path() / "s.json", dir.path() / "s.json", "--html", dir.path() / "c.html"},
      30s);
  ASSERT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  expect_page(dir.path() / "c.html", dir.path() / "c.png", 3, "class=\"verdict");

  const auto search =
      run_volley({"search", profile, "--local", "--set", "t=1", "--vary", "r=5..200", "--precision",
                  "20", "--target", "p99<=60ms", "--html", dir.path() / "f.html", "-q"},
                 120s);
  ASSERT_EQ(search.exit_code, 0) << search.out << search.err;
  expect_page(dir.path() / "f.html", dir.path() / "f.png", 3, "volley search");
}

// A run's page: per interval, each transaction's rate and p99, five TCP figures of both ends
// (a solid line for the master's connections, a dashed one for the slave's) and each host's
// kernel counters that moved (a ping-pong moves Tcp.OutSegs on both); then the kernel counters
// over the timed part. Without TCP_INFO the page says there are no TCP figures instead of drawing
// zeros.
TEST(HtmlPages, ARunsPageChartsRateLatencyAndBothEndsTcpStatePerInterval) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << kChromium << " is not installed";
  TempDir dir;
  const auto profile = dir.write("pp.xml", pingpong("2", "2s"));
  const auto run = run_volley(
      {"run", profile, "--local", "-i", "100ms", "--html", dir.path() / "r.html", "-q"}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const fs::path page = dir.path() / "r.html";
  ASSERT_TRUE(fs::exists(page));
  const std::string dom = rendered_dom(page, dir.path() / "r.png");
  ASSERT_FALSE(dom.empty());
  // 2 s of 100 ms intervals: rate and p99 of the timed transaction, each of the five TCP
  // figures on both ends and Tcp.OutSegs on both hosts, each a line through several intervals
  // (at least 3, should the machine be so loaded that intervals stretch).
  EXPECT_GE(lines_with(dom, 3), 14U) << dom;
  EXPECT_NE(dom.find("stroke-dasharray"), std::string::npos) << "no slave's line";
  for (const char* text : {"Transactions per second", "TCP round-trip time", "Congestion window",
                           "Retransmits", "limited by the receive window",
                           "limited by the send buffer", "Kernel counters over the timed part",
                           "What limited the run", "Tcp.OutSegs per interval"}) {
    EXPECT_NE(dom.find(text), std::string::npos) << "the page lacks " << text;
  }
  EXPECT_GT(fs::file_size(dir.path() / "r.png"), 20'000U);

  const auto off = run_volley({"run", profile, "--local", "-i", "100ms", "--no-tcp-info", "--html",
                               dir.path() / "off.html", "-q"},
                              60s);
  ASSERT_EQ(off.exit_code, 0) << off.out << off.err;
  const std::string off_dom = rendered_dom(dir.path() / "off.html", dir.path() / "off.png");
  EXPECT_NE(off_dom.find("No TCP figures"), std::string::npos) << off_dom;
  EXPECT_EQ(off_dom.find("TCP round-trip time"), std::string::npos);
}

}  // namespace
}  // namespace volley::test
