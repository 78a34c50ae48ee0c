// The parser must never crash, hang or take long on any input: truncated files, random bytes,
// huge numbers, deep nesting, enormous values. Each input gets a time budget well under 1 s.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "support/paths.hpp"
#include "volley/core/source_map.hpp"
#include "volley/profile/parser.hpp"

namespace volley::profile {
namespace {

using Clock = std::chrono::steady_clock;

Variables vars() {
  Variables v;
  v.bindings = {{"h", "127.0.0.1"}, {"t", "2"}, {"proto", "tcp"}, {"file", "/etc/hostname"}};
  return v;
}

/// Parses and formats `text`, checking the invariants every result must keep.
void parse_checked(const std::string& text) {
  const ParseResult r = parse_profile(text, "fuzz.xml", vars());
  EXPECT_EQ(r.profile.has_value(), !r.diagnostics.has_errors());
  core::SourceMap sources;
  sources.add("fuzz.xml", text);
  const std::string formatted = r.diagnostics.format(&sources);
  if (!r.profile) {
    EXPECT_NE(formatted.find("error:"), std::string::npos);
  }
}

/// Parses a hostile input. The bound is not a speed test (timings are measured, not asserted:
/// these take milliseconds) but a guard against quadratic blow-ups and hangs, which turn
/// milliseconds into minutes; it is wide enough for sanitizer builds on a loaded machine.
void expect_fast(const std::string& text, const char* what) {
  const auto start = Clock::now();
  parse_checked(text);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20)) << what;
}

std::string sample_profile() {
  return test::read_file(test::data_dir() / "profiles" / "good" / "rand_count_conn.xml");
}

TEST(Robustness, EveryTruncation) {
  const std::string text = sample_profile();
  ASSERT_FALSE(text.empty());
  const auto start = Clock::now();
  for (std::size_t n = 0; n <= text.size(); ++n) parse_checked(text.substr(0, n));
  // A guard against a blow-up, as expect_fast's: the loop takes ~100 ms; a loaded machine (or
  // the strace run of scripts/tsan-suites.sh) stretches that, a quadratic parser by far more.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
}

TEST(Robustness, RandomByteFlips) {
  const std::string text = sample_profile();
  std::mt19937 rng(12345);  // fixed seed: failures reproduce
  std::uniform_int_distribution<std::size_t> pos(0, text.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 300; ++i) {
    std::string mutated = text;
    for (int k = 0; k < 4; ++k) mutated[pos(rng)] = static_cast<char>(byte(rng));
    parse_checked(mutated);
  }
}

TEST(Robustness, RandomGarbage) {
  std::mt19937 rng(777);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string alphabet = "<>/=\"' $ {}&;#x\n\tabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    for (int k = 0; k < 200; ++k) {
      s += (i % 2 == 0) ? static_cast<char>(byte(rng)) : alphabet[pick(rng)];
    }
    parse_checked(s);
    parse_checked("<profile>" + s);
  }
}

TEST(Robustness, HugeNumbersAndValues) {
  const std::string big(5000, '9');
  const std::string body = "<flowop type=\"write\" options=\"size=" + big + " count=" + big +
                           "k\"/>"
                           "<flowop type=\"think\" options=\"duration=" +
                           big +
                           "h\"/>"
                           "<flowop type=\"read\" options=\"size=rand(" +
                           big + "," + big +
                           ")\"/>"
                           "<flowop type=\"connect\" options=\"remotehost=$h protocol=tcp port=" +
                           big + " conn=" + big + "\"/>";
  expect_fast("<profile><group nthreads=\"" + big + "\"><transaction iterations=\"" + big +
                  "\" rate=\"" + big + "\">" + body + "</transaction></group></profile>",
              "huge numbers");
  expect_fast("<profile><group><transaction duration=\"1." + big + "s\">" + body +
                  "</transaction></group></profile>",
              "long fraction");
}

TEST(Robustness, EnormousNames) {
  const std::string name(200000, 'q');
  expect_fast("<profile><group><transaction><flowop type=\"" + name + "\" options=\"" + name +
                  "=1\"/></transaction></group></profile>",
              "huge names");
}

TEST(Robustness, ManyUnsetVariables) {
  std::string many_vars;
  for (int i = 0; i < 20000; ++i) many_vars += "$unset" + std::to_string(i) + " ";
  expect_fast("<profile><group><transaction><flowop type=\"read\" options=\"" + many_vars +
                  "\"/></transaction></group></profile>",
              "many unset variables");
}

TEST(Robustness, ManyDuplicateOptions) {
  std::string many_options;
  for (int i = 0; i < 20000; ++i) many_options += "size=1 ";
  expect_fast("<profile><group><transaction><flowop type=\"read\" options=\"" + many_options +
                  "\"/></transaction></group></profile>",
              "many duplicate options");
}

TEST(Robustness, ManyFlowopsWithoutAConnection) {
  std::string many_flowops;
  for (int i = 0; i < 20000; ++i) many_flowops += "<flowop type=\"read\" options=\"size=1\"/>\n";
  expect_fast("<profile><group><transaction>" + many_flowops + "</transaction></group></profile>",
              "many flowops without a connection");
}

TEST(Robustness, DeepNestingAndOddXml) {
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "<profile>";
  expect_fast(deep, "deep nesting");
  expect_fast(std::string("<profile>\0</profile>", 20), "embedded NUL");
  expect_fast("\xEF\xBB\xBF<profile/>", "BOM");
  expect_fast("<profile a='1' a='2' a='3'/>", "duplicates");
  expect_fast("<?xml version=\"1.0\"?><!DOCTYPE p [<!ENTITY e \"x\">]><profile>&e;</profile>",
              "doctype entity");
  expect_fast("<profile><group nthreads=\"&#0;\"/></profile>", "char ref zero");
  expect_fast("<profile name=\"${\"/>", "unterminated variable");
  expect_fast("<profile name=\"$\"/>", "lone dollar");
}

}  // namespace
}  // namespace volley::profile
