// Every TCP and UDP profile in uperf's tests/ and workloads/ (copied unchanged, with a header
// naming the source, under tests/data/profiles/uperf/) parses and validates, as `volley check`
// does; the one uperf itself keeps as a parse error (tests/parse_err.xml) fails with a message that
// names the likely cause. docs/uperf-compatibility.md lists each profile with its status.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/paths.hpp"
#include "volley/core/source_map.hpp"
#include "volley/profile/parser.hpp"

namespace volley::profile {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> uperf_profiles() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(test::data_dir() / "profiles" / "uperf")) {
    if (entry.path().extension() == ".xml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// What uperf's tests/test.sh and a user give them: the environment of a loopback run.
Variables uperf_variables() {
  Variables v;
  v.environment = {{"h", "127.0.0.1"},  {"h1", "127.0.0.1"}, {"h2", "127.0.0.1"},
                   {"h3", "127.0.0.1"}, {"h4", "127.0.0.1"}, {"proto", "tcp"},
                   {"nthr", "2"},       {"iter", "10"},      {"duration", "10s"},
                   {"conn", "1"}};
  return v;
}

std::string diagnostics_of(const std::string& name, bool* ok) {
  const std::string label = "uperf/" + name;
  const std::string text = test::read_file(test::data_dir() / "profiles" / label);
  const ParseResult result = parse_profile(text, label, uperf_variables());
  core::SourceMap sources;
  sources.add(label, text);
  *ok = result.profile.has_value();
  return result.diagnostics.format(&sources);
}

class UperfProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(UperfProfile, PassesCheck) {
  bool ok = false;
  const std::string diagnostics = diagnostics_of(GetParam(), &ok);
  if (GetParam() == "tests-parse_err.xml") {
    EXPECT_FALSE(ok);
    EXPECT_NE(diagnostics.find("<goup> (line 5) is closed by </group>: did you mean <group>?"),
              std::string::npos)
        << diagnostics;
    return;
  }
  EXPECT_TRUE(ok) << diagnostics;
}

std::string uperf_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 4);
  std::replace_if(
      name.begin(), name.end(),
      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) == 0; }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Uperf, UperfProfile, ::testing::ValuesIn(uperf_profiles()),
                         uperf_test_name);

// uperf's 34 TCP profiles (tests-*, workloads-*), its two SSL ones, and the three the liveness
// suite runs with --local (accept-tcp, canfail with its stray end tag fixed, disconnect_iter):
// 37 TCP (tests/parse_err.xml and two copies of tests/ files under their older names included),
// 7 UDP and 2 SSL (tests/01simple_ssl.xml, workloads/ssl.xml).
TEST(UperfProfiles, AllTcpUdpAndSslProfilesAreHere) { EXPECT_EQ(uperf_profiles().size(), 46U); }

}  // namespace
}  // namespace volley::profile
