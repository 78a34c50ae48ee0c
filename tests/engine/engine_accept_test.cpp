// Data connections accepted on the workers: each worker listens (a port of its own per
// negotiated listener, or its share of a port the profile names) and reads headers on its own
// thread; a connection accepted on the wrong worker is handed to its strand's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "volley/transport/connection_header.hpp"

#include "volley/engine/engine.hpp"

namespace volley::engine {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr std::uint64_t kStrands = 16;

/// A loopback port nobody listens on: bound once by us, then released.
std::uint16_t free_port() {
  asio::io_context context;
  asio::ip::tcp::acceptor acceptor(context);
  acceptor.open(asio::ip::tcp::v4());
  acceptor.bind(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

/// `groups` groups of `strands` strands, each connecting (or accepting) `per_strand` times.
Plan plan_of(bool accepting, std::optional<std::uint16_t> port, std::size_t groups = 1,
             std::uint64_t per_strand = 4, std::uint64_t strands = kStrands) {
  profile::ConnectionOptions c;
  c.remotehost = "x";
  c.port = port;
  profile::Flowop op;
  op.type = accepting ? "accept" : "connect";
  if (accepting) {
    op.spec = profile::AcceptOp{c};
  } else {
    op.spec = profile::ConnectOp{c};
  }
  profile::Flowop close;
  close.type = "disconnect";
  close.spec = profile::DisconnectOp{};
  profile::Transaction txn;
  txn.bound = profile::Iterations{per_strand};
  txn.flowops = {op, close};
  profile::Profile p;
  for (std::size_t g = 0; g < groups; ++g) {
    profile::Group group;
    group.nthreads = strands;
    group.transactions = {txn};
    p.groups.push_back(group);
  }
  core::Diagnostics diags;
  auto plan = compile(p, {}, diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  return plan ? std::move(*plan) : Plan{};
}

struct Outcome {
  results::RunResult accepted;
  results::RunResult connected;
  std::uint64_t handed_over = 0;
  std::size_t listener_ports = 0;
  /// What the connecting side says it established (Engine::connected()), and what the accepting
  /// side's listeners took (Engine::accepted_connections()).
  std::map<std::pair<std::string, std::uint16_t>, std::uint64_t> connected_to;
  std::uint64_t listeners_took = 0;
  std::vector<std::uint16_t> accepting_ports;
};

/// Runs an accepting engine and a connecting engine of two workers each against each other.
Outcome connect_all(std::optional<std::uint16_t> port, std::size_t groups = 1,
                    std::uint64_t per_strand = 4, std::uint64_t strands = kStrands) {
  const Plan accepting_plan = plan_of(true, port, groups, per_strand, strands);
  const Plan connecting_plan = plan_of(false, port, groups, per_strand, strands);
  std::promise<void> accepted_all;
  std::promise<void> connected_all;
  EngineConfig a;
  a.workers = 2;
  a.token = 7;
  a.listen_address = asio::ip::make_address("127.0.0.1");
  a.on_txn_done = [&](std::size_t) { accepted_all.set_value(); };
  asio::io_context control;  // before the engine: its timers and listeners live on it
  Engine acceptor(accepting_plan, std::move(a));
  Outcome out;
  EXPECT_EQ(acceptor.open_listeners(control), "");
  out.listener_ports = acceptor.negotiated_ports().size();
  EngineConfig c;
  c.workers = 2;
  c.token = 7;
  c.targets["x"] =
      HostTarget{asio::ip::make_address("127.0.0.1"),
                 acceptor.listener_ports().at(port.value_or(0)), acceptor.negotiated_ports()};
  c.on_txn_done = [&](std::size_t) { connected_all.set_value(); };
  Engine connector(connecting_plan, std::move(c));
  acceptor.start();
  connector.start();
  acceptor.release(0);
  connector.release(0);
  const bool done = accepted_all.get_future().wait_for(60s) == std::future_status::ready &&
                    connected_all.get_future().wait_for(60s) == std::future_status::ready;
  EXPECT_TRUE(done) << "the connections did not all arrive (a hang guard)";
  if (!done) {
    acceptor.stop();
    connector.stop();
  }
  out.handed_over = acceptor.handed_over();
  out.connected_to = connector.connected();
  out.listeners_took = acceptor.accepted_connections();
  for (const auto& [requested, bound] : acceptor.listener_ports())
    out.accepting_ports.push_back(bound);
  for (const std::uint16_t p : acceptor.negotiated_ports()) out.accepting_ports.push_back(p);
  out.connected = connector.finish();
  out.accepted = acceptor.finish();
  return out;
}

TEST(AcceptOnWorkers, NegotiatedPortsNameTheWorkerSoNoConnectionIsHandedOver) {
  const Outcome out = connect_all(std::nullopt);
  EXPECT_EQ(out.listener_ports, 2U) << "one negotiated listener per worker";
  EXPECT_EQ(out.connected.connections_established, kStrands * 4);
  EXPECT_EQ(out.accepted.connections_established, kStrands * 4);
  EXPECT_EQ(out.accepted.failed_strands, 0U);
  EXPECT_EQ(out.handed_over, 0U);
}

// The master tells each slave how many TCP connections it established to its ports (its
// end_step): counted per remotehost and port the connects went to, equal to what the slave's
// listeners took, whichever worker accepted them.
TEST(AcceptOnWorkers, TheConnectingSideCountsWhatTheListenersTake) {
  for (const std::optional<std::uint16_t> port :
       {std::optional<std::uint16_t>(), std::optional(free_port())}) {
    const Outcome out = connect_all(port, 2);
    std::uint64_t sum = 0;
    for (const auto& [key, n] : out.connected_to) {
      EXPECT_EQ(key.first, "x");
      EXPECT_NE(std::find(out.accepting_ports.begin(), out.accepting_ports.end(), key.second),
                out.accepting_ports.end())
          << "port " << key.second << " is not one of the acceptor's";
      sum += n;
    }
    EXPECT_EQ(sum, 2 * kStrands * 4);
    EXPECT_EQ(out.listeners_took, 2 * kStrands * 4);
  }
}

TEST(AcceptOnWorkers, LaterGroupsOnOtherWorkersStillGetTheirConnections) {
  // Group 1 starts one worker further on: its connections reach the wrong worker's port and are
  // handed over.
  const Outcome out = connect_all(std::nullopt, 2);
  EXPECT_EQ(out.accepted.connections_established, 2 * kStrands * 4);
  EXPECT_EQ(out.accepted.failed_strands, 0U);
  EXPECT_EQ(out.handed_over, kStrands * 4);
}

TEST(AcceptOnWorkers, APortTheProfileNamesIsSharedByEveryWorker) {
  // SO_REUSEPORT: the kernel spreads the connections over both workers' listeners, by a hash of
  // the addresses, so about half arrive on the other worker and are handed over.
  const Outcome out = connect_all(free_port());
  EXPECT_EQ(out.listener_ports, 0U);
  EXPECT_EQ(out.connected.connections_established, kStrands * 4);
  EXPECT_EQ(out.accepted.connections_established, kStrands * 4);
  EXPECT_EQ(out.accepted.failed_strands, 0U);
}

/// A slave engine's configuration on loopback, 2 workers, token 7; `done` is set when its step
/// ends.
EngineConfig slave_config(std::promise<void>& done) {
  EngineConfig a;
  a.workers = 2;
  a.token = 7;
  a.slave_side = true;
  a.listen_address = asio::ip::make_address("127.0.0.1");
  a.on_txn_done = [&done](std::size_t) { done.set_value(); };
  return a;
}

TEST(AcceptOnWorkers, AConnectionLateAfterTheMastersStepEndIsStillAccepted) {
  // 50,000 connects overflow an accept queue now and then: the kernel drops the handshake's last
  // ACK, the master counts the connection and ends its step, and the connection reaches the
  // slave's listener a second or more later (a retransmission). The slave's quiescence cut (30 ms
  // of quiet) came first and the strand waiting for it failed: 45,312 of 50,000 accepted. Here a
  // connection comes 300 ms after end_txn(), which knows the master's count.
  const Plan plan = plan_of(true, std::nullopt, 1, 1);
  std::promise<void> done;
  EngineConfig a = slave_config(done);
  asio::io_context control;  // before the engine: end_txn's quiescence timer lives on it
  Engine slave(plan, std::move(a));
  ASSERT_EQ(slave.open_listeners(control), "");
  const std::vector<std::uint16_t> ports = slave.negotiated_ports();
  slave.start();
  slave.release(0);
  std::vector<asio::ip::tcp::socket> sockets;
  auto connect = [&](std::uint32_t s) {
    asio::ip::tcp::socket socket(control);
    socket.connect({asio::ip::make_address("127.0.0.1"), ports[s % ports.size()]});
    asio::write(socket, asio::buffer(transport::encode(transport::ConnectionHeader{7, 0, s, 0})));
    sockets.push_back(std::move(socket));
  };
  for (std::uint32_t s = 0; s + 1 < kStrands; ++s) connect(s);
  slave.end_txn(0, 30ms, kStrands);  // the master's step is over: it counted every connection
  control.run_for(300ms);
  connect(kStrands - 1);  // the late one
  auto finished = done.get_future();
  const auto deadline = std::chrono::steady_clock::now() + 30s;  // a hang guard
  while (finished.wait_for(0s) != std::future_status::ready &&
         std::chrono::steady_clock::now() < deadline) {
    control.run_for(20ms);
  }
  slave.stop();
  const results::RunResult r = slave.finish();
  EXPECT_EQ(r.connections_established, kStrands);
  EXPECT_EQ(r.failed_strands, 0U);
}

/// A slave whose strands each accept twice, given one connection each; the master's end of the
/// step (end_txn) says it established `master_count`. Returns the engine's long accept waits, and
/// checks that the step ends (a hang guard) with every strand's second accept cut.
std::uint64_t end_with_master_count(std::uint64_t master_count, std::uint64_t& accepted) {
  const Plan plan = plan_of(true, std::nullopt, 1, 2);
  std::promise<void> done;
  EngineConfig a = slave_config(done);
  asio::io_context control;
  Engine slave(plan, std::move(a));
  EXPECT_EQ(slave.open_listeners(control), "");
  const std::vector<std::uint16_t> ports = slave.negotiated_ports();
  for (const std::uint16_t p : ports) EXPECT_TRUE(slave.listens_on(p));
  slave.start();
  slave.release(0);
  std::vector<asio::ip::tcp::socket> sockets;
  for (std::uint32_t s = 0; s < kStrands; ++s) {
    asio::ip::tcp::socket socket(control);
    socket.connect({asio::ip::make_address("127.0.0.1"), ports[s % ports.size()]});
    asio::write(socket, asio::buffer(transport::encode(transport::ConnectionHeader{7, 0, s, 0})));
    sockets.push_back(std::move(socket));
  }
  // Every strand now waits for its second connection, which never comes.
  const auto deadline = std::chrono::steady_clock::now() + 30s;  // a hang guard
  // (A sleep, not control.run_for: with no work yet, run_for would leave `control` stopped.)
  while (slave.accepted_connections() < kStrands && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  slave.end_txn(0, 30ms, master_count);
  auto finished = done.get_future();
  while (finished.wait_for(0s) != std::future_status::ready &&
         std::chrono::steady_clock::now() < deadline) {
    control.run_for(20ms);
  }
  EXPECT_EQ(finished.wait_for(0s), std::future_status::ready)
      << "the step never ended; quiet cut " << slave.quiet_cut().value_or(99) << " accepted "
      << slave.accepted_connections() << " progress " << slave.progress() << " thinking "
      << slave.thinking();
  accepted = slave.accepted_connections();
  const std::uint64_t waits = slave.long_accept_waits();
  slave.stop();
  const results::RunResult r = slave.finish();
  EXPECT_EQ(r.connections_established, kStrands);
  return waits;
}

TEST(AcceptQuiet, AStepWithEveryConnectionTheMasterEstablishedEndsWithoutTheLongSpell) {
  // A connection storm's slave always has strands waiting to accept when the master stops; the
  // 4 s of quiet (kAcceptQuiet) is only for connections still missing. With the master's count
  // all in, the short spell ends the step.
  std::uint64_t accepted = 0;
  EXPECT_EQ(end_with_master_count(kStrands, accepted), 0U);
  EXPECT_EQ(accepted, kStrands);
}

TEST(AcceptQuiet, AStepMissingConnectionsTheMasterEstablishedTakesTheLongSpell) {
  // One the master counted never arrives (its handshake lost): the slave waits the long spell
  // for it, then cuts; the session then reports it missing (SlaveServer).
  std::uint64_t accepted = 0;
  EXPECT_EQ(end_with_master_count(kStrands + 1, accepted), 1U);
  EXPECT_EQ(accepted, kStrands);
}

TEST(ConnectGate, AStormOfConnectsLargerThanTheGateAllArrive) {
  // 600 strands connect at once, on two workers: most wait for a slot of the worker's connects
  // in flight (src/engine/connect_gate.hpp, 128) and get it when an earlier header is out.
  const Outcome out = connect_all(std::nullopt, 1, 1, 600);
  EXPECT_EQ(out.connected.connections_established, 600U);
  EXPECT_EQ(out.connected.failed_strands, 0U);
  EXPECT_EQ(out.accepted.connections_established, 600U);
  EXPECT_EQ(out.accepted.failed_strands, 0U);
}

TEST(ConnectGate, AWorkerHasNoMoreConnectsInFlightThanTheGateAndAStopEndsTheQueue) {
  // A listener that never accepts, with a backlog of one: after the first handshakes fill its
  // queue the kernel drops the others' SYNs, so those connects hang. Without the gate all 600
  // strands started a connect at once (each before any finished: their headers left seconds
  // late in a 50,000-connection run, after the peer's header deadline); with it at most 128 per
  // worker are started, plus those that completed. A stop then ends the strands waiting in the
  // gate's queue as well as the connects in flight.
  asio::io_context context;
  asio::ip::tcp::acceptor deaf(context);
  deaf.open(asio::ip::tcp::v4());
  deaf.bind({asio::ip::make_address("127.0.0.1"), 0});
  deaf.listen(1);
  const std::uint16_t port = deaf.local_endpoint().port();
  const Plan plan = plan_of(false, port, 1, 1, 600);
  EngineConfig c;
  c.workers = 1;
  c.token = 7;
  c.targets["x"] = HostTarget{asio::ip::make_address("127.0.0.1"), port, {}};
  Engine connector(plan, std::move(c));
  connector.start();
  connector.release(0);
  std::this_thread::sleep_for(1s);  // every strand has run up to its connect or the gate
  connector.stop();
  const results::RunResult r = connector.finish();  // a hang here: a strand the stop did not reach
  EXPECT_LE(r.connections_requested, 128U + 8U)
      << "connects started: at most the gate's slots, and those whose handshake completed";
  EXPECT_GE(r.connections_requested, 128U) << "the gate's slots were all used";
  EXPECT_LE(r.connections_established, 8U);
}

}  // namespace
}  // namespace volley::engine
