#pragma once
// The control plane's sessions: which message each side takes in which phase, in one table per
// kind of session. A message's handler runs only when its session's table accepts the message in
// the session's phase; every other message is refused here, with one sentence, so an out-of-phase
// message is judged in one place (docs/control-protocol.md, "Sessions", draws both tables).
//
// Two kinds of session:
// - ServedPhase: the side that runs a mirror and answers to a controller: a slave's view of its
//   master, and a child process's view of its parent.
// - PeerPhase: a controller's view of one peer that runs a share of the run: the master's view
//   of each slave, and a slave's (or the master's) view of each of its child processes.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace volley::control {

/// Every message type of the control protocol (docs/control-protocol.md).
enum class MessageType : std::uint8_t {
  kHello,
  kAuth,
  kAuthOk,
  kLoad,
  kLoaded,
  kRejected,
  kStart,
  kProceed,
  kEndStep,
  kWritten,
  kStepDone,
  kDrained,
  kInterval,
  kIntervalCounts,
  kStop,
  kFinish,
  kResults,
  kAbort,
  kBye,
  kPing,
  kError,
  kUnknown,  ///< a type this volley does not know
};
inline constexpr std::size_t kMessageTypeCount = 22;

/// The wire name ("end_step"); "?" for kUnknown.
std::string_view to_string(MessageType type);
/// The type named `name`; kUnknown for any other name.
MessageType message_type(std::string_view name);

/// The served side's phases. A run goes Idle -> Loaded -> Running -> Idle (its results sent).
enum class ServedPhase : std::uint8_t {
  kGreeting,  ///< connected; the hello (and, with a key, the proof of the key) not through yet
  kIdle,      ///< greeted; no profile loaded
  kLoaded,    ///< a profile loaded (in this process or its children); not started
  kRunning,   ///< started: steps go as the step barrier allows (step_barrier.hpp)
};
inline constexpr std::size_t kServedPhaseCount = 4;

/// A controller's view of one peer's phases, moved by what the controller sends and receives:
/// Greeting -> Greeted (its hello) -> Loading (`load` sent) -> Loaded (`loaded`) -> Running
/// (`start` sent) -> Collecting (`finish` or `stop` sent) -> Done (`results`).
enum class PeerPhase : std::uint8_t {
  kGreeting,
  kGreeted,
  kLoading,
  kLoaded,
  kRunning,
  kCollecting,
  kDone,
};
inline constexpr std::size_t kPeerPhaseCount = 7;

std::string_view to_string(ServedPhase phase);
std::string_view to_string(PeerPhase phase);

/// What a table says of one message in one phase.
enum class Rule : std::uint8_t {
  kAccept,
  kBeforeGreeting,  ///< refused: the greeting is not through (the session ends)
  kAfterGreeting,   ///< refused: a greeting message once greeted
  kBeforeLoad,      ///< refused: no profile loaded
  kAlreadyLoaded,   ///< refused: one load per run
  kBeforeStart,     ///< refused: the run has not started
  kAlreadyStarted,  ///< refused: the run has started
  kNotFromPeer,     ///< refused: the other side of the session sends it, not this one
  kOutOfPhase,      ///< refused: a peer's message that its phase does not allow
  kUnknownType,     ///< refused: no such message type
};

/// The served side's table: how it takes `type` (sent by its controller) in `phase`.
Rule served_rule(ServedPhase phase, MessageType type);
/// The controller's table: how it takes `type` (sent by the peer) while the peer is in `phase`.
Rule peer_rule(PeerPhase phase, MessageType type);

/// The transitions. A controller moves a peer's phase by what it sends it (`load`, `start`,
/// `finish` or `stop`) and by what the peer answers (`hello`, `loaded`, `results`); any other
/// message leaves the phase as it was.
PeerPhase peer_after_send(PeerPhase phase, MessageType sent);
PeerPhase peer_after_receive(PeerPhase phase, MessageType received);
/// The served side's phase once its handler of an accepted `type` succeeded (a load the slave
/// rejects leaves it Idle: the handler does not move it). The greeting ends in Idle; `finish` and
/// `stop` end the run in Idle once its results are sent.
ServedPhase served_next(ServedPhase phase, MessageType type);

/// The sentence the served side refuses a message with: "'start' before a profile was loaded".
/// `type_name` is the message's type as received (an unknown one is named as it came, made
/// printable).
std::string refusal(Rule rule, std::string_view type_name);
/// What a controller says of a peer's refused message, after "slave h sent ": "an unexpected
/// 'loaded' message (while the run's steps went)".
std::string unexpected(Rule rule, std::string_view type_name, PeerPhase phase);

}  // namespace volley::control
