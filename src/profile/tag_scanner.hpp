#pragma once
// Internal: where each attribute of a start tag sits in the file. pugixml records an offset for
// elements but not for attributes, so the parser re-reads the start tag pugixml already accepted.
#include <cstddef>
#include <string_view>
#include <vector>

namespace volley::profile::detail {

struct RawAttribute {
  std::string_view name;
  std::size_t name_offset = 0;
  std::string_view raw_value;  ///< between the quotes, entities not decoded
  std::size_t value_offset = 0;
};

/// The attributes of the start tag whose element name begins at `name_offset` in `text`, in
/// order. Stops at the end of the tag or at anything it does not understand (it never reads past
/// `text`), so a short result means "locations unknown" to the caller.
std::vector<RawAttribute> scan_attributes(std::string_view text, std::size_t name_offset);

}  // namespace volley::profile::detail
