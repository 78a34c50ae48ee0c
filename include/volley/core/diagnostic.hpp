#pragma once
// Input errors as values: a profile or command-line problem with its location, collected so that
// every problem is reported at once (ninja style), and printed only by the CLI layer.
#include <string>
#include <string_view>
#include <vector>

#include "volley/core/source_location.hpp"

namespace volley::core {

class SourceMap;

enum class Severity { kNote, kWarning, kError };

/// One problem. `location.line == 0` means the problem has no place in a file (a CLI option, say).
struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLocation location;
  std::string message;

  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

/// An ordered collection of diagnostics. Thread: any (plain value).
class Diagnostics {
 public:
  void error(SourceLocation where, std::string message);
  void warning(SourceLocation where, std::string message);
  void note(SourceLocation where, std::string message);
  void add(Diagnostic d);
  void append(const Diagnostics& other);

  [[nodiscard]] bool has_errors() const;
  [[nodiscard]] std::size_t error_count() const;
  [[nodiscard]] std::size_t warning_count() const;
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] const std::vector<Diagnostic>& items() const { return items_; }

  /// Turns every warning into an error (`--strict`).
  void promote_warnings();

  /// Renders all diagnostics as `file:line:column: error: message`, then the source line and a
  /// caret under the column when `sources` has the file's text. One trailing newline per item.
  [[nodiscard]] std::string format(const SourceMap* sources) const;

 private:
  std::vector<Diagnostic> items_;
};

/// "error", "warning" or "note".
std::string_view to_string(Severity s);

}  // namespace volley::core
