// A ping-pong's steady state allocates no coroutine frame: two engines on loopback, 16 strands
// each on one worker (the bench's shape), write 64 / read 64 against read 64 / write 64. Asio
// allocates frames and operations through std::aligned_alloc when its two-block per-thread cache
// misses, as it does when a strand frees three frames per read in a row (for example an Asio
// initiate frame and two coroutine frames of its own): about two allocations per round trip on
// each end would then miss the cache. This binary interposes aligned_alloc to count them.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "volley/engine/engine.hpp"

namespace {
std::atomic<std::uint64_t> aligned_allocs{0};
}  // namespace

// Every aligned_alloc of the process (Asio's aligned_new) comes here; memalign does the work.
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  aligned_allocs.fetch_add(1, std::memory_order_relaxed);
  return ::memalign(alignment, size);
}

namespace volley::engine {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr std::uint64_t kPingpongStrands = 16;

profile::Flowop transfer(bool write, std::uint64_t bytes) {
  profile::Flowop f;
  f.type = write ? "write" : "read";
  if (write) {
    profile::WriteOp w;
    w.size = profile::SizeSpec::fixed(bytes);
    f.spec = w;
  } else {
    profile::ReadOp r;
    r.size = profile::SizeSpec::fixed(bytes);
    f.spec = r;
  }
  return f;
}

/// Step 0 opens one connection per strand; step 1 is `iterations` round trips of 64 bytes.
Plan pingpong(bool master, std::uint64_t iterations) {
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
  work.bound = profile::Iterations{iterations};
  work.flowops = {transfer(master, 64), transfer(!master, 64)};
  profile::Group group;
  group.nthreads = kPingpongStrands;
  group.transactions = {setup, work};
  profile::Profile p;
  p.groups = {group};
  core::Diagnostics diags;
  auto plan = compile(p, {}, diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  return plan ? std::move(*plan) : Plan{};
}

struct Counts {
  std::uint64_t allocations = 0;  ///< aligned_alloc calls during step 1
  std::uint64_t round_trips = 0;  ///< read operations the master completed in step 1
  std::uint64_t whole_run = 0;    ///< aligned_alloc calls from the engines' start to their finish
};

Counts run_pingpong(std::uint64_t iterations) {
  const Plan server_plan = pingpong(false, iterations);
  const Plan client_plan = pingpong(true, iterations);
  std::vector<std::promise<void>> served(2);
  std::vector<std::promise<void>> sent(2);
  EngineConfig s;
  s.workers = 1;
  s.token = 7;
  s.listen_address = asio::ip::make_address("127.0.0.1");
  s.on_txn_done = [&](std::size_t t) { served.at(t).set_value(); };
  asio::io_context control;  // before the engine: its listeners live on it
  Engine server(server_plan, std::move(s));
  EXPECT_EQ(server.open_listeners(control), "");
  EngineConfig c;
  c.workers = 1;
  c.token = 7;
  c.targets["x"] = HostTarget{asio::ip::make_address("127.0.0.1"), server.listener_ports().at(0),
                              server.negotiated_ports()};
  c.on_txn_done = [&](std::size_t t) { sent.at(t).set_value(); };
  Engine client(client_plan, std::move(c));
  server.start();
  client.start();
  Counts counts;
  const std::uint64_t at_start = aligned_allocs.load();
  bool done = true;
  std::uint64_t before = 0;
  for (std::size_t t = 0; t < 2 && done; ++t) {
    before = aligned_allocs.load();
    server.release(t);
    client.release(t);
    // A hang guard, not a timing: either step takes well under a second on an idle machine.
    done = served[t].get_future().wait_for(60s) == std::future_status::ready &&
           sent[t].get_future().wait_for(60s) == std::future_status::ready;
  }
  counts.allocations = aligned_allocs.load() - before;
  EXPECT_TRUE(done) << "the ping-pong did not finish (a hang guard)";
  if (!done) {
    server.stop();
    client.stop();
  }
  const results::RunResult result = client.finish();
  server.finish();
  counts.whole_run = aligned_allocs.load() - at_start;
  counts.round_trips = result.groups.at(0).transactions.at(1).flowops.at(1).stats.counters.ops;
  return counts;
}

TEST(PingPongAllocation, TheSteadyStateAllocatesNoCoroutineFrame) {
  const Counts counts = run_pingpong(1000);
  ASSERT_EQ(counts.round_trips, kPingpongStrands * 1000);
  // The count is live: the strands' own coroutine frames, 16 at once, cannot all come from the
  // cache.
  ASSERT_GE(counts.whole_run, kPingpongStrands);
  // Each strand's first read finds Asio's cache empty; after that, nothing. The old strand made
  // about four per round trip, both ends together (64,000 here).
  EXPECT_LT(counts.allocations, counts.round_trips / 20)
      << counts.allocations << " aligned allocations in " << counts.round_trips << " round trips";
}

}  // namespace
}  // namespace volley::engine
