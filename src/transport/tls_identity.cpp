#include "volley/transport/tls_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "openssl_reason.hpp"

namespace volley::transport {
namespace {

using detail::openssl_reason;

/// A PEM file is a few KiB; anything much larger is not one.
constexpr std::size_t kMaxPemBytes = std::size_t{64} * 1024;

std::shared_ptr<X509> own(X509* x) { return {x, X509_free}; }
std::shared_ptr<EVP_PKEY> own(EVP_PKEY* k) { return {k, EVP_PKEY_free}; }

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

/// The whole of a regular file of at most kMaxPemBytes; `open_to_others` is set when users
/// other than its owner may read it.
std::variant<std::string, std::string> read_pem_file(const std::string& path, std::string_view what,
                                                     bool& open_to_others) {
  using Result = std::variant<std::string, std::string>;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return Result(std::in_place_index<1>,
                  fmt::format("{} '{}': cannot read it: {}", what, path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Result(std::in_place_index<1>, fmt::format("{} '{}': not a regular file", what, path));
  }
  open_to_others = (st.st_mode & (S_IRWXG | S_IRWXO)) != 0;
  std::string contents;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    contents.append(buf, static_cast<std::size_t>(n));
    if (contents.size() > kMaxPemBytes) {
      ::close(fd);
      return Result(std::in_place_index<1>, fmt::format("{} '{}' is larger than {} bytes: not a "
                                                        "PEM file",
                                                        what, path, kMaxPemBytes));
    }
  }
  ::close(fd);
  return Result(std::in_place_index<0>, std::move(contents));
}

std::shared_ptr<X509> parse_cert(std::string_view pem) {
  const Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  return x != nullptr ? own(x) : nullptr;
}

std::shared_ptr<EVP_PKEY> parse_key(std::string_view pem) {
  const Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  return k != nullptr ? own(k) : nullptr;
}

/// Signs a one-day certificate for `key`, subject and issuer CN=volley.
std::shared_ptr<X509> self_signed(EVP_PKEY* key) {
  std::shared_ptr<X509> x = own(X509_new());
  if (!x) return nullptr;
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 24L * 3600);
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("volley"), -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  if (X509_set_pubkey(x.get(), key) != 1 || X509_sign(x.get(), key, EVP_sha256()) == 0) {
    return nullptr;
  }
  return x;
}

}  // namespace

std::string certificate_fingerprint(X509* cert) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (X509_digest(cert, EVP_sha256(), digest, &length) != 1) return {};
  std::string hex;
  hex.reserve(std::size_t{2} * length);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

TlsIdentity::TlsIdentity(std::shared_ptr<X509> cert, std::shared_ptr<EVP_PKEY> key)
    : cert_(std::move(cert)),
      key_(std::move(key)),
      fingerprint_(certificate_fingerprint(cert_.get())) {}

std::variant<TlsIdentity, std::string> TlsIdentity::generate() {
  std::shared_ptr<EVP_PKEY> key = own(EVP_EC_gen("P-256"));
  if (!key) return "cannot make a TLS key (EC P-256): " + openssl_reason();
  std::shared_ptr<X509> cert = self_signed(key.get());
  if (!cert) return "cannot sign a TLS certificate: " + openssl_reason();
  return TlsIdentity(std::move(cert), std::move(key));
}

std::variant<TlsIdentity, std::string> TlsIdentity::load(const std::string& cert_file,
                                                         const std::string& key_file,
                                                         std::string& warning) {
  bool ignored = false;
  auto cert_text = read_pem_file(cert_file, "--tls-cert", ignored);
  if (cert_text.index() == 1) return std::get<1>(std::move(cert_text));
  bool key_open = false;
  auto key_text = read_pem_file(key_file, "--tls-key", key_open);
  if (key_text.index() == 1) return std::get<1>(std::move(key_text));
  std::shared_ptr<X509> cert = parse_cert(std::get<0>(cert_text));
  if (!cert) {
    return fmt::format("--tls-cert '{}': not a PEM certificate ({})", cert_file, openssl_reason());
  }
  std::shared_ptr<EVP_PKEY> key = parse_key(std::get<0>(key_text));
  if (!key) {
    return fmt::format("--tls-key '{}': not a PEM private key without a passphrase ({})", key_file,
                       openssl_reason());
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return fmt::format("--tls-key '{}' is not the key of the certificate in --tls-cert '{}'",
                       key_file, cert_file);
  }
  if (key_open) {
    warning = fmt::format("warning: --tls-key '{}' can be read by other users; `chmod 600 {}`",
                          key_file, key_file);
  }
  return TlsIdentity(std::move(cert), std::move(key));
}

std::variant<TlsIdentity, std::string> TlsIdentity::from_pem(std::string_view cert_pem,
                                                             std::string_view key_pem) {
  std::shared_ptr<X509> cert = parse_cert(cert_pem);
  std::shared_ptr<EVP_PKEY> key = parse_key(key_pem);
  if (!cert || !key || X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return std::string("the TLS identity passed to this process is not a certificate and its key");
  }
  return TlsIdentity(std::move(cert), std::move(key));
}

std::string TlsIdentity::cert_pem() const {
  const Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert_.get()) != 1) return {};
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<std::size_t>(n)};
}

std::string TlsIdentity::key_pem() const {
  const Bio bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return {};
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<std::size_t>(n)};
}

}  // namespace volley::transport
