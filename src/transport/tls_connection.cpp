#include "volley/transport/tls_connection.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <fmt/format.h>

namespace volley::transport {
namespace {

using boost::system::error_code;

error_code system_error(int e) { return {e, boost::system::system_category()}; }

/// OpenSSL's first queued error as an error_code of Asio's SSL category (its message is OpenSSL's
/// reason), and the queue emptied.
error_code openssl_error() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return boost::asio::error::eof;
  return {static_cast<int>(code), boost::asio::error::get_ssl_category()};
}

}  // namespace

void TlsConnection::SslFree::operator()(SSL* s) const { SSL_free(s); }

TlsConnection::TlsConnection(TcpConnection tcp)
    : tcp_(std::move(tcp)), st_(std::make_unique<State>()) {}

TlsConnection::~TlsConnection() = default;

error_code TlsConnection::begin(SSL_CTX* context, TlsRole role, SSL_SESSION* session) {
  st_->ssl.reset(SSL_new(context));
  if (!st_->ssl || SSL_set_fd(st_->ssl.get(), tcp_.socket().native_handle()) != 1) {
    return openssl_error();
  }
  if (role == TlsRole::kClient) {
    SSL_set_connect_state(st_->ssl.get());
    if (session != nullptr) SSL_set_session(st_->ssl.get(), session);
    st_->offered = session;
  } else {
    SSL_set_accept_state(st_->ssl.get());
  }
  return {};
}

error_code TlsConnection::check_peer_name(const std::string& host) {
  error_code not_ip;
  boost::asio::ip::make_address(host, not_ip);
  // The subjectAltName only: a DNS name is not looked for in the subject's common name.
  SSL_set_hostflags(st_->ssl.get(), X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
  const int ok = not_ip
                     ? SSL_set1_host(st_->ssl.get(), host.c_str())
                     : X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(st_->ssl.get()), host.c_str());
  return ok == 1 ? error_code{} : openssl_error();
}

namespace {

/// Why the certificate check failed, for a handshake's failure: OpenSSL's words, and for a name
/// that did not match, the name looked for.
std::string verify_failure(SSL* ssl, long verify) {
  std::string why = X509_verify_cert_error_string(verify);
  if (verify != X509_V_ERR_HOSTNAME_MISMATCH && verify != X509_V_ERR_IP_ADDRESS_MISMATCH) {
    return why;
  }
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  std::string name;
  if (verify == X509_V_ERR_HOSTNAME_MISMATCH) {
    if (const char* host = X509_VERIFY_PARAM_get0_host(param, 0)) name = host;
  } else if (char* ip = X509_VERIFY_PARAM_get1_ip_asc(param)) {
    name = ip;
    OPENSSL_free(ip);
  }
  return fmt::format("{}: the certificate's subjectAltName does not name {}, the host connected to",
                     why, name);
}

}  // namespace

IoResult TlsConnection::handshake_step(std::string& why) {
  ERR_clear_error();
  const int ret = SSL_do_handshake(st_->ssl.get());
  if (ret == 1) {
    st_->established = true;
    st_->kernel_reads = BIO_get_ktls_recv(SSL_get_rbio(st_->ssl.get())) != 0;
    return {};
  }
  const int code = SSL_get_error(st_->ssl.get(), ret);
  if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return outcome(ret, 0);
  const unsigned long queued = ERR_peek_error();
  IoResult r = outcome(ret, 0);
  const char* reason = queued != 0 ? ERR_reason_error_string(queued) : nullptr;
  if (code == SSL_ERROR_SSL && reason != nullptr) {
    why = reason;
  } else if (r.ec == boost::asio::error::eof) {
    why = "the peer closed the connection during the handshake";
  } else {
    why = r.ec.message();
  }
  const long verify = SSL_get_verify_result(st_->ssl.get());
  if (verify == X509_V_ERR_CERT_REJECTED) {  // only the pin check rejects (TlsSetup)
    why += " (its certificate is not the one the peer announced over the control channel)";
  } else if (verify != X509_V_OK) {
    why += fmt::format(" ({})", verify_failure(st_->ssl.get(), verify));
  }
  if (!r.ec) r.ec = boost::asio::error::eof;
  return r;
}

TlsHandshakeResult TlsConnection::handshake_result() const {
  TlsHandshakeResult r;
  if (!st_ || !st_->ssl) return r;
  r.resumed = SSL_session_reused(st_->ssl.get()) == 1;
  r.kernel_tls = BIO_get_ktls_send(SSL_get_wbio(st_->ssl.get())) != 0;
  r.version = SSL_get_version(st_->ssl.get());
  if (const SSL_CIPHER* c = SSL_get_current_cipher(st_->ssl.get()))
    r.cipher = SSL_CIPHER_get_name(c);
  return r;
}

SSL_SESSION* TlsConnection::resumable_session() const {
  if (!st_ || !st_->ssl || !st_->established) return nullptr;
  SSL_SESSION* s = SSL_get0_session(st_->ssl.get());
  if (s == nullptr) return nullptr;
  // TLS 1.3 resumes from a ticket, which comes after the handshake (the session is "resumable"
  // by OpenSSL's test before it arrives), and a ticket once: a resumed connection waits for the
  // fresh one the server sends it (a server may refuse a ticket used before). TLS 1.2 resumes
  // from the session ID at once.
  const bool ready = SSL_version(st_->ssl.get()) == TLS1_3_VERSION
                         ? s != st_->offered && SSL_SESSION_has_ticket(s) == 1
                         : SSL_SESSION_is_resumable(s) == 1;
  if (!ready) return nullptr;
  SSL_SESSION_up_ref(s);
  return s;
}

IoResult TlsConnection::outcome(int ret, std::size_t n) {
  st_->blocked = false;
  if (ret > 0) return IoResult{n, {}};
  const int code = SSL_get_error(st_->ssl.get(), ret);
  switch (code) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      st_->want = code == SSL_ERROR_WANT_READ ? Wait::kReadable : Wait::kWritable;
      st_->blocked = true;
      return {0, system_error(EAGAIN)};
    case SSL_ERROR_ZERO_RETURN:  // the peer's close_notify
      ERR_clear_error();
      return {0, boost::asio::error::eof};
    case SSL_ERROR_SYSCALL: {
      const int e = errno;
      ERR_clear_error();
      // No errno: the peer closed the socket without close_notify.
      return {0, e != 0 ? system_error(e) : error_code(boost::asio::error::eof)};
    }
    default: {
      const unsigned long reason = ERR_peek_error();
      // OpenSSL 3 reports a close without close_notify as an SSL error of its own.
      if (ERR_GET_REASON(reason) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        ERR_clear_error();
        return {0, boost::asio::error::eof};
      }
      return {0, openssl_error()};
    }
  }
}

IoResult TlsConnection::try_read(std::span<char> into) {
  if (st_->deferred.ec) return std::exchange(st_->deferred, IoResult{});
  std::size_t total = 0;
  for (;;) {
    std::size_t n = 0;
    errno = 0;
    const int ret = SSL_read_ex(st_->ssl.get(), into.data() + total, into.size() - total, &n);
    if (ret > 0) {
      total += n;
      // On while the records are whole (a stream's: more may be there) or OpenSSL holds more; a
      // short record (a small message's, or a message's last) ends the read, as one read(2)
      // would, without a read that finds nothing.
      if (total < into.size() &&
          (n == SSL3_RT_MAX_PLAIN_LENGTH || SSL_has_pending(st_->ssl.get()) == 1)) {
        continue;
      }
      st_->read_drained = false;
      return outcome(ret, total);
    }
    const IoResult r = outcome(ret, 0);
    st_->read_drained = r.would_block() && st_->want == Wait::kReadable;
    if (total == 0) return r;
    if (!r.would_block()) st_->deferred = r;
    return IoResult{total, {}};
  }
}

IoResult TlsConnection::try_write(std::span<const char> from) {
  std::size_t n = 0;
  errno = 0;
  const int ret = SSL_write_ex(st_->ssl.get(), from.data(), from.size(), &n);
  return outcome(ret, n);
}

ReadAwaitable TlsConnection::read(std::span<char> into) {
  // After a read that drained the socket, the wait comes first: re-arming the socket (as
  // async_wait does) sees data that came since, so none is missed.
  bool wait_first = st_->read_drained && !st_->deferred.ec;
  Wait direction = Wait::kReadable;
  for (;;) {
    if (!wait_first) {
      const IoResult r = try_read(into);
      if (!r.would_block()) co_return std::tuple{r.ec, r.bytes};
      direction = st_->want;
    }
    wait_first = false;
    auto [ec] = co_await tcp_.socket().async_wait(
        direction == Wait::kReadable ? Socket::wait_read : Socket::wait_write, kWaitToken);
    if (ec) co_return std::tuple{ec, std::size_t{0}};
  }
}

WaitAwaitable TlsConnection::wait(Wait what) {
  // Records OpenSSL already holds are there to read now, whatever the socket says; after a read
  // that drained it, OpenSSL holds at most part of one, which waits for the socket.
  if (what == Wait::kReadable && st_->ssl &&
      (st_->deferred.ec || (!st_->read_drained && SSL_has_pending(st_->ssl.get()) == 1))) {
    co_return std::tuple{error_code{}};
  }
  // A write may need to read first (and a read to write): wait for what OpenSSL last asked.
  const Wait direction = st_->blocked ? st_->want : what;
  co_return co_await tcp_.socket().async_wait(
      direction == Wait::kReadable ? Socket::wait_read : Socket::wait_write, kWaitToken);
}

void TlsConnection::wake_after(std::uint64_t bytes) {
  // What OpenSSL may hold of the bytes to come: plaintext it opened and has not handed out, and
  // the raw bytes of one record it has begun to read (at most a whole record's, header included).
  std::uint64_t held = SSL3_RT_MAX_PACKET_SIZE;
  if (st_->ssl) held += static_cast<std::uint64_t>(SSL_pending(st_->ssl.get()));
  const std::uint64_t mark = st_->kernel_reads || bytes <= held ? 1 : bytes - held;
  tcp_.wake_after(static_cast<std::size_t>(std::min<std::uint64_t>(mark, kMaxWakeAfter)));
}

IoResult TlsConnection::sendfile(int fd, off_t* offset, std::size_t bytes) {
  if (!st_->ssl || BIO_get_ktls_send(SSL_get_wbio(st_->ssl.get())) == 0) {
    return {0, boost::asio::error::operation_not_supported};
  }
  const ossl_ssize_t sent = SSL_sendfile(st_->ssl.get(), fd, *offset, bytes, 0);
  if (sent >= 0) {
    *offset += static_cast<off_t>(sent);
    return {static_cast<std::size_t>(sent), {}};
  }
  return outcome(static_cast<int>(sent), 0);
}

TlsSessions::~TlsSessions() {
  for (auto& [id, session] : sessions_) SSL_SESSION_free(session);
}

SSL_SESSION* TlsSessions::find(std::uint32_t id) const {
  for (const auto& [kept, session] : sessions_) {
    if (kept == id) return session;
  }
  return nullptr;
}

void TlsSessions::keep(std::uint32_t id, SSL_SESSION* session) {
  for (auto& [kept, old] : sessions_) {
    if (kept == id) {
      SSL_SESSION_free(old);
      old = session;
      return;
    }
  }
  sessions_.emplace_back(id, session);
}

void TlsConnection::close() {
  if (st_ && st_->ssl && st_->established) {
    ERR_clear_error();
    SSL_shutdown(st_->ssl.get());  // close_notify; the peer's is not waited for
    ERR_clear_error();
  }
  tcp_.close();
}

}  // namespace volley::transport
