// Writes with zerocopy over real loopback sockets, the master's engine driven by hand against a
// plain peer: every send's completion is read and counted in its flowop (loopback copies each
// one), and a connection that closes with completions still to come leaves them unconfirmed.
#include "volley/engine/engine.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace volley::engine {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

profile::Flowop zc_flowop(std::string type, profile::FlowopSpec spec) {
  profile::Flowop f;
  f.type = std::move(type);
  f.spec = std::move(spec);
  return f;
}

/// connect; then `timed` (`bound`); then disconnect: three steps.
Plan zc_plan(profile::Flowop timed, std::variant<profile::Iterations, profile::Duration> bound) {
  profile::ConnectOp connect;
  connect.connection.remotehost = "x";
  profile::Transaction open;
  open.bound = profile::Iterations{1};
  open.flowops = {zc_flowop("connect", connect)};
  profile::Transaction work;
  work.bound = bound;
  work.flowops = {std::move(timed)};
  profile::Transaction close;
  close.bound = profile::Iterations{1};
  close.flowops = {zc_flowop("disconnect", profile::DisconnectOp{})};
  profile::Group group;
  group.name = "g";
  group.nthreads = 1;
  group.transactions = {open, work, close};
  profile::Profile p;
  p.groups = {group};
  core::Diagnostics diags;
  auto plan = compile(p, {}, diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  return plan ? std::move(*plan) : Plan{};
}

profile::Flowop zc_write(std::uint64_t bytes) {
  profile::WriteOp w;
  w.size = profile::SizeSpec::fixed(bytes);
  w.zerocopy = true;
  return zc_flowop("write", w);
}

/// A peer on 127.0.0.1: accepts one connection and, if `reads`, reads it to its end (counting
/// the bytes); else leaves it unread, with a small receive buffer, until `release` is set.
class Peer {
 public:
  explicit Peer(bool reads)
      : acceptor_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    if (!reads) {
      const int small = 4096;
      ::setsockopt(acceptor_.native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    thread_ = std::thread([this, reads] {
      asio::ip::tcp::socket s(io_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec) return;
      std::vector<char> buffer(1 << 20);
      while (!reads && !release.load()) std::this_thread::sleep_for(5ms);
      while (!ec) received += s.read_some(asio::buffer(buffer), ec);
    });
  }
  ~Peer() {
    release = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    thread_.join();
  }
  [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::atomic<std::uint64_t> received{0};
  std::atomic<bool> release{false};

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
};

/// Runs `plan`'s steps in turn; before the last one, `before_last()`.
results::RunResult run_steps(const Plan& plan, std::uint16_t port,
                             const std::function<void()>& before_last) {
  EngineConfig config;
  config.workers = 1;
  config.targets["x"] = HostTarget{asio::ip::make_address("127.0.0.1"), port};
  std::vector<std::promise<void>> done(plan.txn_count);
  config.on_txn_done = [&done](std::size_t txn) { done.at(txn).set_value(); };
  Engine engine(plan, std::move(config));
  engine.start();
  for (std::size_t t = 0; t < plan.txn_count; ++t) {
    if (t + 1 == plan.txn_count) before_last();
    engine.release(t);
    if (done[t].get_future().wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "step " << t << " did not end";
      engine.stop();
      break;
    }
  }
  return engine.finish();
}

TEST(ZeroCopyWrite, EverySendsCompletionIsCountedAndLoopbackCopiesEachOne) {
  constexpr std::uint64_t kZcIterations = 300;
  constexpr std::uint64_t kZcBytes = 64 * 1024;
  Peer peer(/*reads=*/true);
  const Plan plan = zc_plan(zc_write(kZcBytes), profile::Iterations{kZcIterations});
  const results::RunResult r = run_steps(plan, peer.port(), [&] {
    // Before the disconnect: the peer has every byte (and so has acknowledged them all, which
    // is when the kernel reports a send), with time for the last acknowledgement.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (peer.received < kZcIterations * kZcBytes &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    std::this_thread::sleep_for(300ms);
  });
  const results::SlotCounters& w = r.groups.at(0).transactions.at(1).flowops.at(0).stats.counters;
  EXPECT_EQ(w.ops, kZcIterations);
  EXPECT_EQ(w.bytes_written, kZcIterations * kZcBytes);
  EXPECT_EQ(w.error_total(), 0U);
  EXPECT_GE(w.zerocopy.sends, kZcIterations)
      << "one send a write at least (more when one is short)";
  EXPECT_EQ(w.zerocopy.copied, w.zerocopy.sends) << "loopback copies every send";
  EXPECT_EQ(w.zerocopy.zero_copied, 0U);
  EXPECT_EQ(w.zerocopy.unconfirmed(), 0U);
  const results::SlotCounters& txn = r.groups.at(0).transactions.at(1).stats.counters;
  EXPECT_FALSE(txn.zerocopy.any()) << "counted in the flowop, not again in its transaction";
}

TEST(ZeroCopyWrite, AConnectionClosedWithCompletionsToComeLeavesThemUnconfirmed) {
  // The peer reads nothing and has a small receive buffer: most sends stay in the sender's queue,
  // unacknowledged, when the step's deadline cuts the write and the disconnect closes the socket.
  Peer peer(/*reads=*/false);
  const Plan plan = zc_plan(zc_write(64 * 1024), profile::Duration{300ms});
  const results::RunResult r = run_steps(plan, peer.port(), [] {});
  peer.release = true;
  const results::SlotCounters& w = r.groups.at(0).transactions.at(1).flowops.at(0).stats.counters;
  EXPECT_GE(w.zerocopy.sends, 1U);
  EXPECT_GT(w.zerocopy.unconfirmed(), 0U) << "sends still queued when the connection closed";
  EXPECT_EQ(w.zerocopy.zero_copied + w.zerocopy.copied + w.zerocopy.unconfirmed(),
            w.zerocopy.sends);
  EXPECT_EQ(w.zerocopy.zero_copied, 0U) << "what was reported, loopback copied";
  EXPECT_EQ(w.error_total(), 0U) << "the deadline cuts the write: expired, not failed";
  EXPECT_GE(w.expired, 1U);
}

}  // namespace
}  // namespace volley::engine
