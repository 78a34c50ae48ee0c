#pragma once
// What the accepting side of a TLS connection shows its peer: a certificate and its private key.
// By default a fresh ECDSA P-256 key and a self-signed certificate per run; or the user's own
// (--tls-cert, --tls-key: RSA or ECDSA, PEM). The peer trusts it by its fingerprint, sent over the
// authenticated control channel (TlsTrust), or through a CA. The private key never leaves this
// type except as PEM for a child process of the same side, over its socketpair.
// Thread: any (immutable once made; OpenSSL's objects are reference counted).
#include <memory>
#include <string>
#include <string_view>
#include <variant>

using X509 = struct x509_st;
using EVP_PKEY = struct evp_pkey_st;

namespace volley::transport {

class TlsIdentity {
 public:
  /// A fresh ECDSA P-256 key and a certificate for it, signed by itself, valid for a day.
  static std::variant<TlsIdentity, std::string> generate();
  /// The certificate and key in PEM files. The key file is read as the control key is (a regular
  /// file, at most 64 KiB); `warning` is set when others may read it. Fails, naming the file,
  /// when either cannot be read or the key is not the certificate's.
  static std::variant<TlsIdentity, std::string> load(const std::string& cert_file,
                                                     const std::string& key_file,
                                                     std::string& warning);
  /// From PEM text (a child process receiving its parent's identity).
  static std::variant<TlsIdentity, std::string> from_pem(std::string_view cert_pem,
                                                         std::string_view key_pem);

  /// SHA-256 of the certificate's DER, lower-case hex: what a peer pins.
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }
  [[nodiscard]] std::string cert_pem() const;
  /// Only for a child process of this side; never for a result, a log or the peer.
  [[nodiscard]] std::string key_pem() const;
  [[nodiscard]] X509* certificate() const { return cert_.get(); }
  [[nodiscard]] EVP_PKEY* key() const { return key_.get(); }

 private:
  TlsIdentity(std::shared_ptr<X509> cert, std::shared_ptr<EVP_PKEY> key);
  std::shared_ptr<X509> cert_;
  std::shared_ptr<EVP_PKEY> key_;
  std::string fingerprint_;
};

/// The fingerprint (TlsIdentity::fingerprint) of any certificate.
std::string certificate_fingerprint(X509* cert);

}  // namespace volley::transport
