#pragma once
// Internal: whether OpenSSL knows a profile's cipher= for its tls_version=, so that a typo is an
// error at the profile's line rather than a failed handshake in the middle of a run.
#include <string>
#include <string_view>

#include "volley/profile/model.hpp"

namespace volley::profile::detail {

/// Empty when `cipher` names what OpenSSL can offer at `version`: TLS 1.3 suite names
/// (TLS_AES_128_GCM_SHA256:...) for 1.3, an OpenSSL cipher list (ECDHE-ECDSA-AES128-GCM-SHA256)
/// for 1.2. Else why not, in a sentence.
std::string tls_cipher_error(TlsVersion version, std::string_view cipher);

}  // namespace volley::profile::detail
