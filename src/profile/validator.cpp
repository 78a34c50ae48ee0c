#include "volley/profile/validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "validate_group.hpp"
#include "volley/core/limits.hpp"
#include "volley/profile/flowop_traits.hpp"

namespace volley::profile {
namespace detail {
namespace {

/// What is known about one connection id of a strand. Each id is a pool, as in uperf: connect
/// and accept add a connection, disconnect closes one; `most` bounds how many can be open.
struct ConnectionState {
  std::optional<std::uint64_t> most = 0;  ///< nullopt: no bound (a duration loop that opens)
  SourceLocation opened_at;
  SourceLocation closed_at;  ///< line 0 until a disconnect closes one
  /// The last opener's: sendfile on TLS needs the kernel's TLS (its record layer in the kernel).
  const ConnectionOptions* options = nullptr;
};

/// Counts beyond this are clamped in the arithmetic below (no strand opens 2^40 connections), so
/// that any `count=` or `iterations=` a profile gives cannot overflow it.
constexpr std::uint64_t kClamp = std::uint64_t{1} << 40;

std::int64_t clamped(std::uint64_t n) { return static_cast<std::int64_t>(std::min(n, kClamp)); }

std::string describe(std::uint32_t conn) {
  return conn == 0 ? std::string("the anonymous connection") : fmt::format("connection {}", conn);
}

/// Walks one group's flowops in the order a strand runs them, tracking how many connections of
/// each id can be open: a use when none can be is where uperf would fail ("No such connection",
/// "Connection already closed"), so it is an error here.
class ConnectionTracker {
 public:
  explicit ConnectionTracker(core::Diagnostics& out) : out_(out) {}

  void transaction(const Transaction& txn) {
    // The first iteration, op by op; then what the remaining iterations do to each pool.
    std::map<std::uint32_t, std::optional<std::uint64_t>> at_start;
    for (const auto& [id, state] : states_) at_start[id] = state.most;
    struct Use {
      const Flowop* op;
      std::int64_t before;  ///< pool change within the iteration before the op's last execution
    };
    std::vector<Use> uses;
    std::map<std::uint32_t, std::int64_t> delta;
    for (const Flowop& op : txn.flowops) {
      const std::uint32_t conn = op.common.connection;
      const std::int64_t n = clamped(op.common.count);
      switch (traits(op.spec).connection) {
        case OnConnection::kDials:
        case OnConnection::kAccepts:
          open(op);
          delta[conn] += n;
          break;
        case OnConnection::kCloses:
          uses.push_back(Use{&op, delta[conn] - (n - 1)});
          use(op, true);
          delta[conn] -= n;
          break;
        case OnConnection::kUses:
          uses.push_back(Use{&op, delta[conn]});
          use(op, false);
          sendfile_fits(op);
          zerocopy_fits(op);
          gso_fits(op);
          break;
        case OnConnection::kNone:  // not on a connection
          break;
      }
    }
    const auto* iterations = std::get_if<Iterations>(&txn.bound);
    const std::uint64_t rounds = iterations != nullptr ? iterations->count : 0;  // 0: a duration
    if (rounds == 1) return;
    std::set<std::uint32_t> reported;
    for (const Use& u : uses) {
      const std::uint32_t conn = u.op->common.connection;
      const auto start = at_start.contains(conn) ? at_start[conn] : std::optional<std::uint64_t>(0);
      const std::int64_t d = delta[conn];
      if (!start || d >= 0 || reported.contains(conn)) continue;
      const std::int64_t first = clamped(*start) + u.before;
      if (first < 1) continue;  // already reported for the first iteration
      const std::uint64_t fails_in = 1 + static_cast<std::uint64_t>((first + (-d) - 1) / (-d));
      if (rounds != 0 && fails_in > rounds) continue;
      reported.insert(conn);
      out_.error(u.op->location,
                 fmt::format("'{}' uses {} in iteration {}{}, but none is open then: each "
                             "iteration closes {} more than it opens",
                             u.op->type, describe(conn), fails_in,
                             rounds != 0 ? fmt::format(" of {}", rounds) : std::string(), -d));
    }
    for (auto& [conn, state] : states_) {
      const std::int64_t d = delta[conn];
      const auto start = at_start.contains(conn) ? at_start[conn] : std::optional<std::uint64_t>(0);
      if (!start || !state.most || d == 0) continue;
      const auto step = static_cast<std::uint64_t>(d > 0 ? d : -d);
      if (d < 0) {
        // Closes more than it opens: drained (a duration always gets there).
        state.most = rounds != 0 && rounds <= *start / step ? *start - rounds * step : 0;
      } else if (rounds == 0 || rounds > (UINT64_MAX - *start) / step) {
        state.most.reset();  // opens more than it closes, without a bound that fits
      } else {
        state.most = *start + rounds * step;
      }
    }
  }

 private:
  void open(const Flowop& op) {
    auto& state = states_[op.common.connection];
    if (state.most && *state.most <= kClamp) {
      *state.most += std::min(op.common.count, kClamp);
    } else {
      state.most.reset();  // more than any strand can open: no bound worth tracking
    }
    state.opened_at = op.location;
    if (const auto* c = std::get_if<ConnectOp>(&op.spec)) state.options = &c->connection;
    if (const auto* a = std::get_if<AcceptOp>(&op.spec)) state.options = &a->connection;
  }

  /// sendfile hands the kernel a file to send as it is: on a TLS connection only the kernel's
  /// TLS can encrypt it on the way.
  void sendfile_fits(const Flowop& op) {
    if (!std::holds_alternative<SendfileOp>(op.spec) &&
        !std::holds_alternative<SendfilevOp>(op.spec)) {
      return;
    }
    const auto state = states_.find(op.common.connection);
    if (state == states_.end() || state->second.options == nullptr) return;
    const ConnectionOptions& c = *state->second.options;
    if (c.protocol != Protocol::kTls || c.tls.ktls == KernelTls::kOn) return;
    out_.error(op.location,
               fmt::format("'{}' on a TLS connection needs the kernel's TLS (ktls on its connect "
                           "or accept): without it the file would go out unencrypted",
                           op.type));
    out_.note(state->second.opened_at,
              fmt::format("{} is opened here", describe(op.common.connection)));
  }

  /// zerocopy asks TCP's send for MSG_ZEROCOPY. A UDP datagram carries volley's header, new at
  /// every send, and gains from zero-copy only when many datagrams go out in one call (segmentation
  /// offload); TLS encrypts into a buffer of its own (OpenSSL's, or the kernel's record layer), so
  /// the application's pages are never the ones sent.
  void zerocopy_fits(const Flowop& op) {
    const auto* w = std::get_if<WriteOp>(&op.spec);
    if (w == nullptr || !w->zerocopy) return;
    const auto state = states_.find(op.common.connection);
    if (state == states_.end() || state->second.options == nullptr) return;
    const Protocol protocol = state->second.options->protocol;
    if (protocol == Protocol::kTcp) return;
    out_.error(op.location,
               fmt::format("'{}' with zerocopy needs a TCP connection: {} is {} ({})", op.type,
                           describe(op.common.connection), protocol_name(protocol),
                           protocol == Protocol::kUdp
                               ? "each datagram carries a header written for it, and UDP gains "
                                 "from zero-copy only with segmentation offload"
                               : "TLS sends records it encrypted into its own buffer, never the "
                                 "application's pages"));
    out_.note(state->second.opened_at,
              fmt::format("{} is opened here", describe(op.common.connection)));
  }

  /// On a gso connection the kernel cuts each super-buffer into datagrams of one size, and a
  /// super-buffer worth the name holds two of them at least.
  void gso_fits(const Flowop& op) {
    const SizeSpec* size = nullptr;
    if (const auto* w = std::get_if<WriteOp>(&op.spec)) size = &w->size;
    if (const auto* r = std::get_if<ReadOp>(&op.spec)) size = &r->size;
    const auto state = states_.find(op.common.connection);
    if (size == nullptr || state == states_.end() || state->second.options == nullptr ||
        !state->second.options->gso) {
      return;
    }
    constexpr std::uint64_t kMostSegment = core::kMaxDatagramBytes / 2;
    if (size->is_random()) {
      out_.error(op.location, fmt::format("'{}' of size=rand(...) on a gso connection: the kernel "
                                          "cuts a super-buffer into datagrams of one size",
                                          op.type));
    } else if (size->min_bytes > kMostSegment) {
      out_.error(op.location,
                 fmt::format("'{}' of {}-byte datagrams on a gso connection: two do not fit in "
                             "one super-buffer of at most {} bytes (gso takes datagrams of at "
                             "most {} bytes)",
                             op.type, size->min_bytes, core::kMaxDatagramBytes, kMostSegment));
    } else {
      return;
    }
    out_.note(state->second.opened_at,
              fmt::format("{} is opened here", describe(op.common.connection)));
  }

  void use(const Flowop& op, bool closes) {
    const std::uint32_t conn = op.common.connection;
    auto& state = states_[conn];
    const std::uint64_t needed = closes ? op.common.count : 1;
    if (!state.most || *state.most >= needed) {
      if (closes) {
        if (state.most) *state.most -= needed;
        state.closed_at = op.location;
      }
      return;
    }
    if (*state.most > 0) {
      out_.error(op.location,
                 fmt::format("'{}' closes {} {} times, but at most {} {} open", op.type,
                             describe(conn), needed, *state.most, *state.most == 1 ? "is" : "are"));
      *state.most = 0;
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
      if (other_state.most == std::optional<std::uint64_t>(0)) continue;
      const std::string hint = other == 0 ? fmt::format("; remove conn={} to use it", conn)
                                          : fmt::format("; add conn={} to use it", other);
      out_.note(other_state.opened_at, fmt::format("{} is opened here{}", describe(other), hint));
      break;
    }
  }

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
    tracker.transaction(txn);
  }
}

}  // namespace detail

core::Diagnostics validate(const Profile& profile) {
  core::Diagnostics out;
  for (const Group& group : profile.groups) detail::validate_group(group, out);
  return out;
}

}  // namespace volley::profile
