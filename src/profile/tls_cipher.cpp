#include "tls_cipher.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <memory>

#include <fmt/format.h>

namespace volley::profile::detail {
namespace {

struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};

/// A cipher list's own words: the TLS 1.3 suite names, split at ':'.
bool all_known_suites(SSL_CTX* ctx, std::string_view list) {
  // SSL_CTX_set_ciphersuites skips names it does not know as long as one is known: each is
  // tried alone so that a typo in any of them is found.
  while (!list.empty()) {
    const std::size_t colon = list.find(':');
    const std::string one(list.substr(0, colon));
    if (one.empty() || SSL_CTX_set_ciphersuites(ctx, one.c_str()) != 1) return false;
    list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
  }
  return true;
}

}  // namespace

std::string tls_cipher_error(TlsVersion version, std::string_view cipher) {
  const std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_method()));
  if (!ctx) return "OpenSSL could not make a TLS context to check it";
  const std::string text(cipher);
  if (version == TlsVersion::k13) {
    const bool ok = cipher.substr(0, 4) == "TLS_" && all_known_suites(ctx.get(), cipher);
    ERR_clear_error();
    if (ok) return {};
    return fmt::format(
        "option 'cipher': '{}' is not a TLS 1.3 suite OpenSSL knows (TLS 1.3 "
        "takes suite names such as TLS_AES_128_GCM_SHA256 or "
        "TLS_CHACHA20_POLY1305_SHA256; for a TLS 1.2 cipher add tls_version=1.2)",
        text);
  }
  const bool ok = SSL_CTX_set_cipher_list(ctx.get(), text.c_str()) == 1;
  ERR_clear_error();
  if (ok) return {};
  return fmt::format(
      "option 'cipher': '{}' selects no TLS 1.2 cipher OpenSSL knows (for example "
      "ECDHE-ECDSA-AES128-GCM-SHA256 or ECDHE-ECDSA-CHACHA20-POLY1305)",
      text);
}

}  // namespace volley::profile::detail
