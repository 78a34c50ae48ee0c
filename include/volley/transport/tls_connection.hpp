#pragma once
// A TLS data connection: OpenSSL's record layer over a TcpConnection's non-blocking socket,
// behind the surface every connection type has (transport/connection.hpp). Reads and writes move
// application bytes; the handshake is run in steps by its owner (handshake_step, waiting for
// want() between them), so that the strand times and counts it. With kernel TLS on, sendfile goes
// through the kernel's record layer (SSL_sendfile); without it sendfile is refused.
// Thread: the owning worker's.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/system/error_code.hpp>

#include "volley/transport/io_result.hpp"
#include "volley/transport/tcp_connection.hpp"

using SSL = struct ssl_st;
using SSL_CTX = struct ssl_ctx_st;
using SSL_SESSION = struct ssl_session_st;

namespace volley::transport {

enum class TlsRole { kClient, kServer };

/// How a TLS connection's handshake came out, for the report.
struct TlsHandshakeResult {
  bool resumed = false;
  bool kernel_tls = false;  ///< the record layer (sending) moved to the kernel
  std::string version;      ///< "TLSv1.3"
  std::string cipher;       ///< "TLS_AES_128_GCM_SHA256"
};

class TlsConnection {
 public:
  using Socket = TcpConnection::Socket;

  explicit TlsConnection(TcpConnection tcp);
  TlsConnection(TlsConnection&&) noexcept = default;
  TlsConnection& operator=(TlsConnection&&) noexcept = default;
  ~TlsConnection();

  /// Starts TLS on the connected socket in `role`, offering `session` (a client resuming; null
  /// for a full handshake). An error only when OpenSSL cannot make the connection's state.
  boost::system::error_code begin(SSL_CTX* context, TlsRole role, SSL_SESSION* session);
  /// A client's check of the peer's identity beyond its chain (for a CA's verification: a pin
  /// needs none): the certificate's subjectAltName must name `host`, the host connected to: its
  /// IP address when `host` is an IP literal, else its DNS name. After begin(), before the
  /// handshake; an error only when OpenSSL refuses the name.
  boost::system::error_code check_peer_name(const std::string& host);
  /// Advances the handshake without waiting: done (no error), would_block (wait for want(),
  /// then call again), or the failure, its message in `why` (OpenSSL's reason, and the
  /// certificate check's when that failed).
  IoResult handshake_step(std::string& why);
  [[nodiscard]] TlsHandshakeResult handshake_result() const;
  /// What the last call that would block waits for: the socket readable or writable (a write
  /// may need to read first, and a read to write).
  [[nodiscard]] Wait want() const { return st_->want; }
  /// The session to resume from on the strand's next connection (a new reference, or null
  /// while the peer has not yet sent one: TLS 1.3 sends its tickets after the handshake).
  [[nodiscard]] SSL_SESSION* resumable_session() const;

  /// Reads what is there, up to into.size(): while the records are whole ones (16 KiB, a
  /// stream's), every record OpenSSL holds or the socket has now, not one record per call; a
  /// shorter record ends the read. Bytes read come back without an error even when the read then
  /// found nothing more or failed: a failure or the end of the stream comes with the next call.
  IoResult try_read(std::span<char> into);
  IoResult try_write(std::span<const char> from);
  /// A byte stream: a read may take more than its flowop wants.
  [[nodiscard]] bool reads_ahead() const { return true; }
  /// The last read found the socket drained and OpenSSL without a whole record (it ended on
  /// would_block): the next read waits for the socket before it reads (one failing read(2) less
  /// per wake-up).
  [[nodiscard]] bool read_drained() const { return st_->read_drained; }
  /// Reads what is there (try_read), waiting until something is: for the socket first when the
  /// last read drained it.
  ReadAwaitable read(std::span<char> into);
  /// Through the kernel's TLS (SSL_sendfile) when the handshake moved it there; else refused
  /// with operation_not_supported (the profile refuses sendfile on TLS without ktls).
  IoResult sendfile(int fd, off_t* offset, std::size_t bytes);
  WaitAwaitable wait(Wait what);
  /// The peer will send at least `bytes` more application bytes: a reader waiting for the socket
  /// is woken only once it holds the bytes sure to come of their records (SO_RCVLOWAT, as
  /// TcpConnection::wake_after, at most kMaxWakeAfter). The mark counts ciphertext
  /// on the socket, at least as long as the plaintext it carries, less what OpenSSL already took
  /// from the socket: the plaintext it has opened (SSL_pending) and the one record it may have
  /// begun to read (read-ahead takes what the socket has, and OpenSSL opens every whole record
  /// before it reads again: less than SSL3_RT_MAX_PACKET_SIZE bytes). For a wait that follows a
  /// read that found nothing (would_block): with whole records held a reader does not wait.
  /// Without a mark (1) when that leaves nothing, or while the kernel's record layer receives.
  void wake_after(std::uint64_t bytes);
  /// A TLS stream's reader wakes at least every 256 KiB, not every MiB as TCP's: measured on
  /// loopback, one stream of 64 KiB writes cost 5-10% less CPU per KiB on both ends than with a
  /// 1 MiB mark (docs/performance.md, "TLS scripts"): the records wait in the socket for less
  /// long, and are read from nearer caches.
  static constexpr std::size_t kMaxWakeAfter = std::size_t{256} * 1024;
  void cancel() { tcp_.cancel(); }
  /// Sends close_notify when the handshake was done (once, without waiting for room or for the
  /// peer's), then closes the socket.
  void close();

  TcpConnection& tcp() { return tcp_; }
  /// Whether its session is to be kept for the strand's next connection (a client with resume).
  void keep_session(bool keep) { st_->keep_session = keep; }
  [[nodiscard]] bool keeps_session() const { return st_->keep_session; }

 private:
  struct SslFree {
    void operator()(SSL* s) const;
  };
  /// An OpenSSL call's return `ret` (with `n` bytes moved) as an IoResult, setting `want`.
  IoResult outcome(int ret, std::size_t n);

  /// The TLS side of the connection, on the heap (made with it; a moved-from connection has
  /// none): a connection of any kind is as large as the engine's AnyConnection, a variant as
  /// large as its largest kind, so every kind is kept about as small as a TcpConnection.
  struct State {
    std::unique_ptr<SSL, SslFree> ssl;
    Wait want = Wait::kReadable;
    bool blocked = false;  ///< the last call would block, waiting for `want`
    bool established = false;
    bool keep_session = false;
    bool kernel_reads = false;  ///< the kernel's record layer receives (no wake-up mark)
    bool read_drained = false;  ///< see read_drained()
    /// A failure (or the end) a read met after it had taken bytes: the next read's outcome.
    IoResult deferred;
    /// The session a client offered (compared, never used: the strand's TlsSessions owns it).
    const SSL_SESSION* offered = nullptr;
  };

  TcpConnection tcp_;
  std::unique_ptr<State> st_;
};

/// A strand's sessions to resume from: per connection id, its last connection's.
class TlsSessions {
 public:
  TlsSessions() = default;
  TlsSessions(const TlsSessions&) = delete;
  TlsSessions& operator=(const TlsSessions&) = delete;
  ~TlsSessions();
  /// The session kept for `id`, or null.
  [[nodiscard]] SSL_SESSION* find(std::uint32_t id) const;
  /// Keeps `session` for `id` (taking over its reference), dropping the one kept before.
  void keep(std::uint32_t id, SSL_SESSION* session);

 private:
  std::vector<std::pair<std::uint32_t, SSL_SESSION*>> sessions_;
};

}  // namespace volley::transport
