#pragma once
// What one engine's TLS connections share: an OpenSSL context per role and profile options (the
// version, cipher, session reuse and kernel TLS a connect or accept asks for), the identity an
// accepting side shows, and how a connecting side trusts its peer (pinned fingerprints from the
// control channel, or a CA). Made once, before any traffic; the contexts are then only read, by
// every worker (OpenSSL contexts are safe to share once set up).
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "volley/profile/model.hpp"
#include "volley/transport/tls_connection.hpp"
#include "volley/transport/tls_identity.hpp"

namespace volley::transport {

/// How a connecting side trusts the certificate of the side it connects to.
struct TlsTrust {
  /// The fingerprints (TlsIdentity::fingerprint) its peers announced over the control channel.
  std::vector<std::string> pinned;
  /// --tls-ca: verify the chain against the CA certificates in this PEM file instead, and the
  /// peer's name (TlsConnection::check_peer_name).
  std::string ca_file;
};

/// The TLS connections one engine opens and accepts.
struct TlsUses {
  std::vector<profile::TlsOptions> connects;
  std::vector<profile::TlsOptions> accepts;
  [[nodiscard]] bool any() const { return !connects.empty() || !accepts.empty(); }
};

class TlsSetup {
 public:
  /// The contexts for `uses`. An accepting side needs `identity`. Fails with the sentence to show:
  /// a cipher OpenSSL refuses, a CA file it cannot read, or kernel TLS required (ktls) where this
  /// kernel has none.
  static std::variant<std::shared_ptr<const TlsSetup>, std::string> make(
      const TlsUses& uses, std::shared_ptr<const TlsIdentity> identity, TlsTrust trust);
  ~TlsSetup();
  TlsSetup(const TlsSetup&) = delete;
  TlsSetup& operator=(const TlsSetup&) = delete;

  /// The context for `options` in `role`; null when make() was not given them.
  [[nodiscard]] SSL_CTX* context(TlsRole role, const profile::TlsOptions& options) const;
  /// ktls=try found no kernel TLS here: connections use OpenSSL's record layer (the report says).
  [[nodiscard]] bool kernel_tls_fell_back() const { return kernel_tls_fell_back_; }
  [[nodiscard]] const TlsTrust& trust() const { return trust_; }

 private:
  TlsSetup() = default;
  struct Entry {
    TlsRole role;
    profile::TlsOptions options;
    SSL_CTX* context;
  };
  std::string add(TlsRole role, const profile::TlsOptions& options);

  std::vector<Entry> contexts_;
  std::shared_ptr<const TlsIdentity> identity_;
  TlsTrust trust_;
  bool kernel_tls_ = false;  ///< this kernel has the "tls" upper layer protocol
  bool kernel_tls_fell_back_ = false;
};

/// Whether this kernel has TLS (setsockopt(TCP_ULP, "tls") finds the module); else why not.
std::string kernel_tls_missing();

}  // namespace volley::transport
