// The text report's last section: what limited the run (report/bottleneck.hpp).
#include <string_view>

#include <fmt/format.h>

#include "text_sections.hpp"
#include "volley/report/bottleneck.hpp"

namespace volley::report::detail {
namespace {

constexpr std::size_t kColumns = 80;

/// `first`, then the words of `text`, broken at spaces so that no line is longer than kColumns
/// unless one word is; the lines after the first start with `indent` spaces.
std::string wrapped(const std::string& first, const std::string& text, std::size_t indent) {
  std::string out = first;
  std::size_t line_start = 0;  // where the current line starts in `out`
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view word(text.data() + at, end - at);
    if (out.size() - line_start + 1 + word.size() > kColumns) {
      out += '\n';
      line_start = out.size();
      out += std::string(indent, ' ');
    } else {
      out += ' ';
    }
    out += word;
    at = end + 1;
  }
  return out + '\n';
}

}  // namespace

std::string bottleneck_section(const RunReport& report) {
  const bool measured = report.master.cpu || report.master.kernel;
  if (!measured) return {};
  const std::vector<Bottleneck> found = find_bottlenecks(report);
  if (found.empty()) {
    return "Bottleneck: none of the rules fired (docs/results.md, \"Bottleneck\")\n";
  }
  std::string out = "Bottleneck (rules and thresholds: docs/results.md)\n";
  for (const Bottleneck& b : found) {
    out += wrapped(fmt::format("  {}:", b.host), b.evidence, 4);
    out += wrapped("    ->", b.advice, 7);
  }
  return out;
}

}  // namespace volley::report::detail
