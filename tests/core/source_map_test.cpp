#include "volley/core/source_map.hpp"

#include <gtest/gtest.h>

namespace volley::core {
namespace {

TEST(LineIndex, OffsetsToLineAndColumn) {
  const LineIndex index("ab\ncd\r\n\nxyz");
  EXPECT_EQ(index.position(0), std::make_pair(1U, 1U));
  EXPECT_EQ(index.position(1), std::make_pair(1U, 2U));
  EXPECT_EQ(index.position(2), std::make_pair(1U, 3U));  // the '\n' itself
  EXPECT_EQ(index.position(3), std::make_pair(2U, 1U));
  EXPECT_EQ(index.position(7), std::make_pair(3U, 1U));
  EXPECT_EQ(index.position(10), std::make_pair(4U, 3U));
  EXPECT_EQ(index.position(999), std::make_pair(4U, 4U)) << "past the end clamps to the end";
  EXPECT_EQ(index.line_count(), 4U);
  EXPECT_FALSE(index.line_start(0));
  EXPECT_FALSE(index.line_start(5));
}

TEST(LineIndex, EmptyText) {
  const LineIndex index("");
  EXPECT_EQ(index.position(0), std::make_pair(1U, 1U));
  EXPECT_EQ(index.line_count(), 1U);
}

TEST(SourceMap, LineTextStripsLineEndings) {
  SourceMap map;
  map.add("a.xml", "one\r\ntwo\nthree");
  EXPECT_EQ(map.line_text("a.xml", 1), "one");
  EXPECT_EQ(map.line_text("a.xml", 2), "two");
  EXPECT_EQ(map.line_text("a.xml", 3), "three");
  EXPECT_FALSE(map.line_text("a.xml", 4));
  EXPECT_FALSE(map.line_text("b.xml", 1));
  EXPECT_EQ(map.locate("a.xml", 6), (SourceLocation{"a.xml", 2, 2}));
  EXPECT_EQ(map.locate("nope", 6), (SourceLocation{"nope", 0, 0}));
  ASSERT_NE(map.text("a.xml"), nullptr);
  EXPECT_EQ(*map.text("a.xml"), "one\r\ntwo\nthree");
  EXPECT_EQ(map.text("b.xml"), nullptr);
}

TEST(RenderExcerpt, CaretUnderColumn) {
  EXPECT_EQ(render_excerpt("      <flowop/>", 16, 7),
            "   16 |       <flowop/>\n"
            "      |       ^\n");
  EXPECT_EQ(render_excerpt("x", 123456, 1), "123456 | x\n      | ^\n");
  EXPECT_EQ(render_excerpt("abc", 2, 0), "    2 | abc\n");
}

TEST(RenderExcerpt, KeepsTabsAndSkipsUtf8ContinuationBytes) {
  EXPECT_EQ(render_excerpt("\t<a/>", 1, 2), "    1 | \t<a/>\n      | \t^\n");
  EXPECT_EQ(render_excerpt("\xC3\xA9x", 1, 3), "    1 | \xC3\xA9x\n      |  ^\n");
}

}  // namespace
}  // namespace volley::core

namespace volley::core {
namespace {

TEST(RenderExcerpt, LongLinesShowAWindowAroundTheColumn) {
  const std::string line = std::string(300, 'a') + "X" + std::string(300, 'b');
  const std::string out = render_excerpt(line, 1, 301);
  const auto first_newline = out.find('\n');
  const std::string source = out.substr(0, first_newline);
  const std::string caret = out.substr(first_newline + 1);
  EXPECT_EQ(source.substr(0, 11), "    1 | ...");
  EXPECT_EQ(source.substr(source.size() - 3), "...");
  EXPECT_LT(source.size(), 200U);
  EXPECT_EQ(source[caret.find('^')], 'X') << out;
  const std::string start = render_excerpt(line, 1, 1);
  EXPECT_EQ(start.substr(0, 9), "    1 | a");
  EXPECT_EQ(start.substr(start.find('\n') + 1), "      | ^\n");
}

}  // namespace
}  // namespace volley::core
