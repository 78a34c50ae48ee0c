// Runs the real `volley sweep` and `volley compare` on a 1-second ping-pong against a local
// slave (about 5 s in all).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/paths.hpp"

namespace volley::cli {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string output;  ///< stdout and stderr
};

/// Runs `volley ARGS` through the shell; stdout and stderr are captured together.
Outcome run_volley(const std::string& args) {
  Outcome out;
  const std::string command = std::string(VOLLEY_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.output.append(buffer, n);
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

/// A scratch directory removed at the end of the test.
class SweepCompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("volley-sweep-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::string profile = test::read_file(test::source_dir() / "profiles" / "pingpong.xml");
    const auto at = profile.find("duration=\"10s\"");
    ASSERT_NE(at, std::string::npos);
    profile.replace(at, 14, "duration=\"1s\"");
    std::ofstream(dir_ / "pingpong.xml") << profile;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(SweepCompareTest, SweepThenCompareWithItself) {
  const Outcome sweep =
      run_volley("sweep " + path("pingpong.xml") + " --local --vary t=1,2 -n 2" + " --json " +
                 path("s.json") + " --html " + path("s.html") + " -q");
  ASSERT_EQ(sweep.status, 0) << sweep.output;
  EXPECT_NE(sweep.output.find("txn/s"), std::string::npos) << sweep.output;

  nlohmann::json doc = nlohmann::json::parse(test::read_file(path("s.json")));
  EXPECT_EQ(doc["kind"], "sweep");
  ASSERT_EQ(doc["points"].size(), 2U);
  EXPECT_EQ(doc["points"][1]["value"], 2);
  EXPECT_EQ(doc["points"][1]["runs"].size(), 2U);
  EXPECT_GT(doc["points"][0]["summary"]["transactions_per_s"]["mean"].get<double>(), 0.0);
  EXPECT_TRUE(doc["system"]["local"].is_object());

  const std::string html = test::read_file(path("s.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);

  const Outcome same = run_volley("compare " + path("s.json") + " " + path("s.json"));
  EXPECT_EQ(same.status, 0) << same.output;
  EXPECT_NE(same.output.find("no significant change"), std::string::npos) << same.output;
  EXPECT_EQ(same.output.find("worse"), std::string::npos) << same.output;
  EXPECT_NE(same.output.find("no differences"), std::string::npos) << same.output;

  const Outcome missing = run_volley("compare " + path("s.json") + " " + path("missing.json"));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("missing.json"), std::string::npos) << missing.output;
}

TEST_F(SweepCompareTest, BadInputRunsNothing) {
  const Outcome bad_list = run_volley("sweep " + path("pingpong.xml") + " --local --vary t=1,,2");
  EXPECT_EQ(bad_list.status, 2) << bad_list.output;
  EXPECT_NE(bad_list.output.find("empty value"), std::string::npos) << bad_list.output;
  const Outcome unused = run_volley("sweep " + path("pingpong.xml") + " --local --vary zz=1,2");
  EXPECT_EQ(unused.status, 2) << unused.output;
  std::ofstream(path("not.json")) << "{ nope";
  const Outcome not_json = run_volley("compare " + path("not.json") + " " + path("not.json"));
  EXPECT_EQ(not_json.status, 2) << not_json.output;
  EXPECT_NE(not_json.output.find("is not JSON"), std::string::npos) << not_json.output;
}

// Each mistake in an interleaved comparison's sides is named before anything runs, and no
// command of the user's runs either.
TEST_F(SweepCompareTest, BadInterleaveRunsNothing) {
  const std::string ran = path("ran");
  const std::string touch = "'A=touch " + ran + "'";
  struct Case {
    std::string args;
    std::string says;
  };
  const Case cases[] = {
      {"--interleave " + touch, "given twice"},
      {"--interleave " + touch + " --interleave 'A=true'", "names the side 'A' twice"},
      {"--interleave " + touch + " --interleave 'B= '", "the command is empty"},
      {"--interleave " + touch + " --interleave 'no equals sign'", "expected NAME=COMMAND"},
      {"--interleave " + touch + " --interleave 'B=true' --vary t=1,2", "excludes"},
      {"", "--vary NAME=LIST or --interleave"},
  };
  for (const Case& c : cases) {
    const Outcome out = run_volley("sweep " + path("pingpong.xml") + " --local " + c.args);
    EXPECT_EQ(out.status, 2) << c.args << "\n" << out.output;
    EXPECT_NE(out.output.find(c.says), std::string::npos) << c.args << "\n" << out.output;
  }
  EXPECT_FALSE(fs::exists(ran));
}

}  // namespace
}  // namespace volley::cli
