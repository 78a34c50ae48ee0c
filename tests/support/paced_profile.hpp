#pragma once
// A profile whose capacity is known by construction, for the tests of `volley search` and of the
// HTML pages: `strands` strands connect to `host`, then for `duration` each paces its
// transactions at $r a second (open loop: latency counted from each one's due time), each a
// 64-byte round trip and `think` of think time, then disconnect. A strand does at most
// 1 / think transactions a second: below that the latency is about the think time, above it the
// strand falls behind and the latency grows with the lag. Any argument may be a $variable.
#include <string>

namespace volley::test {

std::string paced_think_profile(const std::string& strands, const std::string& host,
                                const std::string& duration, const std::string& think);

}  // namespace volley::test
