#include "volley/control/master_run.hpp"

#include "master_state.hpp"
#include "volley/sampling/system_snapshot.hpp"

namespace volley::control {

using namespace master_events;  // NOLINT(google-build-using-namespace): this file handles them

MasterRun::MasterRun(boost::asio::io_context& context, MasterSettings settings)
    : settings_(std::move(settings)),
      state_(std::make_unique<State>(context, settings_, report_)) {}

MasterRun::~MasterRun() = default;

void MasterRun::interrupt() { state_->push_interrupt(); }

// The script of a run: reach the slaves, load the profile everywhere, run the steps together,
// collect what every side measured. Each phase returns with State::failure set when the run
// cannot go on; from there the run goes straight to collecting (stop or abort everyone) and
// saying goodbye, so whatever happened, every side ends and the report says why.
boost::asio::awaitable<void> MasterRun::run() {
  State& st = *state_;
  st.begin_report();
  st.arm_tick();
  co_await st.reach_slaves();
  if (st.failure.empty()) co_await st.load_slaves();
  if (st.failure.empty()) co_await st.build_local_side();
  if (st.failure.empty()) {
    co_await st.start_steps();
    for (std::size_t step = 0; step < st.plan->txn_count && st.failure.empty(); ++step) {
      if (!co_await st.run_step(step)) break;
    }
    co_await st.finish_steps();
  }
  if (st.run_start != MasterClock::time_point{}) {
    report_.duration =
        std::chrono::duration_cast<std::chrono::nanoseconds>(MasterClock::now() - st.run_start);
  }
  co_await st.collect();
  co_await st.say_goodbye();
  if (st.interrupted) {
    report_.status = report::RunStatus::kInterrupted;
    report_.failure = "interrupted";
  } else if (!st.failure.empty()) {
    report_.status = report::RunStatus::kFailed;
    report_.failure = st.failure;
  }
}

void MasterRun::State::begin_report() {
  tracing = static_cast<bool>(settings.trace);
  trace_start = MasterClock::now();
  const profile::Profile& profile = *settings.profile;
  report.volley_version = VOLLEY_VERSION;
  report.profile_name = profile.name;
  report.profile_path = settings.profile_file;
  report.variables = settings.variables;
  report.seed = settings.seed;
  report.workers = settings.workers;
  report.start_unix_ns = unix_now_ns();
  report.master.role = "master";
  report.master.host = "master";
  report.master.io = settings.io == engine::IoEngine::kUring ? "uring" : "epoll";
  // Before the run, so reading /proc and /sys and running tc does not disturb what is measured.
  report.master.system = sampling::read_system_snapshot();
}

}  // namespace volley::control
