#pragma once
// What one execution of a flowop comes to, and what beginning one hands the strand's loop: shared
// by the strand's script (strand.hpp) and its protocols' executors (protocols.hpp).
#include <cstdint>
#include <optional>
#include <variant>

#include <boost/asio/awaitable.hpp>

#include "volley/engine/error_kind.hpp"
#include "volley/engine/plan.hpp"
#include "op_message.hpp"

namespace volley::engine {

struct StrandConnection;

/// What one execution of a flowop came to.
struct OpOutcome {
  /// kLost: a UDP read that ended with no datagram (timeout=); counted, and the strand goes on.
  enum class Status { kOk, kFailed, kExpired, kLost };
  Status status = Status::kOk;
  results::ErrorKind error = results::ErrorKind::kOther;
  OpMessage message;  ///< for failures: what happened, for the error log
};

/// A read on a byte stream that must wait for the socket. Its caller co_awaits the connection's
/// read itself (StreamOps::read_begin, the read, StreamOps::read_end) rather than a coroutine of
/// its own: in a ping-pong every read waits, and a frame per read was an allocation per round trip.
struct PendingRead {
  const OpPlan* op;
  StrandConnection* c;
  std::uint64_t bytes;  ///< the flowop's
  std::uint64_t left;   ///< of those, still to read
  std::optional<std::uint64_t> chunk;
  bool ahead;  ///< asks for the whole buffer (see StreamOps::read_begin)
};

/// An operation begun: its outcome if it is already over, else what to co_await for it.
using Started = std::variant<OpOutcome, boost::asio::awaitable<OpOutcome>, PendingRead>;

}  // namespace volley::engine
