#pragma once
// Internal: a string that remembers, for every character, the byte offset in the profile file it
// came from. XML entity decoding and variable expansion both change lengths; carrying offsets
// through them is what lets a diagnostic point at the exact option or `$variable` in the file.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace volley::profile::detail {

struct LocatedText {
  std::string text;
  std::vector<std::size_t> offsets;  ///< offsets[i] is where text[i] came from; size() == text+1

  /// A text whose every character maps to `offset` (when no finer mapping is known).
  static LocatedText uniform(std::string_view text, std::size_t offset);

  void push(char c, std::size_t offset);
  /// Source offset of character `i`; `i == text.size()` gives the end offset.
  [[nodiscard]] std::size_t offset_at(std::size_t i) const;
  /// Characters [pos, pos + len) with their offsets.
  [[nodiscard]] LocatedText slice(std::size_t pos, std::size_t len) const;
};

/// Decodes a raw attribute value as written between its quotes (starting at byte `offset` of the
/// file) the way pugixml does: the five named entities, numeric character references, and tabs
/// and line ends turned into spaces.
LocatedText decode_attribute(std::string_view raw, std::size_t offset);

}  // namespace volley::profile::detail
