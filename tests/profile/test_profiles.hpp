#pragma once
// Helpers shared by the profile tests: parse a profile text that must be valid.
#include <gtest/gtest.h>

#include <string>

#include "volley/core/source_map.hpp"
#include "volley/profile/parser.hpp"

namespace volley::profile::testing {

/// Variables most tests use: h, t and proto.
inline Variables default_variables() {
  Variables v;
  v.bindings = {{"h", "127.0.0.1"}, {"t", "2"}, {"proto", "tcp"}};
  return v;
}

/// Parses `text`; fails the test (showing the diagnostics) if it has errors.
inline Profile parse_ok(const std::string& text, const Variables& vars = default_variables()) {
  ParseResult r = parse_profile(text, "test.xml", vars);
  core::SourceMap sources;
  sources.add("test.xml", text);
  EXPECT_FALSE(r.diagnostics.has_errors()) << r.diagnostics.format(&sources);
  return r.profile.value_or(Profile{});
}

/// The formatted diagnostics of `text` (no excerpts).
inline std::string diagnostics_of(const std::string& text,
                                  const Variables& vars = default_variables()) {
  return parse_profile(text, "test.xml", vars).diagnostics.format(nullptr);
}

/// A one-group profile: a connect transaction, then `body` in a duration transaction.
inline std::string with_body(const std::string& body) {
  return "<profile name=\"p\"><group nthreads=\"1\">"
         "<transaction iterations=\"1\">"
         "<flowop type=\"connect\" options=\"remotehost=$h protocol=tcp\"/></transaction>"
         "<transaction duration=\"1s\">" +
         body + "</transaction></group></profile>";
}

}  // namespace volley::profile::testing
