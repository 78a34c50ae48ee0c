#pragma once
// Internal: what uperf's own profile reader accepts that XML does not, and why a file that is not
// XML is not. uperf splits its profile on blanks and never checks the nesting, so profiles written
// for it (k8s-netperf writes `<flowop type=write .../>`) may have attribute values without quotes;
// volley quotes them before pugixml reads the text, keeping a map back to the file's offsets.
// uperf also ignores an end tag with no element open (uperf's own tests/canfail.xml has one); when
// pugixml finds any other mismatched end tag, the tag stack names the likely cause (a misspelt
// `<goup>`, a missing `</transaction>`).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace volley::profile::detail {

struct QuotedText {
  std::string text;                      ///< the input with every bare attribute value quoted
  std::vector<std::size_t> inserted;     ///< offsets in `text` of the inserted quotes, ascending
  std::vector<std::size_t> bare_values;  ///< offsets in the input of each bare value

  /// The input offset of offset `at` in `text`.
  [[nodiscard]] std::size_t original_offset(std::size_t at) const;
};

/// Quotes bare attribute values in start tags (`type=write` becomes `type="write"`) and
/// lower-cases element names (same length); leaves comments, processing instructions, CDATA and
/// quoted values alone.
[[nodiscard]] QuotedText quote_bare_attribute_values(std::string_view text);

/// Why an end tag does not match (pugixml's status_end_element_mismatch at `error_offset`).
struct Mismatch {
  enum class Kind { kUnknown, kStray, kMisspelt, kMissingEnd };
  Kind kind = Kind::kUnknown;
  std::string message;    ///< the likely cause, as a sentence; empty for kUnknown
  std::size_t begin = 0;  ///< the rejected end tag: [begin, end)
  std::size_t end = 0;
};

/// Reads the tag stack of `text` up to the end tag pugixml rejected at `error_offset`: a stray end
/// tag (no such element open), a misspelt start tag (`<goup>` closed by `</group>`), or a missing
/// end tag (`</group>` while `<transaction>` is open).
[[nodiscard]] Mismatch explain_mismatch(std::string_view text, std::size_t error_offset);

/// What is still open where a file ends: the file was cut off, or lacks its closing tags.
struct EarlyEnd {
  std::string message;  ///< "the file ended early: <profile> (opened at line 8) is not closed"
  /// Where the end of the file starts to matter: the last complete tag, or what was cut off.
  /// pugixml's error there or later is this; before it, another problem.
  std::size_t tail = 0;
};

/// Reads the tag stack of `text` to its end. When the nesting is right up to there but something
/// is left open (an element, or a tag, quoted value or comment cut off), says what, innermost
/// first, with the line each was opened on; nullopt when nothing is open or the nesting is wrong
/// before the end (explain_mismatch() tells that).
[[nodiscard]] std::optional<EarlyEnd> explain_early_end(std::string_view text);

}  // namespace volley::profile::detail
