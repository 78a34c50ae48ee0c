// Fuzz target: sizes, counts, durations and rates as a user or a profile writes them. Every
// parser sees the text. Invariants checked: a value is set exactly when there is no error; a
// duration never exceeds the documented maximum; a parsed size or duration printed by the
// formatter parses back to the same value.
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "volley/core/limits.hpp"
#include "volley/core/units.hpp"

namespace {

using namespace volley::core;

template <typename Parse>
void check_shape(const Parse& p) {
  if (p.value.has_value() == !p.error.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto bytes = parse_size(text);
  check_shape(bytes);
  if (bytes.value) {
    const std::string printed = format_bytes(*bytes.value);
    const auto again = parse_size(printed.substr(0, printed.find(' ')));
    if (again.value != bytes.value) std::abort();
  }
  check_shape(parse_count(text));
  check_shape(parse_rate(text));
  for (const auto syntax : {DurationSyntax::kVolley, DurationSyntax::kUperf}) {
    const auto d = parse_duration(text, syntax);
    check_shape(d);
    if (!d.value) continue;
    if (*d.value < std::chrono::nanoseconds(0) || *d.value > kMaxDuration) std::abort();
    const auto again = parse_duration(format_duration(*d.value), DurationSyntax::kVolley);
    if (again.value != d.value) std::abort();
  }
  return 0;
}
