#pragma once
// Internal: numbers read from a peer's JSON, checked. nlohmann's get<std::uint64_t>() wraps a
// negative number (a seed of -1 becomes 2^64-1), get<std::uint32_t>() truncates (a token of 2^32
// becomes 0), and converting a fraction out of the target's range (1e300 workers) is undefined
// behaviour. These refuse all of that with a json::type_error, which the message parsers already
// turn into "malformed ... message".
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace volley::control::detail {

/// A non-negative integer of at most `max`.
inline std::uint64_t checked_uint(const nlohmann::json& j,
                                  std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() > max) {
    throw nlohmann::json::type_error::create(
        302, "expected an integer from 0 to " + std::to_string(max) + ", got " + j.dump(), &j);
  }
  return j.get<std::uint64_t>();
}

/// A signed 64-bit integer.
inline std::int64_t checked_int(const nlohmann::json& j) {
  const bool fits = j.is_number_unsigned()
                        ? j.get<std::uint64_t>() <=
                              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                        : j.is_number_integer();
  if (!fits) {
    throw nlohmann::json::type_error::create(302, "expected a 64-bit integer, got " + j.dump(), &j);
  }
  return j.get<std::int64_t>();
}

}  // namespace volley::control::detail
