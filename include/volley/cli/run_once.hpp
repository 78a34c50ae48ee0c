#pragma once
// One master run of a parsed profile, from reaching the slaves to the finished report, with
// Ctrl-C handled (the run stops on every side and reports what it measured). `volley run` calls
// it once; `volley sweep` once per point and repeat, against the same slaves.
#include <chrono>
#include <optional>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "volley/control/master_run.hpp"
#include "volley/profile/model.hpp"
#include "volley/report/run_report.hpp"

namespace volley::cli {

struct RunOnceRequest {
  const profile::Profile* profile = nullptr;
  std::string profile_text;
  std::string profile_path;
  std::map<std::string, std::string> variables;  ///< the values the profile used
  std::vector<control::SlaveAddress> slaves;
  std::uint64_t seed = 1;
  std::size_t workers = 1;
  std::size_t slave_workers = 0;
  std::uint32_t processes = 0;  ///< see control::MasterSettings
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds step_grace{10000};   ///< see control::MasterSettings
  std::chrono::milliseconds link_timeout{2500};  ///< see control::MasterSettings
  bool allow_empty = false;
  bool record_latency = true;
  bool sample_tcp = true;
  bool count_strands = false;                            ///< see control::MasterSettings
  std::optional<control::Secret> key;                    ///< see control::MasterSettings
  std::string tls_ca_file;                               ///< see control::MasterSettings
  engine::IoEngine io = engine::IoEngine::kEpoll;        ///< see control::MasterSettings
  std::optional<std::int64_t> start_at_unix_ns;          ///< --start-at, ns since the Unix epoch
  std::optional<std::chrono::nanoseconds> max_duration;  ///< see control::MasterSettings
  std::function<void(const report::RunReport&, const report::IntervalSample&)> on_interval;
  /// Each interval's full histograms as it ends (the latency log streams them).
  std::function<void(const report::RunReport&, const report::IntervalSample&,
                     const std::vector<results::SlotStats>&)>
      on_interval_histograms;
};

/// Runs it; never throws. `report().status` says how it ended.
report::RunReport run_once(const RunOnceRequest& request);

/// One slave per distinct remotehost, in first-use order. With a local slave (`local_address`
/// not empty) every host goes to `local_address`:`local_port`; otherwise to the host itself on
/// `control_port`.
std::vector<control::SlaveAddress> slave_addresses(const profile::Profile& profile,
                                                   const std::string& local_address,
                                                   std::uint16_t local_port,
                                                   std::uint16_t control_port);

/// The loopback address `--local`'s slave listens on: ::1 when some remotehost is an IPv6
/// address, so that the data connections take the family the profile names; else 127.0.0.1.
std::string local_loopback(const profile::Profile& profile);

/// "" when every remotehost's zone (`fe80::1%eth0`) names an interface of this host, else a
/// sentence naming the first that does not. Checked by the master only: a zone is the master's.
std::string zone_problem(const profile::Profile& profile);

}  // namespace volley::cli
