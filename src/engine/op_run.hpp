#pragma once
// One operation of a strand's loop in progress (Strand::run): what the loop keeps across the
// operation's waits, and what it waits for next. The loop's coroutine frame is allocated once
// per strand and lives as long as the strand, so everything it holds is memory per connection:
// the operation's steps are plain functions (Strand::begin_op, resume_op) that keep their state
// here, and the loop has one co_await for each kind of wait. With the steps written inline, GCC
// gave every step's locals and temporaries a slot of their own, and the loop's frame came to
// 1,216 bytes (672 now, the steps' loop and its pacing included).
#include <cstdint>
#include <optional>

#include <boost/asio/awaitable.hpp>

#include "volley/transport/resuming_io.hpp"
#include "operation.hpp"

namespace volley::engine {

/// What the strand's loop waits for next, for the operation in progress.
enum class OpAwait : std::uint8_t {
  kNothing,  ///< it is over: OpRun::out is its outcome
  kSend,     ///< OpRun::io, the next send of a write through the worker's ring
  kReceive,  ///< OpRun::io, the next resuming read of OpRun::read
  kOutcome,  ///< OpRun::later, the operation's own coroutine (or a read's, on a connection
             ///< without a resuming read)
};

struct OpRun {
  PendingRead read{};             ///< a read's state (kReceive)
  const OpPlan* op = nullptr;     ///< a write through the ring (kSend): its flowop,
  StrandConnection* c = nullptr;  ///< its connection,
  std::uint64_t left = 0;         ///< and the bytes it has still to send
  transport::ResumingIo io{};     ///< kSend, kReceive
  std::optional<boost::asio::awaitable<OpOutcome>> later;  ///< kOutcome
  OpOutcome out;                                           ///< kNothing
};

}  // namespace volley::engine
