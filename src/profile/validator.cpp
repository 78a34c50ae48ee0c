#include "volley/profile/validator.hpp"

#include <fmt/format.h>

#include <map>
#include <type_traits>

#include "validate_group.hpp"

namespace volley::profile {
namespace detail {
namespace {

struct ConnectionState {
  bool open = false;
  SourceLocation opened_at;
  SourceLocation closed_at;  ///< line 0 until a disconnect closes it
};

std::string describe(std::uint32_t conn) {
  return conn == 0 ? std::string("the anonymous connection") : fmt::format("connection {}", conn);
}

/// Walks one group's flowops in the order a strand runs them the first time through, tracking
/// which connections are open.
class ConnectionTracker {
 public:
  explicit ConnectionTracker(core::Diagnostics& out) : out_(out) {}

  void open(const Flowop& op) {
    auto& state = states_[op.common.connection];
    if (state.open) {
      out_.warning(op.location, fmt::format("'{}' opens {} again, but it is already open", op.type,
                                            describe(op.common.connection)));
      out_.note(state.opened_at, "it is opened here");
    }
    state.open = true;
    state.opened_at = op.location;
  }

  void use(const Flowop& op, bool closes) {
    const std::uint32_t conn = op.common.connection;
    auto& state = states_[conn];
    if (state.open) {
      if (closes) {
        state.open = false;
        state.closed_at = op.location;
      }
      return;
    }
    out_.error(op.location,
               fmt::format("'{}' uses {}, but no earlier flowop in this group opens it", op.type,
                           describe(conn)));
    if (state.closed_at.line != 0) {
      out_.note(state.closed_at, fmt::format("{} is closed here", describe(conn)));
      return;
    }
    for (const auto& [other, other_state] : states_) {
      if (!other_state.open) continue;
      const std::string hint = other == 0 ? fmt::format("; remove conn={} to use it", conn)
                                          : fmt::format("; add conn={} to use it", other);
      out_.note(other_state.opened_at, fmt::format("{} is opened here{}", describe(other), hint));
      break;
    }
  }

 private:
  core::Diagnostics& out_;
  std::map<std::uint32_t, ConnectionState> states_;
};

}  // namespace

void validate_group(const Group& group, core::Diagnostics& out) {
  if (group.nthreads == 0) {
    out.error(group.location,
              fmt::format("'{}' must be at least 1", group.from_nprocs ? "nprocs" : "nthreads"));
  }
  ConnectionTracker tracker(out);
  for (const Transaction& txn : group.transactions) {
    // iterations="0" (a warning when parsed): never runs, so it opens and uses nothing.
    if (const auto* it = std::get_if<Iterations>(&txn.bound); it && it->count == 0) continue;
    if (const auto* d = std::get_if<Duration>(&txn.bound); d && d->length.count() <= 0) {
      out.error(txn.location, "'duration' must be longer than 0");
    }
    for (const Flowop& op : txn.flowops) {
      std::visit(
          [&](const auto& spec) {
            using T = std::decay_t<decltype(spec)>;
            if constexpr (std::is_same_v<T, ConnectOp> || std::is_same_v<T, AcceptOp>) {
              tracker.open(op);
            } else if constexpr (std::is_same_v<T, DisconnectOp>) {
              tracker.use(op, true);
            } else if constexpr (std::is_same_v<T, ThinkOp> || std::is_same_v<T, NopOp>) {
              // Not on a connection.
            } else {
              tracker.use(op, false);
            }
          },
          op.spec);
    }
  }
}

}  // namespace detail

core::Diagnostics validate(const Profile& profile) {
  core::Diagnostics out;
  for (const Group& group : profile.groups) detail::validate_group(group, out);
  return out;
}

}  // namespace volley::profile
