#pragma once
// A TCP data connection whose waits go through its worker's io_uring (ring.hpp) instead of
// Asio's epoll reactor: a read that must wait is an IORING_OP_RECV into the caller's buffer, a
// wait for room or for data an IORING_OP_POLL_ADD, and the close a cancel of what is in flight
// on it, then close(2) (Ring::close_descriptor). Its operations name it by its slot in the ring's
// table of registered files where it has one (Ring::register_file). Reads and writes that need not
// wait are plain non-blocking system calls, as on a TcpConnection.
//
// Small messages are received by one standing receive instead of one per read, where the ring
// has scratch buffers (Ring::has_scratch): from the first read after keep_receiving(), a multishot
// receive into them counts what arrives, and reads take from that count (the bytes themselves are
// never looked at, as a load generator's are not). It stands until the end of the stream, an error,
// a cancel or the kernel's end of it (when the scratch buffers run out), and the next read that
// waits starts it again. A read that asks for a large message's bytes on a connection without it
// is one receive into the caller's buffer, which holds more than a scratch buffer. The socket
// leaves Asio's reactor when the connection is made (from a connected or accepted TcpConnection),
// so no epoll event is raised for it. The engine's strands read and send through the ring itself
// (read_resuming, send_resuming): their operations of one pass of the event loop go to the kernel
// in one io_uring_enter. Thread: the ring's (its worker's).
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "volley/transport/io_result.hpp"
#include "volley/transport/resuming_io.hpp"
#include "volley/transport/ring.hpp"
#include "volley/transport/stream_calls.hpp"
#include "volley/transport/tcp_connection.hpp"

namespace volley::transport {

class UringTcpConnection {
 public:
  /// Takes `tcp`'s socket out of Asio's reactor; or the error, with `tcp` left as it was.
  static boost::system::error_code adopt(TcpConnection& tcp, Ring& ring, UringTcpConnection& into);
  UringTcpConnection() = default;
  UringTcpConnection(UringTcpConnection&& other) noexcept;
  UringTcpConnection& operator=(UringTcpConnection&& other) noexcept;
  UringTcpConnection(const UringTcpConnection&) = delete;
  UringTcpConnection& operator=(const UringTcpConnection&) = delete;
  ~UringTcpConnection() { close(); }

  /// Reads what is there without waiting: what the standing receive counted, else (none
  /// standing) a recv(2).
  IoResult try_read(std::span<char> into);
  /// Small messages come: from the next read or readiness wait on, a receive stands (where the
  /// ring has scratch buffers). Not at once: a read in flight now may be one receive of its own,
  /// and two receives would share what comes.
  void keep_receiving();
  /// Whether try_read() has something without a system call: bytes counted, or the end.
  [[nodiscard]] bool holds_arrivals() const;
  /// Whether a standing receive serves this connection's reads (started by a read after
  /// keep_receiving(), and not ended for good).
  [[nodiscard]] bool receive_stands() const;
  /// How many times a standing receive was started on this connection.
  [[nodiscard]] std::uint64_t receives_started() const;
  IoResult try_write(std::span<const char> from);
  /// Reads what is there, up to into.size(), waiting until something is (IORING_OP_RECV): the
  /// kernel completes it at once when data is queued, else when some arrives. 0 bytes: eof.
  ReadAwaitable read(std::span<char> into);
  /// The same receive as a strand's coroutine co_awaits it (resuming_io.hpp): the completion
  /// resumes the coroutine in place from the ring's run(), without Asio's initiation frame, a
  /// type-erased handler or a dispatch. Only in a coroutine on the ring's io_context.
  ResumingIo read_resuming(std::span<char> into) {
    return ResumingIo{&UringTcpConnection::start_read, this, {into.data(), into.size()}};
  }
  /// A send (IORING_OP_SEND) a strand's coroutine co_awaits: it completes with what the socket
  /// took, at once when there is room (during the ring's next submission, together with every
  /// other strand's), else when some comes. `from` must stay valid until then.
  ResumingIo send_resuming(std::span<const char> from) {
    return ResumingIo{&UringTcpConnection::start_send,
                      this,
                      {const_cast<char*>(from.data()), from.size()}};  // NOLINT: sent, not written
  }
  [[nodiscard]] bool reads_ahead() const { return true; }
  IoResult sendfile(int fd, off_t* offset, std::size_t bytes);
  WaitAwaitable wait(Wait what);
  /// Ends the read or wait in progress with operation_aborted (through the ring, or for a read of
  /// what the standing receive counts, through the executor: it completes when the loop next runs).
  void cancel();
  void close();
  /// Wakes a waiting reader only once `bytes` are queued (SO_RCVLOWAT), as
  /// TcpConnection::wake_after does; a system call only when the mark changes.
  void wake_after(std::size_t bytes);
  [[nodiscard]] int native_handle() const { return file_.fd; }
  /// Its slot in the ring's table of registered files, or -1 (Ring::register_file).
  [[nodiscard]] int ring_slot() const { return file_.slot; }

 private:
  static void start_read(const ResumingIo& read, ResumingHandler& handler);
  static void start_send(const ResumingIo& send, ResumingHandler& handler);
  /// Starts the operation `prepare` fills in the ring (or, closed, completes it with
  /// bad_descriptor through the executor).
  template <class Prepare>
  static void start(const ResumingIo& io, ResumingHandler& handler, bool zero_is_eof,
                    Prepare prepare);

  class Arrivals;  // the standing receive and what it counted (uring_tcp_connection.cpp)

  /// The standing receive, started now if small messages come and it is not standing; or
  /// nullptr: a read is one receive of its own.
  Arrivals* standing();

  Ring* ring_ = nullptr;
  Ring::File file_;
  int wake_after_ = 1;
  bool small_ = false;  ///< keep_receiving() was called
  /// Made by the first read after keep_receiving() (standing()); outlives the connection while its
  /// receive is in flight.
  Arrivals* arrivals_ = nullptr;
};

}  // namespace volley::transport
