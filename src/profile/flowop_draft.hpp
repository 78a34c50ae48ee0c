#pragma once
// Internal: what a flowop's options said, gathered before the typed flowop is built (so that
// required options can be checked once every option has been read).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "flowop_kind.hpp"
#include "volley/profile/model.hpp"

namespace volley::profile::detail {

struct FlowopDraft {
  FlowopKind kind = FlowopKind::kNop;
  FlowopCommon common;
  std::optional<SizeSpec> size;
  std::optional<std::uint64_t> rsize_bytes;
  std::optional<Nanoseconds> duration;
  bool busy = false;
  bool idle = false;
  ConnectionOptions connection;
  bool has_remotehost = false;
  bool has_protocol = false;
  std::optional<std::string> dir;
  std::optional<std::string> file;
  std::uint64_t nfiles = 1;
  bool zerocopy = false;
  /// Options given (lower-cased name -> file offset of the name), even when their value was bad:
  /// a bad value is reported once, not again as "missing".
  std::map<std::string, std::size_t> given;
  /// What unknown options were probably meant as ("sise" -> "size"): such an option is not
  /// reported missing on top of the typo.
  std::set<std::string, std::less<>> suggested;
  /// A variable in the options could not be expanded; "missing option" checks are skipped.
  bool unresolved = false;
};

}  // namespace volley::profile::detail
