#pragma once
// The protocols a strand speaks: each is an executor (src/engine/<name>_ops.hpp) over its
// connection type (its Link, with the surface of transport/connection.hpp). The list below is the
// one place a protocol is registered; docs/architecture.md, "Protocols", says what one provides.
//
// An executor is a struct of static functions, each taking the strand's shared state
// (StrandCore). It must have: Link; write and read (a flowop's bytes on a connection: see
// StreamOps, which a byte stream derives from, and UdpOps). It may have, each found at compile time
// (the helpers below and the script's calls fall back to the default said here without it):
//   kProtocol + connect     connect flowops with protocol=kProtocol (none: not connectable)
//   kProtocol + accept      accept flowops with protocol=kProtocol, on the connection as it
//                           arrived (none: the arrival is the connection)
//   disconnect              a disconnect flowop (default: the connection's close)
//   kReliable               what the peer wrote is bound to arrive (default true)
//   kReadTimeout            a read's timeout when the flowop has none (default none)
//   accepted, adopted       an arriving connection, before an accept or the drain takes it
//   sample                  TCP_INFO at a transaction's or interval's end
//   closed_at_header        a failure reads as the slave's close at the connection header
//   burst                   whole iterations of a one-flowop transaction, in place
//   before_read, read_now, expect, resumed   a byte stream's read hooks (see TcpOps)
//   closing                 a connection about to close (TCP: its zero-copy completions)
#include <chrono>
#include <optional>
#include <type_traits>
#include <variant>

#include <boost/asio/awaitable.hpp>

#include "memory_ops.hpp"
#include "tcp_ops.hpp"
#include "tls_ops.hpp"
#include "udp_ops.hpp"
#include "uring_tcp_ops.hpp"
#include "volley/transport/connection.hpp"

namespace volley::engine {

class Worker;

namespace protocol_detail {
template <class Link, class... Ops>
struct Find;
template <class Link, class First, class... Rest>
struct Find<Link, First, Rest...> {
  using type = std::conditional_t<std::is_same_v<Link, typename First::Link>, First,
                                  typename Find<Link, Rest...>::type>;
};
template <class Link>
struct Find<Link> {
  using type = void;
};
}  // namespace protocol_detail

/// The registration: one executor per protocol.
template <class... Ops>
struct Registered {
  static_assert((transport::DataConnection<typename Ops::Link> && ...),
                "a protocol's Link must have the connection surface (transport/connection.hpp)");
  using AnyLink = std::variant<typename Ops::Link...>;
  template <class Link>
  using OpsFor = typename protocol_detail::Find<Link, Ops...>::type;
  /// Calls f.template operator()<Ops>() for each executor until one returns true.
  template <class F>
  static bool any(F&& f) {
    return (f.template operator()<Ops>() || ...);
  }
};

using Protocols = Registered<TcpOps, UdpOps, TlsOps, MemoryOps, UringTcpOps>;

/// Any data connection a strand holds, of any registered protocol.
using AnyConnection = Protocols::AnyLink;
/// The executor of connection type Link.
template <class Link>
using OpsFor = Protocols::OpsFor<std::remove_cvref_t<Link>>;

/// f(ops, link): `link`'s connection with (a value of) its executor's type: a jump through the
/// variant's index, not a virtual call.
template <class Connection, class F>
decltype(auto) with_ops(Connection& link, F&& f) {
  return std::visit([&](auto& l) -> decltype(auto) { return f(OpsFor<decltype(l)>{}, l); }, link);
}

/// kReliable (see above).
inline bool reliable(const AnyConnection& link) {
  return with_ops(link, [](auto ops, const auto&) {
    using Ops = decltype(ops);
    if constexpr (requires { Ops::kReliable; }) {
      return Ops::kReliable;
    } else {
      return true;
    }
  });
}

/// kReadTimeout (see above).
inline std::optional<std::chrono::nanoseconds> default_read_timeout(const AnyConnection& link) {
  return with_ops(link, [](auto ops, const auto&) -> std::optional<std::chrono::nanoseconds> {
    using Ops = decltype(ops);
    if constexpr (requires { Ops::kReadTimeout; }) {
      return Ops::kReadTimeout;
    } else {
      return std::nullopt;
    }
  });
}

/// Whether `link`'s protocol is a byte stream (its executor a StreamOps): the strand's loop runs
/// its plain reads and writes itself (see Strand::run).
inline bool is_stream(const AnyConnection& link) {
  return with_ops(
      link, [](auto ops, const auto&) { return std::is_base_of_v<StreamOps, decltype(ops)>; });
}

/// Whether `link`'s protocol runs whole iterations in place (burst).
inline bool bursts(const AnyConnection& link) {
  return with_ops(link, [](auto ops, const auto&) {
    return requires { &decltype(ops)::burst; };
  });
}

/// An arriving connection, before an accept takes it (accepted) or the drain adopts it (options
/// null: adopted).
inline boost::system::error_code prepare_arrival(AnyConnection& link,
                                                 const profile::ConnectionOptions* options) {
  return with_ops(link, [options](auto ops, auto& l) -> boost::system::error_code {
    using Ops = decltype(ops);
    if (options == nullptr) {
      if constexpr (requires { Ops::adopted(l); }) Ops::adopted(l);
      return {};
    }
    if constexpr (requires { Ops::accepted(l, *options); }) return Ops::accepted(l, *options);
    return {};
  });
}

/// sample (see above).
inline void sample(AnyConnection& link, stats::TcpSummary& into) {
  with_ops(link, [&into](auto ops, auto& l) {
    if constexpr (requires { decltype(ops)::sample(l, into); }) decltype(ops)::sample(l, into);
  });
}

/// closed_at_header (see above).
inline bool closed_at_header(AnyConnection& link) {
  return with_ops(link, [](auto ops, auto& l) {
    if constexpr (requires { decltype(ops)::closed_at_header(l); }) {
      return decltype(ops)::closed_at_header(l);
    } else {
      return false;
    }
  });
}

/// closing (see above): before every close of a strand's connection.
inline void closing(StrandCore& s, AnyConnection& link) {
  with_ops(link, [&s](auto ops, auto& l) {
    if constexpr (requires { decltype(ops)::closing(s, l); }) decltype(ops)::closing(s, l);
  });
}

/// The connect of the executor whose kProtocol is `protocol`; nullopt when none has it.
inline std::optional<boost::asio::awaitable<OpOutcome>> connect(profile::Protocol protocol,
                                                                StrandCore& s, const OpPlan& op,
                                                                const profile::ConnectOp& c,
                                                                const ConnectTarget& to) {
  std::optional<boost::asio::awaitable<OpOutcome>> begun;
  Protocols::any([&]<class Ops>() {
    if constexpr (requires { Ops::kProtocol; }) {
      if (Ops::kProtocol != protocol) return false;
      begun.emplace(Ops::connect(s, op, c, to));
      return true;
    } else {
      return false;
    }
  });
  return begun;
}

/// The accept of the executor whose kProtocol is `protocol`, when it has one: what an accept
/// does after taking its connection (the newest of its id). nullopt: nothing more.
inline std::optional<boost::asio::awaitable<OpOutcome>> accept(profile::Protocol protocol,
                                                               StrandCore& s, const OpPlan& op,
                                                               const profile::AcceptOp& a) {
  std::optional<boost::asio::awaitable<OpOutcome>> begun;
  Protocols::any([&]<class Ops>() {
    if constexpr (requires {
                    Ops::kProtocol;
                    Ops::accept(s, op, a);
                  }) {
      if (Ops::kProtocol != protocol) return false;
      begun.emplace(Ops::accept(s, op, a));
      return true;
    } else {
      return false;
    }
  });
  return begun;
}

/// A disconnect of `c`: its executor's, or the connection's close.
Started disconnect(StrandCore& s, const OpPlan& op, StrandConnection& c);

/// A plain TCP connection just made or accepted moves to worker `w`'s ring when it has one (the
/// io_uring engine: see UringTcpOps); otherwise, and for every other kind, nothing happens.
boost::system::error_code move_to_ring(Worker& w, AnyConnection& link);

}  // namespace volley::engine
