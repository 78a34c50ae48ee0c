#pragma once
// Internal: OpenSSL's reason for its last failure, as a sentence's tail, for the TLS types' errors.
#include <openssl/err.h>

#include <string>

namespace volley::transport::detail {

/// The reason of the last error OpenSSL queued ("unknown OpenSSL error" when none), and the queue
/// emptied.
inline std::string openssl_reason() {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  const char* reason = code != 0 ? ERR_reason_error_string(code) : nullptr;
  return reason != nullptr ? reason : "unknown OpenSSL error";
}

}  // namespace volley::transport::detail
