#pragma once
// Where something in a profile came from. Plain value, any thread.
#include <cstdint>
#include <string>

namespace volley::core {

/// A position in a source file; line and column are 1-based, 0 means "unknown".
struct SourceLocation {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

}  // namespace volley::core
