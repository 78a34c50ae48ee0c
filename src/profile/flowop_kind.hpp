#pragma once
// Internal: the flowop types the profile language knows, by name.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace volley::profile::detail {

enum class FlowopKind : std::uint8_t {
  kConnect,
  kAccept,
  kDisconnect,
  kWrite,
  kSend,
  kRead,
  kRecv,
  kSendfile,
  kSendfilev,
  kThink,
  kNop,
};

/// A set of kinds, for "which flowops an option applies to".
using KindMask = std::uint32_t;
constexpr KindMask bit(FlowopKind k) { return KindMask{1} << static_cast<unsigned>(k); }

/// The kind named `lower_name` (already lower-cased), or nullopt.
std::optional<FlowopKind> flowop_kind(std::string_view lower_name);
/// Every flowop type name, for suggestions and documentation.
std::span<const std::string_view> flowop_names();
/// The name of `kind` as the profile writes it.
std::string_view name_of(FlowopKind kind);

}  // namespace volley::profile::detail
