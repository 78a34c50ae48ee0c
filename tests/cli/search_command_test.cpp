// `volley search`'s refusals: a range, a target or a variable it cannot use is bad input (exit
// 2) with a sentence naming the option, before anything runs. The search itself runs in
// tests/integration/search_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/paths.hpp"
#include "support/process.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;

const std::string kPaced = (source_dir() / "profiles" / "paced-pingpong.xml").string();

TEST(SearchCommand, BadInputRunsNothing) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases{
      {{"--vary", "r=100", "--target", "p99<=1ms"}, "--vary 'r=100': expected NAME=LOW..HIGH"},
      {{"--vary", "r=100..10", "--target", "p99<=1ms"}, "0 < LOW < HIGH"},
      {{"--vary", "r=10..100", "--target", "p98<=1ms"}, "unknown percentile 'p98'"},
      {{"--vary", "r=10..100", "--target", "p99<1ms"}, "expected PERCENTILE<=DURATION"},
      {{"--vary", "x=10..100", "--target", "p99<=1ms", "--set", "r=5"}, "does not use $x"},
      {{"--vary", "x=10..100", "--target", "p99<=1ms"}, "variable 'r' is not set"},
      {{"--vary", "r=10..100", "--target", "p99<=1ms", "--set", "r=5"}, "both give 'r' a value"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"search", kPaced, "--local", "--set", "t=1"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const ProcessResult r = run_volley(args, 30s);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("searching"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace volley::test
