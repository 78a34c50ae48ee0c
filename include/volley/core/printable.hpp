#pragma once
// Text from a peer (a host name, a profile name, a reason) made safe to print in a log line: no
// control characters, no terminal escapes, no invalid bytes, bounded length.
#include <cstddef>
#include <string>
#include <string_view>

namespace volley::core {

/// Printable ASCII is kept; every other byte becomes \xNN; beyond `max_chars` the text is cut and
/// ends with "...".
std::string printable(std::string_view text, std::size_t max_chars = 200);

}  // namespace volley::core
