#pragma once
// The executor of byte-stream protocols (TCP, the tests' in-memory connections): writes and reads
// of a flowop's bytes and sendfile, over the connection surface (transport/connection.hpp). A
// stream protocol's executor derives from it and adds its own hooks (see protocols.hpp). Its reads
// and writes are what a ping-pong runs: no coroutine frame unless the operation must wait.
// Thread: the strand's worker.
#include <cstdint>
#include <optional>
#include <span>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include "volley/transport/io_result.hpp"
#include "volley/transport/resuming_io.hpp"
#include "operation.hpp"

namespace volley::engine {

class StrandCore;

struct StreamOps {
  /// A write flowop of `bytes` on `c`: written at once if the socket takes it all.
  static Started write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                       std::optional<std::uint64_t> chunk);
  /// Reads exactly `bytes` on `c`, at most `chunk` per system call: what the stash holds and what
  /// the socket has now at once, the rest as a PendingRead.
  static Started read(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                      std::optional<std::uint64_t> chunk);
  /// Writes what the socket takes now, without waiting, of `left` (lowered by what was written).
  /// The outcome when the write is over (done or failed); nullopt when the rest must wait, for
  /// room (`blocked`) or for the worker's other strands (over budget).
  static std::optional<OpOutcome> write_now(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                            std::uint64_t& left, std::optional<std::uint64_t> chunk,
                                            bool& blocked);
  /// Writes exactly `bytes` on the op's connection, at most `chunk` per system call; waits for
  /// room first if `wait_first` (write_now found none).
  static boost::asio::awaitable<OpOutcome> send(StrandCore& s, const OpPlan& op,
                                                std::uint64_t bytes,
                                                std::optional<std::uint64_t> chunk,
                                                bool wait_first);
  /// The start of every read of `r` (its op, c, bytes, left and chunk set): what the stash holds,
  /// then (reading ahead, as the connection does without chunk=) what the socket has now. The
  /// outcome when that was all of it, else nullopt: the rest must wait.
  static std::optional<OpOutcome> begin_read(StrandCore& s, PendingRead& r);
  /// Before each read of `r` that waits: the outcome when the strand was cut, else nullopt and
  /// `into`, the part of the worker's buffer to read into.
  static std::optional<OpOutcome> read_begin(StrandCore& s, PendingRead& r, std::span<char>& into);
  /// The read that waits, through the connection's read().
  static transport::ReadAwaitable read_wait(PendingRead& r, std::span<char> into);
  /// The same read without Asio's initiation frame (transport/resuming_io.hpp), when the
  /// connection offers one (read_resuming); then resumed() after it.
  static std::optional<transport::ResumingIo> resuming_read(PendingRead& r, std::span<char> into);
  /// Whether `c`'s connection offers a resuming read (resuming_read is then never nullopt).
  static bool reads_resuming(const StrandConnection& c);
  /// A resuming read of `r` completed and the strand resumes (the protocol's `resumed` hook, if
  /// any). `frame`: an address in the caller's coroutine frame.
  static void resumed(StrandCore& s, PendingRead& r, const void* frame,
                      const transport::IoDone& got);
  /// After each read of `r`: the outcome when the operation is over, nullopt when more is to come.
  static std::optional<OpOutcome> read_end(StrandCore& s, PendingRead& r,
                                           const boost::system::error_code& ec, std::size_t got);
  /// Whether a plain write's next send on `c` goes through its worker's ring (the io_uring
  /// engine: with the other strands' sends of the same pass, in one io_uring_enter): `c` is on a
  /// ring with no standing receive, and the strand may wait for room. Else write_now and send do
  /// it.
  static bool sends_in_ring(const StrandCore& s, const StrandConnection& c);
  /// The next send of a write with `left` bytes to go on `c` (sends_in_ring), from the worker's
  /// buffer: a wait for room, which a cut cancels.
  static transport::ResumingIo ring_send(StrandCore& s, StrandConnection& c, std::uint64_t left);
  /// After each such send: counts what it sent; the outcome when the write is over (done,
  /// failed, or cut while it waited for room), nullopt when more is to send. `frame`: an address
  /// in the caller's coroutine frame, for the prefetch of the next strand the ring resumes
  /// (prefetch_successor: its sends complete in a repeating order too).
  static std::optional<OpOutcome> ring_sent(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                            std::uint64_t& left, const transport::IoDone& sent,
                                            const void* frame);
  /// The whole of `r`, for a caller that is a coroutine anyway.
  static boost::asio::awaitable<OpOutcome> read_rest(StrandCore& s, PendingRead r);
  /// sendfile or sendfilev: `nfiles` files of the op's file set, drawn, at most `chunk` per call.
  static boost::asio::awaitable<OpOutcome> sendfile(StrandCore& s, const OpPlan& op,
                                                    std::uint64_t nfiles,
                                                    std::optional<std::uint64_t> chunk);
  /// Before a wait to read on `c`: the peer will send at least `bytes` more (the protocol's
  /// `expect` hook, if any: see TcpOps::expect).
  static void expect(StrandConnection& c, std::uint64_t bytes);
  /// A message of this many bytes or more is read as a stream: its read asks for the whole
  /// buffer (ask), and a protocol may count what is left and set a wake-up mark (TcpOps).
  static constexpr std::uint64_t kLargeMessage = std::uint64_t{16} * 1024;
  /// What read `r`, reading ahead, asks for of the worker's `buffer`: all of it for a large
  /// message, 16 KiB for a small one.
  static std::span<char> ask(std::span<char> buffer, const PendingRead& r);
  /// Bytes the peer is sure to send on r's connection from now on, for its wake-up mark
  /// (expect): the rest of `r`; on a slave, for a large message's read of a read stream
  /// (OpPlan::read_stream) before the peer's end of the step, no bound (the peer writes on until
  /// then, and Strand::peer_ended lowers the mark to what it still owes).
  static std::uint64_t certain(const StrandCore& s, const PendingRead& r);
};

}  // namespace volley::engine
