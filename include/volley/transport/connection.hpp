#pragma once
// What every data connection type offers a strand, whatever its protocol: non-blocking reads and
// writes, a read and a wait that suspend, sendfile, cancel and close. A type with this surface
// (TcpConnection, UdpConnection, MemoryConnection) and an executor in the engine speak a protocol:
// the engine's list of protocols (src/engine/protocols.hpp) holds them in one std::variant, so a
// call reaches its type through a jump on the variant's index, not a virtual call.
#include <sys/types.h>

#include <concepts>
#include <cstddef>
#include <span>
#include <utility>

#include "volley/transport/io_result.hpp"

namespace volley::transport {

template <class C>
concept DataConnection = requires(C& c, std::span<char> into, std::span<const char> from, int fd,
                                  off_t* offset, std::size_t bytes, Wait what) {
  /// What is there now, without waiting (would_block() when nothing is).
  { c.try_read(into) } -> std::same_as<IoResult>;
  /// What the socket takes now, without waiting.
  { c.try_write(from) } -> std::same_as<IoResult>;
  /// Reads what is there, waiting until something is.
  { c.read(into) } -> std::same_as<ReadAwaitable>;
  /// Whether a read may ask for more than its flowop wants (a byte stream keeps the rest).
  { std::as_const(c).reads_ahead() } -> std::same_as<bool>;
  /// Up to `bytes` of file `fd` from `*offset` (advanced).
  { c.sendfile(fd, offset, bytes) } -> std::same_as<IoResult>;
  { c.wait(what) } -> std::same_as<WaitAwaitable>;
  /// Ends a wait or read in progress with operation_aborted.
  c.cancel();
  c.close();
};

}  // namespace volley::transport
