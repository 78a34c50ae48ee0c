#include "volley/control/session.hpp"

#include <fmt/format.h>

#include "volley/core/printable.hpp"

namespace volley::control {

namespace {

constexpr std::array<std::string_view, kMessageTypeCount> kTypeNames = {
    "hello",   "auth",     "auth_ok", "load",      "loaded",  "rejected", "start",
    "proceed", "end_step", "written", "step_done", "drained", "interval", "interval_counts",
    "stop",    "finish",   "results", "abort",     "bye",     "ping",     "error",
    "?"};

constexpr Rule A = Rule::kAccept;
constexpr Rule G = Rule::kBeforeGreeting;
constexpr Rule H = Rule::kAfterGreeting;
constexpr Rule L = Rule::kBeforeLoad;
constexpr Rule D = Rule::kAlreadyLoaded;
constexpr Rule S = Rule::kBeforeStart;
constexpr Rule R = Rule::kAlreadyStarted;
constexpr Rule N = Rule::kNotFromPeer;
constexpr Rule O = Rule::kOutOfPhase;
constexpr Rule U = Rule::kUnknownType;

using ServedRow = std::array<Rule, kServedPhaseCount>;
/// The served side, one row per message its controller may send it; columns Greeting, Idle,
/// Loaded, Running. A session still greeting takes nothing but the greeting.
constexpr std::array<ServedRow, kMessageTypeCount> kServed = {{
    /* hello           */ {A, H, H, H},
    /* auth            */ {A, H, H, H},
    /* auth_ok         */ {G, N, N, N},
    /* load            */ {G, A, D, D},
    /* loaded          */ {G, N, N, N},
    /* rejected        */ {G, N, N, N},
    /* start           */ {G, L, A, R},
    /* proceed         */ {G, S, S, A},
    /* end_step        */ {G, S, S, A},
    /* written         */ {G, S, S, A},
    /* step_done       */ {G, N, N, N},
    /* drained         */ {G, N, N, N},
    /* interval        */ {G, S, S, A},
    /* interval_counts */ {G, N, N, N},
    /* stop            */ {G, A, A, A},
    /* finish          */ {G, S, S, A},
    /* results         */ {G, N, N, N},
    /* abort           */ {G, A, A, A},
    /* bye             */ {G, A, A, A},
    /* ping            */ {G, A, A, A},
    /* error           */ {G, N, N, N},
    /* unknown         */ {G, U, U, U},
}};

using PeerRow = std::array<Rule, kPeerPhaseCount>;
/// The controller's view, one row per message a peer may send; columns Greeting, Greeted,
/// Loading, Loaded, Running, Collecting, Done. A peer's error or abort is taken in any phase: it
/// fails the run with the peer's sentence. Step messages are taken while collecting too: after a
/// `stop` the peer may still be ending the step it stood in.
constexpr std::array<PeerRow, kMessageTypeCount> kPeer = {{
    /* hello           */ {A, H, H, H, H, H, H},
    /* auth            */ {N, N, N, N, N, N, N},
    /* auth_ok         */ {O, H, H, H, H, H, H},
    /* load            */ {N, N, N, N, N, N, N},
    /* loaded          */ {G, O, A, O, O, O, O},
    /* rejected        */ {G, O, A, O, O, O, O},
    /* start           */ {N, N, N, N, N, N, N},
    /* proceed         */ {N, N, N, N, N, N, N},
    /* end_step        */ {N, N, N, N, N, N, N},
    /* written         */ {G, O, O, O, A, A, O},
    /* step_done       */ {G, O, O, O, A, A, O},
    /* drained         */ {G, O, O, O, A, A, O},
    /* interval        */ {N, N, N, N, N, N, N},
    /* interval_counts */ {G, O, O, O, A, A, O},
    /* stop            */ {N, N, N, N, N, N, N},
    /* finish          */ {N, N, N, N, N, N, N},
    /* results         */ {G, O, O, O, O, A, O},
    /* abort           */ {A, A, A, A, A, A, A},
    /* bye             */ {N, N, N, N, N, N, N},
    /* ping            */ {G, A, A, A, A, A, A},
    /* error           */ {A, A, A, A, A, A, A},
    /* unknown         */ {U, U, U, U, U, U, U},
}};

std::string_view peer_phase_words(PeerPhase phase) {
  switch (phase) {
    case PeerPhase::kGreeting: return "before its greeting";
    case PeerPhase::kGreeted: return "before it was sent a profile";
    case PeerPhase::kLoading: return "while it loaded the profile";
    case PeerPhase::kLoaded: return "before the run started";
    case PeerPhase::kRunning: return "while the run's steps went";
    case PeerPhase::kCollecting: return "while its results were awaited";
    case PeerPhase::kDone: return "after its results";
  }
  return "?";
}

}  // namespace

std::string_view to_string(MessageType type) { return kTypeNames[static_cast<std::size_t>(type)]; }

MessageType message_type(std::string_view name) {
  for (std::size_t i = 0; i + 1 < kMessageTypeCount; ++i) {
    if (kTypeNames[i] == name) return static_cast<MessageType>(i);
  }
  return MessageType::kUnknown;
}

std::string_view to_string(ServedPhase phase) {
  constexpr std::array<std::string_view, kServedPhaseCount> kNames = {"greeting", "idle", "loaded",
                                                                      "running"};
  return kNames[static_cast<std::size_t>(phase)];
}

std::string_view to_string(PeerPhase phase) {
  constexpr std::array<std::string_view, kPeerPhaseCount> kNames = {
      "greeting", "greeted", "loading", "loaded", "running", "collecting", "done"};
  return kNames[static_cast<std::size_t>(phase)];
}

Rule served_rule(ServedPhase phase, MessageType type) {
  return kServed[static_cast<std::size_t>(type)][static_cast<std::size_t>(phase)];
}

Rule peer_rule(PeerPhase phase, MessageType type) {
  return kPeer[static_cast<std::size_t>(type)][static_cast<std::size_t>(phase)];
}

PeerPhase peer_after_send(PeerPhase phase, MessageType sent) {
  switch (sent) {
    case MessageType::kLoad: return phase == PeerPhase::kGreeted ? PeerPhase::kLoading : phase;
    case MessageType::kStart: return phase == PeerPhase::kLoaded ? PeerPhase::kRunning : phase;
    case MessageType::kFinish:
    case MessageType::kStop:
      return phase == PeerPhase::kRunning || phase == PeerPhase::kLoaded ? PeerPhase::kCollecting
                                                                         : phase;
    default: return phase;
  }
}

PeerPhase peer_after_receive(PeerPhase phase, MessageType received) {
  if (peer_rule(phase, received) != Rule::kAccept) return phase;
  switch (received) {
    case MessageType::kHello: return PeerPhase::kGreeted;
    case MessageType::kLoaded: return PeerPhase::kLoaded;
    case MessageType::kResults: return PeerPhase::kDone;
    default: return phase;
  }
}

ServedPhase served_next(ServedPhase phase, MessageType type) {
  if (served_rule(phase, type) != Rule::kAccept) return phase;
  switch (type) {
    case MessageType::kHello:
    case MessageType::kAuth: return ServedPhase::kIdle;
    case MessageType::kLoad: return ServedPhase::kLoaded;
    case MessageType::kStart: return ServedPhase::kRunning;
    case MessageType::kFinish:
    case MessageType::kStop: return ServedPhase::kIdle;
    default: return phase;
  }
}

std::string refusal(Rule rule, std::string_view type_name) {
  const std::string type = core::printable(std::string(type_name), 40);
  switch (rule) {
    case Rule::kAccept: return {};
    case Rule::kBeforeGreeting: return fmt::format("'{}' before the greeting", type);
    case Rule::kAfterGreeting: return fmt::format("'{}' after the greeting", type);
    case Rule::kBeforeLoad: return fmt::format("'{}' before a profile was loaded", type);
    case Rule::kAlreadyLoaded:
      return "a profile is already loaded in this session (one load per run)";
    case Rule::kBeforeStart: return fmt::format("'{}' before the run was started", type);
    case Rule::kAlreadyStarted: return fmt::format("'{}' for a run already started", type);
    case Rule::kNotFromPeer:
      return fmt::format("'{}', which is the slave's to send, not the master's", type);
    case Rule::kOutOfPhase: return fmt::format("'{}' out of its phase", type);
    case Rule::kUnknownType: return fmt::format("unknown message type '{}'", type);
  }
  return {};
}

std::string unexpected(Rule rule, std::string_view type_name, PeerPhase phase) {
  const std::string type = core::printable(std::string(type_name), 40);
  if (rule == Rule::kAccept) return {};
  if (rule == Rule::kUnknownType) return fmt::format("a message of unknown type '{}'", type);
  if (rule == Rule::kNotFromPeer) return fmt::format("'{}', which is the master's to send", type);
  return fmt::format("an unexpected '{}' message ({})", type, peer_phase_words(phase));
}

}  // namespace volley::control
