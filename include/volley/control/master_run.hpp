#pragma once
// The master's side of a run: reaches every slave, has it load the profile, runs the local engine
// in lock-step with the slaves' (uperf's transaction barrier across hosts), samples CPU, NIC and
// the interval series, and gathers everyone's results into a report::RunReport. Whatever goes
// wrong (a slave unreachable, lost or silent, an error message, Ctrl-C) the run is stopped on
// every side and the report says what was measured and why it ended.
// Thread: the io_context given at construction; interrupt() must be called on it too.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "volley/control/auth.hpp"
#include "volley/engine/io_engine.hpp"
#include "volley/profile/model.hpp"
#include "volley/report/run_report.hpp"

namespace volley::control {

struct IntervalPart;

/// One slave to reach: the remotehost it serves (as written in the profile) and where its
/// control port is.
struct SlaveAddress {
  std::string host;
  std::string control_host;
  std::uint16_t control_port = 20000;
};

struct MasterSettings {
  const profile::Profile* profile = nullptr;
  std::string profile_text;
  std::string profile_file;
  std::map<std::string, std::string> variables;
  std::vector<SlaveAddress> slaves;
  std::uint64_t seed = 1;
  std::size_t workers = 1;        ///< master worker threads
  std::size_t slave_workers = 0;  ///< 0: each slave's own default
  /// Processes the master's side is spread over: 0 decides from the profile (nprocs), the
  /// descriptor limit and the cores (process::process_count); 1 keeps it in this process.
  std::uint32_t processes = 0;
  std::string child_executable = "/proc/self/exe";  ///< the volley binary children run
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  bool record_latency = true;  ///< off: no latency histograms on either side (cost measurement)
  bool sample_tcp = true;      ///< off: no TCP_INFO reads on either side (cost measurement)
  /// The master's strands each keep their own counts (uperf's -T: the results' strand_counts);
  /// the slaves keep none.
  bool count_strands = false;
  std::chrono::milliseconds connect_timeout{5000};
  /// Silence after which a slave counts as lost while no step runs (loading, reporting).
  std::chrono::milliseconds silence_timeout{10000};
  /// --start-at: release the first timed step at this wall-clock time (ns since the Unix epoch),
  /// so masters on several hosts run their timed parts together. Set-up steps run before it.
  std::optional<std::int64_t> start_at_unix_ns;
  /// Silence after which a slave counts as lost while steps run. A slave pings every 0.5 s, so
  /// a dead link is noticed this long after the slave's last message, plus at most one 250 ms
  /// housekeeping tick: 2.75 s by default.
  std::chrono::milliseconds link_timeout{2500};
  /// How often the master pings each slave (so the slave notices a dead master as quickly).
  std::chrono::milliseconds ping_interval{500};
  /// After the master's end of a step, how long each slave has to report that step done before
  /// it is named and the run fails. It covers the slave's drain (it reads until its data
  /// connections have been quiet for ~30 ms), which even at 10000 connections takes well under
  /// a second once the master has stopped writing; 10 s leaves room for a loaded host.
  std::chrono::milliseconds step_grace{10000};
  /// The pre-shared key (--key-file, VOLLEY_KEY_FILE, or --local's own): with it, every slave
  /// must prove it knows it; without it, a slave that asks for one is refused with the reason.
  std::optional<Secret> key;
  /// --tls-ca: TLS connects verify the slaves' certificates against the CA certificates in this
  /// PEM file, and that each names the host connected to, instead of pinning the fingerprints
  /// the slaves announce.
  std::string tls_ca_file;
  /// --io: the engine of the master's side (its child processes' too).
  engine::IoEngine io = engine::IoEngine::kEpoll;
  /// --max-duration: `profile` has its durations capped at this; the master's child processes,
  /// which parse the profile text again, are told to cap them too.
  std::optional<std::chrono::nanoseconds> max_duration;
  /// Each interval as it ends (the report holds the run so far).
  std::function<void(const report::RunReport&, const report::IntervalSample&)> on_interval;
  /// Each interval's full slot statistics (histograms included) as it ends, for the latency
  /// log; they are not kept.
  std::function<void(const report::RunReport&, const report::IntervalSample&,
                     const std::vector<results::SlotStats>&)>
      on_interval_histograms;
  /// Progress lines for the operator (stderr).
  std::function<void(const std::string&)> log;
  /// The control trace, for diagnosing the run's own sequencing: a line per event handled
  /// (ticks aside), per message sent to a slave and per step phase, with the seconds since the
  /// run began. Unset (the default): nothing is formatted. `volley run` sets it when the
  /// environment has VOLLEY_TRACE_CONTROL (lines go to stderr).
  std::function<void(const std::string&)> trace;
};

class MasterRun {
 public:
  MasterRun(boost::asio::io_context& context, MasterSettings settings);
  ~MasterRun();
  MasterRun(const MasterRun&) = delete;
  MasterRun& operator=(const MasterRun&) = delete;

  /// Runs the whole thing; the report of what happened is complete when it returns. Its status
  /// says whether the run failed or was interrupted; whether what it measured is what the profile
  /// asked for is judged above (report::judge).
  boost::asio::awaitable<void> run();
  /// Ctrl-C: stop every side, keep what was measured.
  void interrupt();
  [[nodiscard]] const report::RunReport& report() const { return report_; }

 private:
  struct State;
  MasterSettings settings_;
  report::RunReport report_;
  std::unique_ptr<State> state_;
};

}  // namespace volley::control
