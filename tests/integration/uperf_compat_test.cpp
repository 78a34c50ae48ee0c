// volley as a drop-in for uperf, end to end: the real binary started as `volley -s -P PORT` and
// run as `volley -v -a -R -i 1 -m profiles/pingpong.xml -P PORT`, the way benchmark-wrapper and
// k8s-netperf run uperf; their regular expressions (tests/data/uperf/wrapper-regexes.txt, copied
// with their source named) must read the same fields, in the same order, from volley's output as
// from uperf 1.0.8's (tests/data/uperf/uperf-1.0.8-raw.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/net.hpp"
#include "support/paths.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;

struct WrapperRegex {
  std::string name;
  std::string source;
  std::regex pattern;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<WrapperRegex> wrapper_regexes() {
  std::vector<WrapperRegex> out;
  for (const std::string& line : split_lines(read_file(data_dir() / "uperf/wrapper-regexes.txt"))) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab1 = line.find('\t');
    const auto tab2 = line.find('\t', tab1 + 1);
    out.push_back({line.substr(0, tab1), line.substr(tab1 + 1, tab2 - tab1 - 1),
                   std::regex(line.substr(tab2 + 1))});
  }
  return out;
}

/// Every match of `re` on each line (Python's re.findall and Go's FindAllStringSubmatch do not
/// let `.` cross a line end; pbench and crucible read line by line): the capture groups.
std::vector<std::vector<std::string>> matches(const std::regex& re, const std::string& text) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& line : split_lines(text)) {
    for (auto it = std::sregex_iterator(line.begin(), line.end(), re); it != std::sregex_iterator();
         ++it) {
      std::vector<std::string> groups;
      for (std::size_t g = 1; g < it->size(); ++g) groups.push_back((*it)[g]);
      out.push_back(std::move(groups));
    }
  }
  return out;
}

/// What a wrapper does with a field: "int" (int()/ParseFloat of digits), "decimal" (float()),
/// or "text".
std::string kind(const std::string& field) {
  static const std::regex integer("[0-9]+");
  static const std::regex decimal("[0-9]+\\.[0-9]+");
  if (std::regex_match(field, integer)) return "int";
  if (std::regex_match(field, decimal)) return "decimal";
  return "text";
}

/// The `name:` values of the raw lines, in order of first appearance.
std::vector<std::string> raw_names(const std::string& text) {
  static const std::regex name("^timestamp_ms:[0-9.]+ name:(\\S+) ");
  std::vector<std::string> out;
  for (const std::string& line : split_lines(text)) {
    std::smatch m;
    if (std::regex_search(line, m, name) &&
        std::find(out.begin(), out.end(), m[1].str()) == out.end()) {
      out.push_back(m[1].str());
    }
  }
  return out;
}

TEST(UperfCompat, WrapperRegexesReadTheSameFieldsAsFromUperf) {
  const std::string port = std::to_string(free_port());
  // uperf's -s listens on every address, which volley serves only with a key (or --insecure):
  // both sides get one, passed through the uperf command line like any volley option.
  TempDir dir;
  const auto key = dir.write("key", std::string(64, 'a') + "\n");
  std::filesystem::permissions(key, std::filesystem::perms::owner_read);
  SlaveProcess slave({VOLLEY_BINARY, "-s", "-P", port, "--key-file", key.string()}, "127.0.0.1",
                     static_cast<std::uint16_t>(std::stoi(port)));
  const auto r = run_volley(
      {"-v", "-a", "-R", "-i", "1", "-m", (source_dir() / "profiles/pingpong.xml").string(), "-P",
       port, "--set", "h=127.0.0.1", "--set", "t=2", "--key-file", key.string()},
      120s);
  slave.stop();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string uperf = read_file(data_dir() / "uperf/uperf-1.0.8-raw.txt");

  for (const WrapperRegex& w : wrapper_regexes()) {
    SCOPED_TRACE(w.name + " (" + w.source + ")");
    const auto ours = matches(w.pattern, r.out);
    const auto theirs = matches(w.pattern, uperf);
    ASSERT_FALSE(theirs.empty());
    ASSERT_FALSE(ours.empty()) << r.out;
    for (const auto& m : ours) {
      ASSERT_EQ(m.size(), theirs.front().size());
      for (std::size_t g = 0; g < m.size(); ++g)
        EXPECT_EQ(kind(m[g]), kind(theirs.front()[g])) << m[g];
    }
  }

  // The profile name as uperf prints it (lower-cased).
  std::smatch profile;
  ASSERT_TRUE(std::regex_search(r.out, profile, std::regex("running profile:(.*) \\.\\.\\.")));
  EXPECT_EQ(profile[1].str(), "tcp pingpong");

  // What the wrappers compute from Txn2 (snafu's get_results_from_stdout, k8s-netperf's
  // ParseResults): the first line is the zero reference at the release, then about one line per
  // second of the 10 s step; counters only grow, timestamps advance by at least 1 ms (pbench
  // divides by the whole-millisecond difference).
  const auto txn2 =
      matches(std::regex("timestamp_ms:(.*) name:Txn2 nr_bytes:(.*) nr_ops:(.*)"), r.out);
  ASSERT_GE(txn2.size(), 8U) << r.out;
  EXPECT_EQ(txn2.front()[1], "0");
  EXPECT_EQ(txn2.front()[2], "0");
  for (std::size_t i = 1; i < txn2.size(); ++i) {
    EXPECT_GE(std::stoull(txn2[i][1]), std::stoull(txn2[i - 1][1]));
    EXPECT_GE(std::stoull(txn2[i][2]), std::stoull(txn2[i - 1][2]));
    EXPECT_GE(std::stoull(txn2[i][0]), std::stoull(txn2[i - 1][0]) + 1);
  }
  // A ping-pong moves 64 bytes per operation (write 64, read 64): bytes = 64 x operations.
  EXPECT_EQ(std::stoull(txn2.back()[1]), 64 * std::stoull(txn2.back()[2]));
  EXPECT_GT(std::stoull(txn2.back()[2]), 0U);

  // Same names in the same order as uperf's (uperf's sample shows Txn2 and Total), then -a's
  // Group Details and Strand Details (-T: a line per strand, Thr0.. as uperf names its threads).
  const auto names = raw_names(r.out);
  EXPECT_EQ(names,
            (std::vector<std::string>{"Txn1", "Txn2", "Txn3", "Total", "Group0", "Thr0", "Thr1"}));
  // The strands' lines add up to the group's.
  const std::regex raw(
      "^timestamp_ms:\\S+ name:(Group0|Thr[01]) nr_bytes:([0-9]+) nr_ops:([0-9]+)$");
  std::uint64_t group_ops = 0;
  std::uint64_t strand_ops = 0;
  for (const auto& m : matches(raw, r.out))
    (m[0] == "Group0" ? group_ops : strand_ops) += std::stoull(m[2]);
  EXPECT_GT(strand_ops, 0U);
  EXPECT_EQ(strand_ops, group_ops);

  // -f's table: the cpu column has the master's CPU per execution of the step (a time, as uperf
  // prints it), for the ping-pong's write and read.
  const std::regex flowop_row("^(write|read) +([0-9]+) +(\\S+) +(\\S+) +(\\S+) +(\\S+) *$");
  const auto rows = matches(flowop_row, r.out);
  ASSERT_EQ(rows.size(), 2U) << r.out;
  for (const auto& row : rows)
    EXPECT_TRUE(std::regex_match(row[3], std::regex("[0-9]+\\.[0-9]{2}[num]?s"))) << row[3];

  // uperf's Run Statistics heading, and rows whose columns read as uperf's do.
  const std::string heading =
      "Hostname            Time       Data   Throughput   Operations      Errors";
  EXPECT_NE(uperf.find(heading), std::string::npos);
  EXPECT_NE(r.out.find(heading), std::string::npos);
  const std::regex row(
      "^(master|127\\.0\\.0\\.1) +[0-9.]+[num]?s +[0-9.]+[KMGT]?B +[0-9.]+[KMGT]?b/s +[0-9]+ "
      "+[0-9]+\\.[0-9]{2}$");
  EXPECT_EQ(matches(row, uperf).size(), 2U);
  EXPECT_EQ(matches(row, r.out).size(), 2U) << r.out;
  const std::regex difference(
      "^Difference\\(%\\) +(-?[0-9]+\\.[0-9]{2}% +){4}-?[0-9]+\\.[0-9]{2}%$");
  EXPECT_EQ(matches(difference, uperf).size(), 1U);
  EXPECT_EQ(matches(difference, r.out).size(), 1U) << r.out;
  // Master and slave counted the same bytes and operations: 0.00% on both.
  std::smatch diff;
  const std::string out = r.out;
  ASSERT_TRUE(
      std::regex_search(out, diff, std::regex("Difference\\(%\\) +\\S+ +(\\S+) +\\S+ +(\\S+)")));
  EXPECT_EQ(diff[1].str(), "0.00%");
  EXPECT_EQ(diff[2].str(), "0.00%");
}

TEST(UperfCompat, VersionUsageAndBadFlags) {
  const auto version = run_volley({"-V"}, 30s);
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("volley "), std::string::npos);
  const auto usage = run_volley({"-v", "-h"}, 30s);
  EXPECT_EQ(usage.exit_code, 0);
  EXPECT_NE(usage.out.find("-R"), std::string::npos);
  const auto both = run_volley({"-m", "x.xml", "-s"}, 30s);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("-m and -s"), std::string::npos);
  const auto interval = run_volley({"-vaR", "-i", "0", "-m", "x.xml"}, 30s);
  EXPECT_EQ(interval.exit_code, 2);
  EXPECT_NE(interval.err.find("-i '0'"), std::string::npos);
}

}  // namespace
}  // namespace volley::test
