// MasterRun against a scripted slave on loopback: a slave that speaks the protocol correctly up
// to a point and then misbehaves (never ends a step, goes silent). The master must bound every
// wait, name the slave, fail the run and keep what it measured.
#include "volley/control/master_run.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "volley/control/channel.hpp"
#include "volley/control/message.hpp"
#include "volley/profile/parser.hpp"

namespace volley::control {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;
using namespace std::chrono_literals;

/// How the scripted slave misbehaves once the run has started.
enum class Fault {
  kNeverEndsAStep,  ///< answers everything and pings, but never sends step_done
  kGoesSilent,      ///< stops sending anything (pings included) after `start`
  /// ends every step at once (step_done on proceed, drained on end_step), its data port
  /// accepting connections into the backlog and never sending a byte: a slave whose share of a
  /// step is over while the master's strands still wait for it
  kEndsEveryStepAtOnce,
};

/// A slave that greets, loads (announcing a data port nobody uses), then shows `fault`.
class ScriptedSlave {
 public:
  ScriptedSlave(asio::io_context& context, Fault fault)
      : context_(context),
        acceptor_(context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        data_(context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        fault_(fault) {
    asio::co_spawn(context_, serve(), asio::detached);
  }
  [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  [[nodiscard]] bool saw_end_step() const { return saw_end_step_; }
  [[nodiscard]] bool saw_abort() const { return saw_abort_; }

 private:
  asio::awaitable<void> serve() {
    tcp::socket socket = co_await acceptor_.async_accept(asio::use_awaitable);
    // Shared with the pinger, which may still be inside a send when this coroutine ends.
    auto link = std::make_shared<Link>(std::move(socket));
    Channel& channel = link->channel;
    // Pings twice a second, as a real slave does, until the fault says otherwise.
    asio::co_spawn(
        context_,
        [this, link]() -> asio::awaitable<void> {
          asio::steady_timer timer(context_);
          while (link->open) {
            timer.expires_after(200ms);
            co_await timer.async_wait(asio::use_awaitable);
            if (!link->open || (link->started && fault_ == Fault::kGoesSilent)) continue;
            json ping = message("ping");
            co_await link->channel.send(std::move(ping));
          }
        },
        asio::detached);
    for (;;) {
      auto got = co_await channel.receive();
      if (std::holds_alternative<ChannelError>(got)) break;
      const json m = std::get<json>(std::move(got));
      const std::string type = text_field(m, "type");
      if (type == "hello") {
        json hello = make_hello();
        co_await channel.send(std::move(hello));
      } else if (type == "load") {
        // Built outside co_await: GCC 12 mis-compiles a braced json initializer there.
        json ports = json::object();
        ports["0"] = fault_ == Fault::kEndsEveryStepAtOnce ? data_.local_endpoint().port() : 9;
        json loaded = message("loaded");
        loaded["ports"] = std::move(ports);
        co_await channel.send(std::move(loaded));
      } else if (type == "start") {
        link->started = true;
      } else if (type == "proceed" && fault_ == Fault::kEndsEveryStepAtOnce) {
        json done = message("step_done");
        done["step"] = m.at("step");
        co_await channel.send(std::move(done));
      } else if (type == "end_step") {
        saw_end_step_ = true;
        if (fault_ == Fault::kEndsEveryStepAtOnce) {
          json drained = message("drained");
          drained["step"] = m.at("step");
          drained["short"] = json::array();
          drained["short_total"] = 0;
          co_await channel.send(std::move(drained));
        }
      } else if (type == "abort") {
        saw_abort_ = true;
      } else if (type == "bye") {
        break;
      }
    }
    link->open = false;
    channel.close();
  }

  /// The control connection and what the pinger reads of the session.
  struct Link {
    explicit Link(tcp::socket socket) : channel(std::move(socket)) {}
    Channel channel;
    bool started = false;
    bool open = true;
  };

  asio::io_context& context_;
  tcp::acceptor acceptor_;
  tcp::acceptor data_;  ///< listens, never accepts: connects complete in the backlog
  Fault fault_;
  bool saw_end_step_ = false;
  bool saw_abort_ = false;
};

/// One group that only thinks: the master's side needs no data connection to the slave.
constexpr const char* kThinkProfile = R"XML(<?xml version="1.0"?>
<profile name="think">
  <group nthreads="2">
    <transaction duration="400ms"><flowop type="think" options="duration=10ms"/></transaction>
  </group>
</profile>
)XML";

struct Outcome {
  report::RunReport report;
  std::chrono::steady_clock::duration took{};
  bool finished = false;
};

/// Connects, then reads in an iterations step: bytes only the slave could send.
constexpr const char* kReadProfile = R"XML(<?xml version="1.0"?>
<profile name="read">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=stuck-slave.example protocol=tcp"/></transaction>
    <transaction iterations="3"><flowop type="read" options="size=100"/></transaction>
  </group>
</profile>
)XML";

Outcome run_against(Fault fault, const std::function<void(MasterSettings&)>& tune,
                    const char* profile_text = kThinkProfile) {
  auto parsed = profile::parse_profile(profile_text, "think.xml", {});
  EXPECT_TRUE(parsed.profile.has_value()) << parsed.diagnostics.format(nullptr);
  asio::io_context context(1);
  ScriptedSlave slave(context, fault);
  MasterSettings settings;
  settings.profile = &*parsed.profile;
  settings.profile_text = profile_text;
  settings.profile_file = "think.xml";
  settings.slaves = {SlaveAddress{"stuck-slave.example", "127.0.0.1", slave.port()}};
  settings.interval = 100ms;
  tune(settings);
  MasterRun master(context, std::move(settings));
  Outcome outcome;
  const auto start = std::chrono::steady_clock::now();
  asio::co_spawn(context, master.run(), [&](std::exception_ptr e) {
    EXPECT_FALSE(e) << "MasterRun threw";
    outcome.finished = true;
    context.stop();
  });
  // A hang guard, far above the bounds the test sets (the old master waited forever here).
  context.run_for(30s);
  outcome.took = std::chrono::steady_clock::now() - start;
  outcome.report = master.report();
  return outcome;
}

TEST(MasterRun, SlaveThatNeverEndsAStepIsNamedAndTheRunFails) {
  const Outcome o =
      run_against(Fault::kNeverEndsAStep, [](MasterSettings& s) { s.step_grace = 1s; });
  ASSERT_TRUE(o.finished) << "the master waited for step_done without bound";
  EXPECT_LT(o.took, 15s);
  EXPECT_EQ(o.report.status, report::RunStatus::kFailed);
  EXPECT_NE(o.report.failure.find("stuck-slave.example"), std::string::npos) << o.report.failure;
  EXPECT_NE(o.report.failure.find("step 0"), std::string::npos) << o.report.failure;
  // What the master measured is kept; the slave shows as missing, not as zeros.
  EXPECT_GT(o.report.master.result.transactions(), 0U);
  ASSERT_EQ(o.report.slaves.size(), 1U);
  EXPECT_FALSE(o.report.slaves[0].missing.empty());
}

TEST(MasterRun, SlaveSilentDuringARunIsLostWithinTheLinkTimeout) {
  const auto link_timeout = 1500ms;
  const Outcome o = run_against(Fault::kGoesSilent, [&](MasterSettings& s) {
    s.link_timeout = link_timeout;
    s.step_grace = 20s;  // so that only the silence can end it quickly
  });
  ASSERT_TRUE(o.finished);
  // 400 ms of step, then the link timeout plus a housekeeping tick, with slack for a loaded host.
  EXPECT_LT(o.took, 8s);
  EXPECT_EQ(o.report.status, report::RunStatus::kFailed);
  EXPECT_NE(o.report.failure.find("stuck-slave.example"), std::string::npos) << o.report.failure;
  EXPECT_NE(o.report.failure.find("silent"), std::string::npos) << o.report.failure;
  ASSERT_EQ(o.report.slaves.size(), 1U);
  EXPECT_FALSE(o.report.slaves[0].missing.empty());
}

TEST(MasterRun, IterationsStepTheSlavesEndedWhileMasterStrandsWaitFailsNamingTheFlowop) {
  // Every slave ended step 1, and no byte the master's reads wait for will come: an iterations
  // step has no time bound, so it would wait forever. It is cut once the master's strands have
  // been still for a moment, and the run fails naming what waited.
  const Outcome o = run_against(
      Fault::kEndsEveryStepAtOnce, [](MasterSettings& s) { s.step_grace = 5s; }, kReadProfile);
  ASSERT_TRUE(o.finished) << "the master waited without bound in an iterations step";
  EXPECT_LT(o.took, 20s);
  EXPECT_EQ(o.report.status, report::RunStatus::kFailed);
  EXPECT_NE(o.report.failure.find("step 1: every slave had ended its share"), std::string::npos)
      << o.report.failure;
  EXPECT_NE(o.report.failure.find("flowop 'read' in 2 strands"), std::string::npos)
      << o.report.failure;
}

}  // namespace
}  // namespace volley::control
