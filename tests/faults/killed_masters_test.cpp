// Masters killed (SIGKILL) at random moments of a real run: while connecting, loading, running
// or fetching results. After each the slave is back to its idle baseline and serves the next run.
#include <signal.h>

#include <random>
#include <thread>

#include "fault_suite.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;

TEST(Faults, MastersKilledAtRandomMomentsLeaveNothingBehind) {
  BaselinedSlave slave;
  TempDir dir;
  // 2 strands for 500 ms: set-up, the timed step and the results all take part of the run.
  const auto profile = dir.write("pp.xml", pingpong("2", "500ms"));
  const std::size_t masters = 10 * fault_scale();
  const auto seed = static_cast<std::uint64_t>(::testing::UnitTest::GetInstance()->random_seed());
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < masters; ++i) {
    const auto at = std::chrono::milliseconds(rng() % static_cast<std::uint64_t>(1200 * kSlowdown));
    {
      Process master(
          {VOLLEY_BINARY, "run", profile.string(), "-P", slave.serve().port_text(), "-q"});
      std::this_thread::sleep_for(at);
      master.signal(SIGKILL);
      (void)master.wait(10s);
    }
    slave.expect_back_to_baseline(
        fmt::format("master {} killed at {} ms (seed {})", i, at.count(), seed));
    if (i % 5 == 4) slave.expect_serves(fmt::format("master {} killed", i));
  }
  slave.expect_serves("masters killed");
  fault_figure("masters_killed", std::to_string(masters));
  fault_figure("killed_masters_worst_ms_to_baseline", std::to_string(slave.worst().count()));
  slave.expect_clean_exit();
}

}  // namespace
}  // namespace volley::test
