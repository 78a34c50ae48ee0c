#pragma once
// SHA-256 (FIPS 180-4) of a byte string, as lower-case hex: identifies the exact profile text a
// result came from. Small and dependency-free; not for anything security-sensitive.
#include <string>
#include <string_view>

namespace volley::core {

std::string sha256_hex(std::string_view data);

}  // namespace volley::core
