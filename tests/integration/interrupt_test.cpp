// An interrupted run reports what it measured: Ctrl-C typed at a terminal (through a real
// pseudo-terminal, so the kernel signals the whole foreground process group, local slave
// included) and SIGINT or SIGTERM sent to the master alone, with a local slave and with a
// separate `volley serve`. Each must end within a second with exit 130, status "interrupted", the
// timed step's real rates, latency and CPU up to the interruption, and the slave's figures. A
// second Ctrl-C ends the run at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/net.hpp"
#include "support/pty_process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

enum class SlaveKind { kLocal, kRemote };
/// Who gets the signal: the terminal's foreground process group (the key press), or the master's
/// PID alone.
enum class Target { kTerminal, kMasterAlone };

struct InterruptCase {
  SlaveKind slave;
  Target target;
  int signal;  ///< sent to the master alone; the terminal's Ctrl-C is SIGINT
  std::string name;
};
void PrintTo(const InterruptCase& c, std::ostream* out) { *out << c.name; }

#ifdef VOLLEY_SANITIZED
constexpr auto kEndWithin = 3000ms;  // sanitizers slow joining and reporting several times
#else
constexpr auto kEndWithin = 1000ms;
#endif
/// The live line shows after the first interval; the timed step then runs a little longer so
/// its rates are not a blip.
constexpr auto kInterval = "200ms";
constexpr auto kRunBeforeInterrupt = 600ms;

/// The ping-pong's timed step (step 1) as the document has it on one side.
const json& timed_txn(const json& groups) { return groups.at(0).at("transactions").at(1); }

/// A transaction's figures that these tests check, for a failure's message (not its histograms).
std::string summary(const json& txn) {
  return fmt::format("{} elapsed_s {} transactions {} transactions_per_s {}",
                     txn.value("name", "?"), txn.value("elapsed_s", -1.0),
                     txn.value("transactions", 0ULL), txn.value("transactions_per_s", -1.0));
}

/// The run's figures for the timed step up to the interruption, on the master and the slave.
void expect_measured(const json& doc) {
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "interrupted") << doc["failure"];
  const json& mine = timed_txn(doc.at("groups"));
  EXPECT_GT(mine["transactions"].get<std::uint64_t>(), 0U) << summary(mine);
  // Its real duration: as long as the step ran before the interruption, not 0 and not more.
  EXPECT_GT(mine["elapsed_s"].get<double>(), 0.3) << summary(mine);
  EXPECT_LT(mine["elapsed_s"].get<double>(), 60.0) << summary(mine);
  EXPECT_GT(mine["transactions_per_s"].get<double>(), 0.0) << summary(mine);
  EXPECT_GT(mine["bits_per_s"].get<double>(), 0.0) << summary(mine);
  EXPECT_GT(mine.at("latency_ns").at("p50").get<double>(), 0.0) << summary(mine);
  EXPECT_GT(doc.at("totals")["transactions_per_s"].get<double>(), 0.0);
  EXPECT_FALSE(doc.at("cpu").at("local").is_null()) << "no CPU for the master";
  ASSERT_EQ(doc.at("slaves").size(), 1U);
  const json& slave = doc["slaves"][0];
  EXPECT_TRUE(slave["missing"].is_null()) << slave["missing"];
  ASSERT_TRUE(slave.at("totals").is_object()) << slave["missing"];
  EXPECT_GT(slave["totals"]["transactions_per_s"].get<double>(), 0.0) << slave["totals"].dump();
  EXPECT_GT(timed_txn(slave.at("groups"))["elapsed_s"].get<double>(), 0.3)
      << summary(timed_txn(slave.at("groups")));
  EXPECT_FALSE(doc.at("cpu").at("remote").at(0).is_null()) << "no CPU for the slave";
}

/// One worker on each side: the run then leaves the kernel room on two cores to carry the key
/// press through the pty's line discipline promptly.
const std::vector<std::string> kOneWorkerEach = {"--workers", "1", "--slave-workers", "1"};

/// From the interruption, as the report has it (where the interrupted step's window ends on the
/// master, wall clock), to `exited` (wall clock): the wind-down volley itself controls. The time
/// the key press takes to become a signal is the kernel's.
std::chrono::duration<double> wind_down(const json& doc,
                                        std::chrono::system_clock::time_point exited) {
  const json& mine = timed_txn(doc.at("groups"));
  const double interrupted_s =
      static_cast<double>(mine.at("start_unix_ns").get<std::int64_t>()) / 1e9 +
      mine.at("elapsed_s").get<double>();
  const double exited_s = std::chrono::duration<double>(exited.time_since_epoch()).count();
  return std::chrono::duration<double>(exited_s - interrupted_s);
}

/// The local slave's control port, from "running profile 'pp' (local slave on 127.0.0.1:PORT)".
/// (Plain string search: GCC 12's -O1 with the sanitizers warns inside <regex>, and warnings are
/// errors.)
std::optional<std::uint16_t> local_slave_port(const std::string& output) {
  constexpr std::string_view kBefore = "local slave on 127.0.0.1:";
  const auto at = output.find(kBefore);
  if (at == std::string::npos) return std::nullopt;
  const auto digits = at + kBefore.size();
  const auto end = output.find_first_not_of("0123456789", digits);
  if (end == digits) return std::nullopt;
  return static_cast<std::uint16_t>(std::stoul(output.substr(digits, end - digits)));
}

class Interrupt : public ::testing::TestWithParam<InterruptCase> {};

TEST_P(Interrupt, EndsWithinASecondAndReportsWhatWasMeasured) {
  const InterruptCase& c = GetParam();
  TempDir dir;
  const auto profile = dir.write("pp.xml", pingpong("2", "60s"));
  const auto out = dir.path() / "r.json";
  std::optional<Serve> serve;
  std::vector<std::string> args = {VOLLEY_BINARY, "run", profile.string(), "--json",
                                   out.string(),  "-i",  kInterval};
  args.insert(args.end(), kOneWorkerEach.begin(), kOneWorkerEach.end());
  if (c.slave == SlaveKind::kLocal) {
    args.emplace_back("--local");
  } else {
    serve.emplace(std::vector<std::string>{"-q"});
    ASSERT_TRUE(serve->listening());
    args.insert(args.end(), {"-P", serve->port_text()});
  }
  PtyProcess master(args);
  ASSERT_GT(master.pid(), 0);
  ASSERT_TRUE(master.wait_for_output("txn/s", 45s)) << master.output();
  std::this_thread::sleep_for(kRunBeforeInterrupt);
  const auto pressed = Clock::now();
  if (c.target == Target::kTerminal) {
    master.press_interrupt();
  } else {
    ASSERT_EQ(::kill(master.pid(), c.signal), 0);
  }
  const PtyExit exit = master.wait(10s);
  const auto took = Clock::now() - pressed;
  const auto exited = std::chrono::system_clock::now();
  ASSERT_FALSE(exit.timed_out) << master.output();
  EXPECT_EQ(exit.exit_code, 130) << "killed by signal " << exit.signal << "\n" << master.output();
  // A signal sent by PID arrives at once: the whole time counts. A key press first goes through
  // the pty's line discipline (a kernel work item, late on a busy host): from the interruption on.
  if (c.target == Target::kMasterAlone) {
    EXPECT_LT(took, kEndWithin) << std::chrono::duration<double>(took).count() << " s\n"
                                << master.output();
  }
  const json doc = read_json(out);
  expect_measured(doc);
  if (!doc.is_discarded()) {
    EXPECT_LT(wind_down(doc, exited), kEndWithin) << wind_down(doc, exited).count() << " s";
  }
  if (c.slave == SlaveKind::kLocal) {
    // The local slave went with its master.
    const auto port = local_slave_port(master.output());
    ASSERT_TRUE(port) << master.output();
    const auto deadline = Clock::now() + 3s;
    while (accepts_connections("127.0.0.1", *port) && Clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(accepts_connections("127.0.0.1", *port)) << "the local slave outlived its master";
  } else {
    // A separate slave is not the terminal's to stop: it still serves.
    EXPECT_TRUE(accepts_connections("127.0.0.1", serve->port()))
        << serve->process().stderr_so_far();
  }
}

INSTANTIATE_TEST_SUITE_P(CtrlCAndSignals, Interrupt,
                         ::testing::Values(InterruptCase{SlaveKind::kLocal, Target::kTerminal,
                                                         SIGINT, "CtrlCAtTheTerminalLocalSlave"},
                                           InterruptCase{SlaveKind::kRemote, Target::kTerminal,
                                                         SIGINT, "CtrlCAtTheTerminalRemoteSlave"},
                                           InterruptCase{SlaveKind::kLocal, Target::kMasterAlone,
                                                         SIGINT, "SigintToTheMasterLocalSlave"},
                                           InterruptCase{SlaveKind::kLocal, Target::kMasterAlone,
                                                         SIGTERM, "SigtermToTheMasterLocalSlave"},
                                           InterruptCase{SlaveKind::kRemote, Target::kMasterAlone,
                                                         SIGINT, "SigintToTheMasterRemoteSlave"},
                                           InterruptCase{SlaveKind::kRemote, Target::kMasterAlone,
                                                         SIGTERM, "SigtermToTheMasterRemoteSlave"}),
                         [](const ::testing::TestParamInfo<InterruptCase>& param_info) {
                           return param_info.param.name;
                         });

/// Both sides spread over two processes each (the master's children and the local slave's):
/// every process stops where it stands and hands over its share, merged on each side. The
/// children run in sessions of their own: the busy run does not keep the kernel from turning the
/// key press into SIGINT (process::ChildProcess).
TEST(InterruptInProcesses, CtrlCAtTheTerminalReportsEveryProcesssShare) {
  TempDir dir;
  const auto profile = dir.write("pp.xml", pingpong("2", "60s"));
  const auto out = dir.path() / "r.json";
  PtyProcess master({VOLLEY_BINARY, "run", profile.string(), "--local", "--processes", "2",
                     "--json", out.string(), "--workers", "1", "--slave-workers", "1"});
  ASSERT_GT(master.pid(), 0);
  // No live line in processes: the run is under way once the banner is out and the children
  // have had time to connect (seconds on a loaded 2-core host: this test is of an interruption
  // during the timed step, not during the set-up).
  ASSERT_TRUE(master.wait_for_output("running profile", 45s)) << master.output();
  std::this_thread::sleep_for(6s);
  master.press_interrupt();
  const PtyExit exit = master.wait(10s);
  const auto exited = std::chrono::system_clock::now();
  ASSERT_FALSE(exit.timed_out) << master.output();
  EXPECT_EQ(exit.exit_code, 130) << "killed by signal " << exit.signal << "\n" << master.output();
  const json doc = read_json(out);
  expect_measured(doc);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_LT(wind_down(doc, exited), kEndWithin) << wind_down(doc, exited).count() << " s";
  EXPECT_EQ(doc.at("totals").at("processes").size(), 2U) << doc["totals"]["processes"].dump();
}

/// A slave that cannot answer (frozen): the first Ctrl-C still ends the run within a second, with
/// the master's own figures and the slave named missing; a second Ctrl-C, pressed while the
/// master waits for that slave, ends it at once.
class FrozenSlave : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_ = dir_.write("pp.xml", pingpong("2", "60s"));
    ASSERT_TRUE(serve_.listening());
  }
  void TearDown() override { serve_.process().signal(SIGCONT); }
  /// Starts the master against the slave, waits for the live line, freezes the slave.
  std::unique_ptr<PtyProcess> start_and_freeze() {
    auto master = std::make_unique<PtyProcess>(std::vector<std::string>{
        VOLLEY_BINARY, "run", profile_.string(), "-P", serve_.port_text(), "--json", out().string(),
        "-i", kInterval, "--workers", "1", "--slave-workers", "1"});
    if (!master->wait_for_output("txn/s", 45s)) return nullptr;
    std::this_thread::sleep_for(kRunBeforeInterrupt);
    serve_.process().signal(SIGSTOP);
    return master;
  }
  [[nodiscard]] std::filesystem::path out() const { return dir_.path() / "r.json"; }

  TempDir dir_;
  std::filesystem::path profile_;
  Serve serve_{{"-q"}};
};

TEST_F(FrozenSlave, CtrlCEndsWithinASecondWithTheMastersFiguresAndTheSlaveMissing) {
  auto master = start_and_freeze();
  ASSERT_TRUE(master);
  master->press_interrupt();
  const PtyExit exit = master->wait(10s);
  const auto exited = std::chrono::system_clock::now();
  EXPECT_EQ(exit.exit_code, 130) << master->output();
  const json doc = read_json(out());
  ASSERT_FALSE(doc.is_discarded()) << master->output();
  EXPECT_LT(wind_down(doc, exited), kEndWithin) << wind_down(doc, exited).count() << " s";
  EXPECT_EQ(doc["status"], "interrupted");
  const json& mine = timed_txn(doc.at("groups"));
  EXPECT_GT(mine["elapsed_s"].get<double>(), 0.3) << summary(mine);
  EXPECT_GT(mine["transactions_per_s"].get<double>(), 0.0) << summary(mine);
  ASSERT_EQ(doc.at("slaves").size(), 1U);
  EXPECT_TRUE(doc["slaves"][0]["missing"].is_string()) << doc["slaves"][0]["missing"];
}

TEST_F(FrozenSlave, ASecondCtrlCEndsTheRunAtOnce) {
  auto master = start_and_freeze();
  ASSERT_TRUE(master);
  master->press_interrupt();
  std::this_thread::sleep_for(100ms);
  const auto pressed = Clock::now();
  master->press_interrupt();
  const PtyExit exit = master->wait(10s);
  const auto took = Clock::now() - pressed;
  EXPECT_EQ(exit.exit_code, 130) << "killed by signal " << exit.signal << "\n" << master->output();
  EXPECT_LT(took, 250ms) << std::chrono::duration<double>(took).count() << " s\n"
                         << master->output();
}

}  // namespace
}  // namespace volley::test
