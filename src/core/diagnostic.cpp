#include "volley/core/diagnostic.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "volley/core/source_map.hpp"

namespace volley::core {

void Diagnostics::error(SourceLocation where, std::string message) {
  add({Severity::kError, std::move(where), std::move(message)});
}
void Diagnostics::warning(SourceLocation where, std::string message) {
  add({Severity::kWarning, std::move(where), std::move(message)});
}
void Diagnostics::note(SourceLocation where, std::string message) {
  add({Severity::kNote, std::move(where), std::move(message)});
}
void Diagnostics::add(Diagnostic d) { items_.push_back(std::move(d)); }

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

std::size_t Diagnostics::error_count() const {
  return static_cast<std::size_t>(
      std::count_if(items_.begin(), items_.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::kError; }));
}

std::size_t Diagnostics::warning_count() const {
  return static_cast<std::size_t>(
      std::count_if(items_.begin(), items_.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::kWarning; }));
}

void Diagnostics::promote_warnings() {
  for (auto& d : items_) {
    if (d.severity == Severity::kWarning) d.severity = Severity::kError;
  }
}

std::string Diagnostics::format(const SourceMap* sources) const {
  std::string out;
  for (const auto& d : items_) {
    const auto& loc = d.location;
    if (!loc.file.empty()) {
      out += loc.file;
      if (loc.line != 0) {
        out += fmt::format(":{}", loc.line);
        if (loc.column != 0) out += fmt::format(":{}", loc.column);
      }
      out += ": ";
    }
    out += fmt::format("{}: {}\n", to_string(d.severity), d.message);
    if (sources != nullptr && loc.line != 0) {
      if (auto text = sources->line_text(loc.file, loc.line)) {
        out += render_excerpt(*text, loc.line, loc.column);
      }
    }
  }
  return out;
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kNote: return "note";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

}  // namespace volley::core
