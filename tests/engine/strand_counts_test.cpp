// Each strand's own counts (EngineConfig::count_strands, uperf's -T): two engines on loopback, a
// ping-pong of three strands spread over two workers. Counted only when asked.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "volley/engine/engine.hpp"

namespace volley::engine {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr std::uint64_t kStrands = 3;
constexpr std::uint64_t kRoundTrips = 50;
constexpr std::uint64_t kBytes = 100;

profile::Flowop transfer_op(bool write) {
  profile::Flowop f;
  f.type = write ? "write" : "read";
  if (write) {
    profile::WriteOp w;
    w.size = profile::SizeSpec::fixed(kBytes);
    f.spec = w;
  } else {
    profile::ReadOp r;
    r.size = profile::SizeSpec::fixed(kBytes);
    f.spec = r;
  }
  return f;
}

/// Step 0 opens one connection per strand; step 1 is kRoundTrips round trips of kBytes each way.
Plan counted_pingpong(bool master) {
  profile::ConnectionOptions c;
  c.remotehost = "x";
  profile::Flowop open;
  open.type = master ? "connect" : "accept";
  if (master) {
    open.spec = profile::ConnectOp{c};
  } else {
    open.spec = profile::AcceptOp{c};
  }
  profile::Transaction setup;
  setup.bound = profile::Iterations{1};
  setup.flowops = {open};
  profile::Transaction work;
  work.bound = profile::Iterations{kRoundTrips};
  work.flowops = {transfer_op(master), transfer_op(!master)};
  profile::Group group;
  group.nthreads = kStrands;
  group.transactions = {setup, work};
  profile::Profile p;
  p.groups = {group};
  core::Diagnostics diags;
  auto plan = compile(p, {}, diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  return plan ? std::move(*plan) : Plan{};
}

/// The connecting side's result, its engine run with `count_strands`.
results::RunResult run_counted(bool count_strands) {
  const Plan server_plan = counted_pingpong(false);
  const Plan client_plan = counted_pingpong(true);
  std::vector<std::promise<void>> served(2);
  std::vector<std::promise<void>> sent(2);
  EngineConfig s;
  s.workers = 2;
  s.token = 9;
  s.listen_address = asio::ip::make_address("127.0.0.1");
  s.on_txn_done = [&](std::size_t t) { served.at(t).set_value(); };
  asio::io_context control;  // before the engine: its listeners live on it
  Engine server(server_plan, std::move(s));
  EXPECT_EQ(server.open_listeners(control), "");
  EngineConfig c;
  c.workers = 2;
  c.token = 9;
  c.count_strands = count_strands;
  c.targets["x"] = HostTarget{asio::ip::make_address("127.0.0.1"), server.listener_ports().at(0),
                              server.negotiated_ports()};
  c.on_txn_done = [&](std::size_t t) { sent.at(t).set_value(); };
  Engine client(client_plan, std::move(c));
  server.start();
  client.start();
  bool done = true;
  for (std::size_t t = 0; t < 2 && done; ++t) {
    server.release(t);
    client.release(t);
    done = served[t].get_future().wait_for(60s) == std::future_status::ready &&
           sent[t].get_future().wait_for(60s) == std::future_status::ready;
  }
  EXPECT_TRUE(done) << "the ping-pong did not finish (a hang guard)";
  if (!done) {
    server.stop();
    client.stop();
  }
  results::RunResult result = client.finish();
  server.finish();
  return result;
}

TEST(StrandCounts, EachStrandCountsItsOwnOperationsBytesAndIterations) {
  const results::RunResult r = run_counted(true);
  ASSERT_EQ(r.groups.size(), 1U);
  const auto& counts = r.groups[0].strand_counts;
  ASSERT_EQ(counts.size(), kStrands);
  for (const results::StrandCounts& c : counts) {
    // The connect and every write and read; both directions' bytes; the connect step's one
    // iteration and the round trips.
    EXPECT_EQ(c.ops, 1 + 2 * kRoundTrips);
    EXPECT_EQ(c.bytes, 2 * kBytes * kRoundTrips);
    EXPECT_EQ(c.transactions, 1 + kRoundTrips);
  }
  // The strands' counts add up to the group's.
  EXPECT_EQ(r.totals().ops, kStrands * (1 + 2 * kRoundTrips));
  EXPECT_EQ(r.totals().bytes(), kStrands * 2 * kBytes * kRoundTrips);
}

TEST(StrandCounts, NotAskedNotKept) {
  const results::RunResult r = run_counted(false);
  ASSERT_EQ(r.groups.size(), 1U);
  EXPECT_TRUE(r.groups[0].strand_counts.empty());
  EXPECT_EQ(r.totals().ops, kStrands * (1 + 2 * kRoundTrips));
}

}  // namespace
}  // namespace volley::engine
