#include "volley/transport/tls_setup.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "openssl_reason.hpp"

namespace volley::transport {
namespace {

using detail::openssl_reason;

int protocol_version(profile::TlsVersion v) {
  return v == profile::TlsVersion::k13 ? TLS1_3_VERSION : TLS1_2_VERSION;
}

/// The peer's certificate is one a peer announced over the control channel: the chain and the
/// name are not checked, the pin is the trust (the control channel is authenticated).
int check_pin(X509_STORE_CTX* store, void* arg) {
  const auto* trust = static_cast<const TlsTrust*>(arg);
  X509* leaf = X509_STORE_CTX_get0_cert(store);
  const std::string seen = leaf != nullptr ? certificate_fingerprint(leaf) : std::string();
  if (!seen.empty() &&
      std::find(trust->pinned.begin(), trust->pinned.end(), seen) != trust->pinned.end()) {
    X509_STORE_CTX_set_error(store, X509_V_OK);
    return 1;
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
  return 0;
}

}  // namespace

std::string kernel_tls_missing() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fmt::format("cannot make a socket to ask: {}", std::strerror(errno));
  // The module is looked up before the socket's state is checked: ENOENT means no module, and a
  // kernel that has one refuses this unconnected socket with ENOTCONN.
  const int rc = ::setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", 3);
  const int e = errno;
  ::close(fd);
  if (rc == 0 || e != ENOENT) return {};
  return fmt::format("setsockopt(TCP_ULP, \"tls\") failed: {}", std::strerror(e));
}

std::variant<std::shared_ptr<const TlsSetup>, std::string> TlsSetup::make(
    const TlsUses& uses, std::shared_ptr<const TlsIdentity> identity, TlsTrust trust) {
  std::shared_ptr<TlsSetup> setup(new TlsSetup());
  setup->identity_ = std::move(identity);
  setup->trust_ = std::move(trust);
  const auto wants_ktls = [&](profile::KernelTls k) {
    const auto has = [k](const profile::TlsOptions& o) { return o.ktls == k; };
    return std::any_of(uses.connects.begin(), uses.connects.end(), has) ||
           std::any_of(uses.accepts.begin(), uses.accepts.end(), has);
  };
  if (wants_ktls(profile::KernelTls::kOn) || wants_ktls(profile::KernelTls::kTry)) {
    const std::string missing = kernel_tls_missing();
    setup->kernel_tls_ = missing.empty();
    if (!missing.empty() && wants_ktls(profile::KernelTls::kOn)) {
      return fmt::format(
          "ktls: this kernel has no TLS ({}); load its tls module (modprobe tls), "
          "or write ktls=try to fall back to OpenSSL's record layer",
          missing);
    }
    setup->kernel_tls_fell_back_ = !missing.empty();
  }
  if (!uses.accepts.empty() && !setup->identity_) {
    return std::string("TLS accepts need a certificate and key, and this side has none");
  }
  for (const auto& o : uses.connects) {
    if (auto why = setup->add(TlsRole::kClient, o); !why.empty()) return why;
  }
  for (const auto& o : uses.accepts) {
    if (auto why = setup->add(TlsRole::kServer, o); !why.empty()) return why;
  }
  return std::shared_ptr<const TlsSetup>(std::move(setup));
}

TlsSetup::~TlsSetup() {
  for (const Entry& e : contexts_) SSL_CTX_free(e.context);
}

SSL_CTX* TlsSetup::context(TlsRole role, const profile::TlsOptions& options) const {
  for (const Entry& e : contexts_) {
    if (e.role == role && e.options == options) return e.context;
  }
  return nullptr;
}

std::string TlsSetup::add(TlsRole role, const profile::TlsOptions& o) {
  if (context(role, o) != nullptr) return {};
  SSL_CTX* ctx = SSL_CTX_new(role == TlsRole::kClient ? TLS_client_method() : TLS_server_method());
  if (ctx == nullptr) return "cannot make a TLS context: " + openssl_reason();
  contexts_.push_back(Entry{role, o, ctx});
  const int version = protocol_version(o.version);
  SSL_CTX_set_min_proto_version(ctx, version);
  SSL_CTX_set_max_proto_version(ctx, version);
  if (!o.cipher.empty()) {
    const int ok = o.version == profile::TlsVersion::k13
                       ? SSL_CTX_set_ciphersuites(ctx, o.cipher.c_str())
                       : SSL_CTX_set_cipher_list(ctx, o.cipher.c_str());
    if (ok != 1) return fmt::format("cipher={}: {}", o.cipher, openssl_reason());
  }
  // Whole records per read where the socket holds them: fewer system calls per record.
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (o.ktls != profile::KernelTls::kOff && kernel_tls_) {
    SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
  }
  if (role == TlsRole::kClient) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (!trust_.ca_file.empty()) {
      if (SSL_CTX_load_verify_locations(ctx, trust_.ca_file.c_str(), nullptr) != 1) {
        return fmt::format("--tls-ca '{}': {}", trust_.ca_file, openssl_reason());
      }
    } else {
      SSL_CTX_set_cert_verify_callback(ctx, check_pin, &trust_);
    }
    return {};
  }
  if (SSL_CTX_use_certificate(ctx, identity_->certificate()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, identity_->key()) != 1) {
    return "cannot use the TLS certificate and key: " + openssl_reason();
  }
  static constexpr unsigned char kSessionContext[] = "volley";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  // Resumption as the profile asks for it and nothing more: a ticket nobody uses costs the
  // server an encryption per handshake. TLS 1.2 resumes by session ID, as the option says.
  SSL_CTX_set_num_tickets(ctx, o.resume && o.version == profile::TlsVersion::k13 ? 1 : 0);
  if (o.version == profile::TlsVersion::k12) SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(ctx, o.resume ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_OFF);
  return {};
}

}  // namespace volley::transport
