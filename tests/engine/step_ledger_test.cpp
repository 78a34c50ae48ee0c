// The step ledger (src/engine/step_ledger.hpp): the step barrier across workers, a slave's step
// that waits for connections still on their way, and what the workers hand over at a step's end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

#include "../../src/engine/step_ledger.hpp"

namespace volley::engine {
namespace {

struct Ledger {
  explicit Ledger(bool slave = false) {
    config.slave_side = slave;
    config.on_txn_done = [this](std::size_t txn) { done.push_back(txn); };
  }
  EngineConfig config;
  std::atomic<bool> stopped{false};
  std::vector<std::size_t> done;
  int all_delivered = 0;
  StepLedger ledger{config, std::vector<results::TxnWindow>(2), stopped,
                    [this] { ++all_delivered; }};
};

TEST(StepLedger, TheLastWorkerToFinishEndsTheStep) {
  Ledger l;
  l.ledger.released(0, StepLedger::Clock::now(), 2);
  l.ledger.worker_finished_txn(0);
  EXPECT_TRUE(l.done.empty());
  l.ledger.worker_finished_txn(0);
  EXPECT_EQ(l.done, std::vector<std::size_t>{0});
  EXPECT_GT(l.ledger.windows()[0].start_unix_ns, 0);
}

TEST(StepLedger, NoStepEndsOnceTheEngineStopped) {
  Ledger l;
  l.ledger.released(0, StepLedger::Clock::now(), 1);
  l.stopped = true;
  l.ledger.worker_finished_txn(0);
  EXPECT_TRUE(l.done.empty());
}

TEST(StepLedger, ASlaveStepEndsWhenTheConnectionsOnTheirWayHaveArrived) {
  Ledger l(true);
  l.ledger.set_peer_connected(2);
  l.ledger.ended(0);
  EXPECT_TRUE(l.ledger.txn_ended(0));
  EXPECT_FALSE(l.ledger.txn_ended(1));
  l.ledger.tcp_delivered();
  EXPECT_TRUE(l.ledger.accepts_outstanding());
  l.ledger.released(0, StepLedger::Clock::now(), 1);
  l.ledger.worker_finished_txn(0);
  EXPECT_TRUE(l.done.empty());  // one connection still on its way
  l.ledger.tcp_delivered();
  EXPECT_FALSE(l.ledger.accepts_outstanding());
  EXPECT_EQ(l.all_delivered, 1);
  EXPECT_EQ(l.done, std::vector<std::size_t>{0});
}

TEST(StepLedger, TheQuietCutGivesUpOnConnectionsStillMissing) {
  Ledger l(true);
  l.ledger.set_peer_connected(1);
  l.ledger.ended(0);
  l.ledger.released(0, StepLedger::Clock::now(), 1);
  l.ledger.worker_finished_txn(0);
  EXPECT_TRUE(l.done.empty());
  l.ledger.quiet_cut(0);
  l.ledger.end_awaited_step();
  l.ledger.end_awaited_step();  // once
  EXPECT_EQ(l.done, std::vector<std::size_t>{0});
}

TEST(StepLedger, ConnectsAreCountedPerHostAndPortAndThePeerApart) {
  Ledger l;
  l.config.targets["a"] = HostTarget{};
  l.config.peer = HostTarget{};
  l.ledger.add_step_connected({{{&l.config.targets["a"], 5000}, 3}, {{&*l.config.peer, 6000}, 2}});
  l.ledger.add_step_connected({{{&l.config.targets["a"], 5000}, 1}});
  const auto connected = l.ledger.connected();
  ASSERT_EQ(connected.size(), 1U);
  EXPECT_EQ(connected.at({"a", 5000}), 4U);
  EXPECT_EQ(l.ledger.connected_to_peer(), 2U);
}

TEST(StepLedger, WhatTheWorkersWroteIsTakenOnce) {
  Ledger l;
  l.ledger.add_step_written({ConnectionBytes{0, 1, 0, 0, 100, 0}});
  l.ledger.add_step_written({ConnectionBytes{0, 2, 0, 0, 50, 0}});
  EXPECT_EQ(l.ledger.take_step_written().size(), 2U);
  EXPECT_TRUE(l.ledger.take_step_written().empty());
}

}  // namespace
}  // namespace volley::engine
