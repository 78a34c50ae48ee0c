// Every profile shipped in profiles/ must parse cleanly (uperf's "every profile is a test").
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/paths.hpp"
#include "volley/core/source_map.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"

namespace volley::profile {
namespace {

namespace fs = std::filesystem;

TEST(ExampleProfiles, AllParseWithoutErrorsOrWarnings) {
  Variables vars;
  vars.bindings = {
      {"h", "127.0.0.1"}, {"t", "2"}, {"r", "1000"}, {"file", "/etc/hostname"}, {"s", "127.0.0.1"}};
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "profiles")) {
    if (entry.path().extension() == ".xml") files.push_back(entry.path());
  }
  EXPECT_GE(files.size(), 6U);
  for (const auto& path : files) {
    const std::string text = test::read_file(path);
    const std::string label = "profiles/" + path.filename().string();
    const ParseResult r = parse_profile(text, label, vars);
    core::SourceMap sources;
    sources.add(label, text);
    EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics.format(&sources);
    ASSERT_TRUE(r.profile) << label;
    EXPECT_FALSE(r.profile->groups.empty()) << label;
    EXPECT_EQ(r.used_variables.at("h"), "127.0.0.1") << label;
    // Every shipped profile talks to $h only, so its mirror for that host keeps every group.
    for (const Group& g : mirror(*r.profile, "127.0.0.1").groups) EXPECT_GT(g.nthreads, 0U);
  }
}

TEST(ExampleProfiles, ReadmeListsEveryProfile) {
  const std::string readme = test::read_file(test::source_dir() / "profiles" / "README.md");
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "profiles")) {
    if (entry.path().extension() != ".xml") continue;
    EXPECT_NE(readme.find("`" + entry.path().filename().string() + "`"), std::string::npos)
        << entry.path().filename();
  }
}

}  // namespace
}  // namespace volley::profile
