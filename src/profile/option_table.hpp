#pragma once
// Internal: the flowop options, one row each: name, whether it takes a value, whether every flowop
// takes it, and how its value is read into a FlowopDraft. Adding an option is adding a row here
// and naming it in the `options` of the kinds that take it (volley/profile/flowop_traits.hpp).
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "flowop_draft.hpp"
#include "flowop_kind.hpp"
#include "located_text.hpp"
#include "parse_context.hpp"

namespace volley::profile::detail {

struct OptionSpec {
  std::string_view name;
  bool takes_value = true;
  bool common = false;  ///< every flowop takes it; else the kinds whose row names it
  /// Reads `value` (empty for flags) into the draft; reports bad values through `ctx`.
  void (*apply)(const LocatedText& value, FlowopDraft& draft, ParseContext& ctx) = nullptr;
  /// A flag that may also take a value (`ktls` or `ktls=try`); takes_value is then false.
  bool value_optional = false;
  /// On a flowop that does not take it, an error rather than a warning: the option asks for a
  /// different test (`zerocopy` on a read), which running without it would not be.
  bool misplaced_is_error = false;
};

/// The row for `lower_name`, or nullptr.
const OptionSpec* find_option(std::string_view lower_name);
/// Whether a flowop of `kind` takes `option`.
bool applies(const OptionSpec& option, FlowopKind kind);
/// The kinds a profile writes that take `option`, as "write and send".
std::string kinds_taking(const OptionSpec& option);
/// Every known option name, for suggestions.
std::span<const std::string_view> option_names();
/// uperf options volley recognises but does not implement (`sctp_*`, `cipher`, ...).
bool is_unsupported_option(std::string_view lower_name);

}  // namespace volley::profile::detail
