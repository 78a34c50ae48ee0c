#pragma once
// Where the pre-shared key comes from on the command line: --key-file FILE, else the file named
// by the environment variable VOLLEY_KEY_FILE, else none (docs/security.md).
#include <optional>
#include <string>
#include <variant>

#include "volley/control/auth.hpp"

namespace volley::cli {

inline constexpr const char* kKeyFileVariable = "VOLLEY_KEY_FILE";

/// The key (or none when neither the flag nor the variable is set), or the sentence saying why it
/// cannot be used (unreadable, too short). A key file readable by other users is used, with a
/// warning on stderr.
std::variant<std::optional<control::Secret>, std::string> key_from_options(
    const std::string& key_file);

/// Reads a key (parse_key's format) from descriptor `fd` until end of file, then closes it
/// (--key-fd: how --local hands its slave the key).
std::variant<control::Secret, std::string> key_from_descriptor(int fd);

}  // namespace volley::cli
