#include "volley/cli/run_once.hpp"

#include <cstdlib>
#include <iostream>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include "volley/cli/interrupt_signals.hpp"
#include "volley/core/host_port.hpp"
#include "volley/core/sha256.hpp"
#include "volley/profile/connections.hpp"
#include "volley/report/result_checks.hpp"

namespace volley::cli {

namespace asio = boost::asio;

report::RunReport run_once(const RunOnceRequest& request) {
  control::MasterSettings settings;
  settings.profile = request.profile;
  settings.profile_text = request.profile_text;
  settings.profile_file = request.profile_path;
  settings.variables = request.variables;
  settings.slaves = request.slaves;
  settings.seed = request.seed;
  settings.workers = request.workers;
  settings.slave_workers = request.slave_workers;
  settings.processes = request.processes;
  settings.interval = request.interval;
  settings.connect_timeout = request.connect_timeout;
  settings.step_grace = request.step_grace;
  settings.link_timeout = request.link_timeout;
  settings.on_interval = request.on_interval;
  settings.on_interval_histograms = request.on_interval_histograms;
  settings.record_latency = request.record_latency;
  settings.sample_tcp = request.sample_tcp;
  settings.count_strands = request.count_strands;
  settings.key = request.key;
  settings.tls_ca_file = request.tls_ca_file;
  settings.io = request.io;
  settings.start_at_unix_ns = request.start_at_unix_ns;
  settings.max_duration = request.max_duration;
  if (std::getenv("VOLLEY_TRACE_CONTROL") != nullptr) {
    settings.trace = [](const std::string& line) { std::cerr << "volley trace: " << line << '\n'; };
  }

  // The caller's scope, if it has one, also covers what comes before and after the run (the
  // local slave's start, the report); a signal that came before is acted on at once.
  const InterruptSignals::Scope signals;
  asio::io_context context(1);
  control::MasterRun master(context, std::move(settings));
  std::optional<InterruptSignals::Watch> interrupts;
  interrupts.emplace(context, [&master] { master.interrupt(); });
  std::string internal_error;
  asio::co_spawn(context, master.run(), [&](const std::exception_ptr& e) {
    interrupts.reset();  // its cancelled read completes in this run() of the context
    if (!e) return;
    // The run reports errors as values; an exception is a bug, reported rather than a crash.
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      internal_error = ex.what();
    }
  });
  context.run();
  report::RunReport result = master.report();
  result.profile_sha256 = core::sha256_hex(request.profile_text);
  if (!internal_error.empty()) {
    result.status = report::RunStatus::kFailed;
    result.failure = "internal error: " + internal_error;
  }
  report::judge(result, request.allow_empty);
  return result;
}

namespace {

/// Calls `f(remotehost)` for every connect and accept, in profile order.
template <class F>
void for_each_remotehost(const profile::Profile& profile, F&& f) {
  for (const auto& c : profile::connection_sites(profile)) f(c.remotehost);
}

}  // namespace

std::string local_loopback(const profile::Profile& profile) {
  bool v6 = false;
  for_each_remotehost(profile,
                      [&](const std::string& host) { v6 = v6 || core::is_ipv6_literal(host); });
  return v6 ? "::1" : "127.0.0.1";
}

std::string zone_problem(const profile::Profile& profile) {
  std::string problem;
  for_each_remotehost(profile, [&](const std::string& host) {
    if (!problem.empty()) return;
    if (const std::string zone = core::unknown_zone(host); !zone.empty()) {
      problem = fmt::format(
          "remotehost '{}': this host has no interface '{}' (the zone after '%' "
          "names the master's interface toward the slave)",
          host, zone);
    }
  });
  return problem;
}

std::vector<control::SlaveAddress> slave_addresses(const profile::Profile& profile,
                                                   const std::string& local_address,
                                                   std::uint16_t local_port,
                                                   std::uint16_t control_port) {
  std::vector<control::SlaveAddress> slaves;
  const bool local = !local_address.empty();
  for_each_remotehost(profile, [&](const std::string& host) {
    for (const auto& s : slaves) {
      if (s.host == host) return;
    }
    slaves.push_back({host, local ? local_address : host, local ? local_port : control_port});
  });
  return slaves;
}

}  // namespace volley::cli
