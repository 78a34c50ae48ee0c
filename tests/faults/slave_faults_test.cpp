// The slave fails under a running master: killed (SIGKILL) or frozen (SIGSTOP) mid-run. The
// master exits 1 promptly with a result document that says the run failed and why; a frozen
// slave, continued, is back to its baseline and serves. And the master's own output failing:
// a full disk for --json or --csv is an exit 1 with a sentence naming the file and the cause.
#include <signal.h>

#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "fault_suite.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct MasterOutcome {
  ProcessResult result;
  json document;  ///< the --json result document (null when unreadable)
  std::chrono::milliseconds after_fault{0};
};

/// Runs a 2-strand, 20 s ping-pong against `serve`, does `fault` to the slave once the timed
/// step runs, and waits for the master.
MasterOutcome run_with_fault(Serve& serve, int sig) {
  TempDir dir;
  const auto profile = dir.write("pp.xml", pingpong("2", "20s"));
  const auto doc = dir.path() / "result.json";
  Process master({VOLLEY_BINARY, "run", profile.string(), "-P", serve.port_text(), "-q", "--json",
                  doc.string()});
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(1500 * kSlowdown)));
  serve.process().signal(sig);
  const auto fault_at = Clock::now();
  MasterOutcome out;
  out.result = master.wait(60s);
  out.after_fault = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - fault_at);
  std::ifstream in(doc);
  out.document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return out;
}

void expect_failed_run_document(const MasterOutcome& o, const std::string& fault) {
  EXPECT_EQ(o.result.exit_code, 1) << fault << "\n" << o.result.err;
  ASSERT_TRUE(o.document.is_object()) << fault << ": no result document\n" << o.result.err;
  EXPECT_EQ(o.document.value("status", ""), "failed") << fault;
  const auto failure = o.document.value("failure", json()).is_string()
                           ? o.document["failure"].get<std::string>()
                           : std::string();
  EXPECT_NE(failure.find("127.0.0.1"), std::string::npos)
      << fault << ": the failure names the slave: '" << failure << "'";
}

TEST(Faults, ASlaveKilledMidRunFailsTheMasterAtOnce) {
  Serve serve;
  const auto o = run_with_fault(serve, SIGKILL);
  expect_failed_run_document(o, "slave killed");
  EXPECT_LT(o.after_fault, 20s) << "the master waited out the profile";
  fault_figure("slave_killed_master_exit_ms", std::to_string(o.after_fault.count()));
}

TEST(Faults, AFrozenSlaveFailsTheMasterAndRecoversWhenContinued) {
  BaselinedSlave slave;
  const auto o = run_with_fault(slave.serve(), SIGSTOP);
  slave.serve().process().signal(SIGCONT);
  expect_failed_run_document(o, "slave frozen");
  EXPECT_LT(o.after_fault, 20s) << "the master waited out the profile";
  fault_figure("slave_frozen_master_exit_ms", std::to_string(o.after_fault.count()));
  slave.expect_back_to_baseline("after a freeze");
  slave.expect_serves("after a freeze");
  slave.expect_clean_exit();
}

TEST(Faults, AFullDiskForTheResultDocumentIsAnErrorThatSaysSo) {
  BaselinedSlave slave;
  for (const std::string flag : {"--json", "--csv"}) {
    const auto r = run_pingpong(slave.serve(), "300ms", {flag, "/dev/full"});
    EXPECT_EQ(r.exit_code, 1) << flag << "\n" << r.err;
    EXPECT_NE(r.err.find("cannot write '/dev/full'"), std::string::npos) << flag << "\n" << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << flag << "\n" << r.err;
    slave.expect_back_to_baseline("after a run with " + flag + " /dev/full");
  }
  slave.expect_serves("after full-disk runs");
  slave.expect_clean_exit();
}

}  // namespace
}  // namespace volley::test
