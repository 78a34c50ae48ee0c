// The sentence for one drain shortfall, apart from the drain itself (a coroutine in
// step_drain.cpp): the control side describes shortfalls a peer reported, and the fuzz target of
// those messages links this without the engine's coroutines.
#include "volley/engine/step_bytes.hpp"

#include <fmt/format.h>

namespace volley::engine {

std::string describe(const DrainShortfall& s, const std::vector<std::string>& group_names) {
  const ConnectionBytes& e = s.expected;
  const std::string group =
      e.group < group_names.size() ? group_names[e.group] : fmt::format("{}", e.group);
  const std::string conn =
      e.conn == 0 ? std::string("the anonymous connection") : fmt::format("connection {}", e.conn);
  if (e.serial == ConnectionBytes::kOpenedSerial) {
    return fmt::format(
        "group '{}' strand {} {}: {} of the {} connections its peer opened under it "
        "arrived ({})",
        group, e.strand, conn, s.got, e.bytes, s.why);
  }
  if (e.serial == ConnectionBytes::kClosedSerial) {
    return fmt::format(
        "group '{}' strand {} {} (those its peer closed): read {} of the {} bytes "
        "its peer wrote on them ({})",
        group, e.strand, conn, s.got, e.bytes, s.why);
  }
  return fmt::format("group '{}' strand {} {} (#{}): read {} of the {} bytes its peer wrote ({})",
                     group, e.strand, conn, e.serial, s.got, e.bytes, s.why);
}

}  // namespace volley::engine
