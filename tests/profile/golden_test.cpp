// Golden diagnostics (ninja's ParserTest style): every tests/data/profiles/bad/NAME.xml must
// produce exactly the text in NAME.expected, and every good/*.xml must parse without errors.
// VOLLEY_UPDATE_GOLDEN=1 rewrites the .expected files; review the diff before committing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/paths.hpp"
#include "volley/core/source_map.hpp"
#include "volley/profile/parser.hpp"

namespace volley::profile {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> profiles_in(const std::string& sub) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(test::data_dir() / "profiles" / sub)) {
    if (entry.path().extension() == ".xml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The variables every golden profile is parsed with.
Variables golden_variables() {
  Variables v;
  v.bindings = {{"h", "127.0.0.1"},
                {"t", "2"},
                {"proto", "tcp"},
                {"file", "/etc/hostname"},
                {"copts", "remotehost=127.0.0.1 protocol=tcp"},
                {"n", "1"},
                {"sz", "64"}};
  return v;
}

std::string parse_and_format(const std::string& sub, const std::string& name, bool* has_errors) {
  const std::string label = sub + "/" + name + ".xml";
  const std::string text = test::read_file(test::data_dir() / "profiles" / label);
  const ParseResult result = parse_profile(text, label, golden_variables());
  core::SourceMap sources;
  sources.add(label, text);
  *has_errors = result.diagnostics.has_errors();
  EXPECT_EQ(result.profile.has_value(), !*has_errors);
  return result.diagnostics.format(&sources);
}

class BadProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(BadProfile, DiagnosticsMatchExpected) {
  bool has_errors = false;
  const std::string actual = parse_and_format("bad", GetParam(), &has_errors);
  EXPECT_TRUE(has_errors) << "a bad profile must fail";
  const fs::path expected_path = test::data_dir() / "profiles" / "bad" / (GetParam() + ".expected");
  if (std::getenv("VOLLEY_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(expected_path, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(actual, test::read_file(expected_path));
}

/// gtest names allow only letters, digits and '_'.
std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(
      name.begin(), name.end(),
      [](char c) { return std::isalnum(static_cast<unsigned char>(c)) == 0; }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Golden, BadProfile, ::testing::ValuesIn(profiles_in("bad")), test_name);

class GoodProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(GoodProfile, ParsesWithoutErrors) {
  bool has_errors = false;
  const std::string output = parse_and_format("good", GetParam(), &has_errors);
  EXPECT_FALSE(has_errors) << output;
}

INSTANTIATE_TEST_SUITE_P(Golden, GoodProfile, ::testing::ValuesIn(profiles_in("good")), test_name);

TEST(GoldenData, HasEnoughCases) {
  EXPECT_GE(profiles_in("bad").size(), 30U);
  EXPECT_GE(profiles_in("good").size(), 5U);
}

}  // namespace
}  // namespace volley::profile
