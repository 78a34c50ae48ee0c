#include "volley/core/diagnostic.hpp"

#include <gtest/gtest.h>

#include "volley/core/source_map.hpp"

namespace volley::core {
namespace {

TEST(Diagnostics, CountsBySeverity) {
  Diagnostics d;
  EXPECT_TRUE(d.empty());
  EXPECT_FALSE(d.has_errors());
  d.warning({"f", 1, 1}, "w");
  d.note({"f", 1, 1}, "n");
  EXPECT_FALSE(d.has_errors());
  d.error({"f", 2, 1}, "e");
  EXPECT_TRUE(d.has_errors());
  EXPECT_EQ(d.error_count(), 1U);
  EXPECT_EQ(d.warning_count(), 1U);
  d.promote_warnings();
  EXPECT_EQ(d.error_count(), 2U);
  EXPECT_EQ(d.warning_count(), 0U);
  Diagnostics other;
  other.append(d);
  EXPECT_EQ(other.items(), d.items());
}

TEST(Diagnostics, FormatsNinjaStyleWithExcerpt) {
  SourceMap sources;
  std::string text;
  for (int i = 1; i < 16; ++i) text += "\n";
  text += "      <flowop type=\"wirte\" options=\"size=64\"/>\n";
  sources.add("profiles/web.xml", text);
  Diagnostics d;
  d.error({"profiles/web.xml", 16, 7}, "unknown flowop type 'wirte'; did you mean 'write'?");
  EXPECT_EQ(d.format(&sources),
            "profiles/web.xml:16:7: error: unknown flowop type 'wirte'; did you mean 'write'?\n"
            "   16 |       <flowop type=\"wirte\" options=\"size=64\"/>\n"
            "      |       ^\n");
}

TEST(Diagnostics, FormatsWithoutSourcesOrLocation) {
  Diagnostics d;
  d.warning({"a.xml", 3, 2}, "careful");
  d.error({}, "--interval: empty duration");
  d.note({"a.xml", 0, 0}, "whole file");
  d.error({"a.xml", 4, 0}, "no column");
  EXPECT_EQ(d.format(nullptr),
            "a.xml:3:2: warning: careful\n"
            "error: --interval: empty duration\n"
            "a.xml: note: whole file\n"
            "a.xml:4: error: no column\n");
}

TEST(Severity, Names) {
  EXPECT_EQ(to_string(Severity::kError), "error");
  EXPECT_EQ(to_string(Severity::kWarning), "warning");
  EXPECT_EQ(to_string(Severity::kNote), "note");
}

}  // namespace
}  // namespace volley::core
