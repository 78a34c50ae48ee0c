#include "tls_ops.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "strand_core.hpp"
#include "tcp_ops.hpp"
#include "volley/transport/tls_setup.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

/// The negotiated version and cipher as the report shows them, with where the record layer ran
/// when the profile asked for the kernel's.
std::string negotiated_text(const transport::TlsHandshakeResult& r, profile::KernelTls asked,
                            bool fell_back) {
  std::string text = fmt::format("{} {}", r.version, r.cipher);
  if (asked == profile::KernelTls::kOff) return text;
  if (r.kernel_tls) return text + " (kernel TLS)";
  return text + (fell_back ? " (OpenSSL's record layer: this kernel has no TLS)"
                           : " (OpenSSL's record layer: the kernel did not take this cipher)");
}

/// Runs the handshake on the newest connection of the op's id (TCP, just connected or accepted),
/// which becomes a TlsConnection; `peer` names the other end in a failure's message (empty: the
/// connection's remote address), and for a client verifying by a CA, the host its certificate
/// must name.
awaitable<OpOutcome> handshake(StrandCore& s, const OpPlan& op,
                               const profile::ConnectionOptions& options, transport::TlsRole role,
                               std::string peer) {
  const std::uint32_t id = op.common.connection;
  StrandConnection* c = s.find(id);
  const auto* setup = s.worker_.engine().config().tls.get();
  auto* tcp = c != nullptr ? std::get_if<transport::TcpConnection>(&c->link) : nullptr;
  SSL_CTX* context = setup != nullptr ? setup->context(role, options.tls) : nullptr;
  if (tcp == nullptr || context == nullptr) {
    if (c != nullptr) s.close(id);
    co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kOther,
                        "TLS: this run has no TLS set up for the connection"};
  }
  transport::TlsConnection upgraded(std::move(*tcp));
  c->link.emplace<transport::TlsConnection>(std::move(upgraded));
  auto& tls = std::get<transport::TlsConnection>(c->link);
  // The remote address is looked up only for a message (a getpeername a handshake need not pay).
  const auto named_peer = [&tls, &peer] {
    if (peer.empty()) {
      boost::system::error_code ignored;
      peer = tls.tcp().socket().remote_endpoint(ignored).address().to_string();
    }
    return peer;
  };
  const bool resume = role == transport::TlsRole::kClient && options.tls.resume;
  tls.keep_session(resume);
  SSL_SESSION* session =
      resume && s.tls_sessions_ ? s.tls_sessions_->find(id) : static_cast<SSL_SESSION*>(nullptr);
  auto ec = tls.begin(context, role, session);
  // With a CA, the certificate must also be the host's that the profile connects to.
  if (!ec && role == transport::TlsRole::kClient && !setup->trust().ca_file.empty()) {
    ec = tls.check_peer_name(named_peer());
  }
  if (ec) {
    s.close(id);
    co_return s.failure_from(ec, "TLS");
  }
  const auto started = StrandCore::Clock::now();
  for (;;) {
    std::string why;
    const transport::IoResult step = tls.handshake_step(why);
    if (!step.ec) break;
    if (!step.would_block()) {
      s.close(id);
      co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kTlsHandshake,
                          fmt::format("TLS handshake with {}: {}", named_peer(), why)};
    }
    // Only the strand's own operations change its list of connections, and this one is in
    // progress: `c` and `tls` stay where they are while it waits.
    if (auto stop =
            co_await s.wait_ready(c->link, tls.want(), "TLS handshake", Waiting::kHandshake)) {
      s.close(id);
      co_return std::move(*stop);
    }
  }
  const transport::TlsHandshakeResult done = tls.handshake_result();
  results::SlotStats& slot =
      s.worker_.slot(done.resumed ? op.handshakes->resumed : op.handshakes->full);
  ++slot.counters.ops;
  slot.latency.record(StrandCore::Clock::now() - started);
  if (slot.tls.empty()) {
    slot.tls = negotiated_text(done, options.tls.ktls, setup->kernel_tls_fell_back());
  }
  if (options.tls.ktls == profile::KernelTls::kOn && !done.kernel_tls) {
    s.close(id);
    co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kTlsHandshake,
                        fmt::format("ktls: the kernel did not take the TLS of the connection with "
                                    "{} ({} {}); write ktls=try to fall back to OpenSSL's",
                                    named_peer(), done.version, done.cipher)};
  }
  co_return OpOutcome{};
}

/// Keeps the session of `tls` for the strand's next connection of `id`, if it has one yet.
bool keep_session(StrandCore& s, std::uint32_t id, transport::TlsConnection& tls) {
  SSL_SESSION* session = tls.resumable_session();
  if (session == nullptr) return false;
  if (!s.tls_sessions_) s.tls_sessions_ = std::make_unique<transport::TlsSessions>();
  s.tls_sessions_->keep(id, session);
  return true;
}

/// Reads (and drops) what comes on the op's connection until the peer's session ticket has
/// arrived, the peer closed (its ticket may come in the same read as its close_notify), or the
/// strand is cut; keeps the session when there is one, and closes.
awaitable<OpOutcome> keep_session_then_close(StrandCore& s, const OpPlan& op) {
  const std::uint32_t id = op.common.connection;
  for (;;) {
    StrandConnection* c = s.find(id);
    auto& tls = std::get<transport::TlsConnection>(c->link);
    if (keep_session(s, id, tls)) break;
    const transport::IoResult r = tls.try_read(s.worker_.buffer());
    if (r.would_block()) {
      tls.wake_after(0);  // a ticket is a few hundred bytes: no mark a last read left
      if (co_await s.wait_ready(c->link, tls.want(), "disconnect", Waiting::kHandshake)) break;
      continue;
    }
    if (r.ec) {  // closed or failed: the next connect is a full handshake unless a ticket came
      keep_session(s, id, tls);
      break;
    }
  }
  s.close(id);
  co_return OpOutcome{};
}

}  // namespace

awaitable<OpOutcome> TlsOps::connect(StrandCore& s, const OpPlan& op, const profile::ConnectOp& c,
                                     ConnectTarget to) {
  OpOutcome tcp = co_await TcpOps::connect(s, op, c, to);
  if (tcp.status != OpOutcome::Status::kOk) co_return tcp;
  // The host as the profile names it (a DNS name or an address), else the address connected to.
  std::string host = c.connection.remotehost;
  if (host.empty()) host = to.address.to_string();
  co_return co_await handshake(s, op, c.connection, transport::TlsRole::kClient, std::move(host));
}

awaitable<OpOutcome> TlsOps::accept(StrandCore& s, const OpPlan& op, const profile::AcceptOp& a) {
  return handshake(s, op, a.connection, transport::TlsRole::kServer, {});
}

Started TlsOps::disconnect(StrandCore& s, const OpPlan& op, StrandConnection& c, Link& tls) {
  if (tls.keeps_session() && !keep_session(s, c.id, tls)) return keep_session_then_close(s, op);
  s.close(c.id);
  return OpOutcome{};
}

std::optional<OpOutcome> TlsOps::read_now(StrandCore& s, PendingRead& r, Link& tls) {
  if (tls.read_drained()) return std::nullopt;
  while (s.cut_ == CutReason::kNone) {  // after a cut, read_begin decides (as TcpOps::read_now)
    const transport::IoResult io = tls.try_read(ask(s.worker_.buffer(), r));
    if (io.would_block()) return std::nullopt;
    if (auto end = read_end(s, r, io.ec, io.bytes)) return end;
    if (s.worker_.over_budget()) return std::nullopt;
  }
  return std::nullopt;
}

void TlsOps::expect(Link& tls, std::uint64_t bytes) {
  tls.wake_after(bytes >= kLargeMessage ? bytes : 1);
}

void TlsOps::sample(Link& tls, stats::TcpSummary& into) { TcpOps::sample(tls.tcp(), into); }

bool TlsOps::closed_at_header(Link& tls) { return TcpOps::closed_at_header(tls.tcp()); }

}  // namespace volley::engine
