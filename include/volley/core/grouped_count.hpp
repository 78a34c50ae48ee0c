#pragma once
// An exact count as people read it, with its digits grouped: for reports and error messages.
#include <cstdint>
#include <string>

namespace volley::core {

/// An exact count with a comma between groups of three digits: "0", "999", "2,310,659".
[[nodiscard]] std::string format_grouped(std::uint64_t count);

}  // namespace volley::core
