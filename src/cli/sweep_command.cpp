// `volley sweep`: the profile run once per value of one variable and repeat, against the same
// slaves, then one table, the sweep document and the HTML report.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "volley/analysis/html_report.hpp"
#include "volley/analysis/sweep_document.hpp"
#include "volley/analysis/sweep_table.hpp"
#include "volley/analysis/value_list.hpp"
#include "volley/cli/commands.hpp"
#include "volley/cli/interrupt_signals.hpp"
#include "volley/cli/key_file.hpp"
#include "volley/cli/local_slave.hpp"
#include "volley/cli/profile_loader.hpp"
#include "volley/cli/run_once.hpp"
#include "volley/core/host_port.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/units.hpp"
#include "volley/report/json_report.hpp"
#include "volley/sampling/system_snapshot.hpp"
#include "sweep_runs.hpp"

namespace volley::cli {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

int sweep_command(const SweepOptions& options) {
  if (!options.interleave.empty()) return interleave_command(options);
  if (options.vary.empty())
    return bad_input("--vary NAME=LIST or --interleave (twice) is required");
  const analysis::VaryParse vary_parse = analysis::parse_vary(options.vary);
  if (!vary_parse.vary) return bad_input(vary_parse.error);
  const analysis::VaryList& vary = *vary_parse.vary;
  std::string error;
  auto bindings = parse_bindings(options.set, error);
  if (!bindings) return bad_input(error);
  if (bindings->count(vary.name) != 0) {
    return bad_input(fmt::format("--set {0}= and --vary {0}= both give '{0}' a value", vary.name));
  }
  if (options.local && bindings->count("h") == 0) (*bindings)["h"] = "127.0.0.1";
  for (const auto* path : {&options.json, &options.html}) {
    if (path->empty() || *path == "-") continue;
    std::ofstream probe(*path, std::ios::app);
    if (!probe) return bad_input(fmt::format("cannot write '{}': {}", *path, std::strerror(errno)));
  }
  // Every value's profile is loaded before anything runs: a bad value fails the sweep at once.
  std::vector<LoadedProfile> profiles;
  profiles.reserve(vary.values.size());
  const auto environment = environment_map();
  for (const std::string& value : vary.values) {
    auto with_value = *bindings;
    with_value[vary.name] = value;
    profiles.push_back(
        load_profile(options.profile, profile::Variables{with_value, environment}, options.strict));
    const LoadedProfile& loaded = profiles.back();
    if (!loaded.parsed.profile) {
      return bad_input(fmt::format("the profile is not valid with {}={}", vary.name, value));
    }
    if (auto problem = zone_problem(*loaded.parsed.profile); !problem.empty() && !options.local) {
      return bad_input(problem);
    }
    if (loaded.parsed.used_variables.count(vary.name) == 0) {
      return bad_input(
          fmt::format("the profile does not use ${}: varying it changes nothing", vary.name));
    }
  }

  std::optional<control::Secret> key;
  if (auto problem = sweep_key(options, key); !problem.empty()) return bad_input(problem);
  raise_file_limit();
  // SIGINT and SIGTERM stop the sweep after the run they interrupt (a second one exits at once),
  // also between runs.
  const InterruptSignals::Scope interrupt_signals;
  LocalSlave local;
  if (auto problem = start_local_slave(options, *profiles.front().parsed.profile, local);
      !problem.empty()) {
    std::cerr << "volley: " << problem << "\n";
    return core::to_int(core::ExitCode::kRunFailed);
  }
  std::ostream& text = options.json == "-" ? std::cerr : std::cout;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const std::size_t runs = vary.values.size() * options.repeat;
  text << fmt::format(
              "volley {}: sweeping profile '{}' over {}={} ({} run(s) each, {} in all; {})\n",
              VOLLEY_VERSION, profiles.front().parsed.profile->name, vary.name,
              fmt::join(vary.values, ","), options.repeat, runs,
              options.local ? fmt::format("local slave on {}",
                                          core::format_host_port(local.address(), local.port()))
                            : std::string("remote slaves"))
       << std::flush;

  analysis::SweepInfo info;
  info.volley_version = VOLLEY_VERSION;
  info.vary_name = vary.name;
  info.spacing = vary.spacing;
  info.repeat = options.repeat;
  info.system_local = sampling::read_system_snapshot();

  std::vector<analysis::SweepPoint> points;
  bool failed = false;
  bool interrupted = false;
  const auto start = Clock::now();
  std::size_t run = 0;
  for (std::size_t v = 0; v < vary.values.size() && !interrupted; ++v) {
    const LoadedProfile& loaded = profiles[v];
    const std::string binding = vary.name + "=" + vary.values[v];
    points.push_back(analysis::SweepPoint{analysis::value_json(vary.values[v]), {}});
    for (std::size_t r = 0; r < options.repeat && !interrupted; ++r, ++run) {
      if (!options.quiet) {
        show_progress(
            progress_line(run, runs, binding, "repeat", r, options.repeat, Clock::now() - start));
      }
      report::RunReport result = run_once(sweep_request(options, loaded, local, key));
      result.command_line = sweep_command_line(options, {"--vary", options.vary}, binding);
      if (result.status == report::RunStatus::kFailed) {
        failed = true;
        if (tty && !options.quiet) std::cerr << '\n';
        std::cerr << fmt::format("volley: run {}/{} ({} repeat {}) failed: {}\n", run + 1, runs,
                                 binding, r + 1, result.failure);
      }
      if (result.status == report::RunStatus::kInterrupted) {
        interrupted = true;
        if (tty && !options.quiet) std::cerr << '\n';
        std::cerr << "volley: interrupted; the sweep stops here and reports what it measured\n";
      }
      points.back().runs.push_back(report::to_json_document(result));
    }
  }
  if (tty && !options.quiet && !interrupted) std::cerr << '\r' << "\x1b[K" << std::flush;
  local.stop();

  text << analysis::format_sweep_table(vary.name, points);
  bool outputs_ok = true;
  auto emit = [&](const std::string& path, const std::function<std::string()>& make) {
    if (path.empty()) return;
    if (auto problem = write_text(path, make()); !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      outputs_ok = false;
    }
  };
  emit(options.json, [&] {
    std::ostringstream out;
    report::write_pretty_json(analysis::make_sweep_document(info, points), out);
    return out.str();
  });
  emit(options.html, [&] {
    analysis::Series series;
    series.vary_name = vary.name;
    std::vector<nlohmann::json> values;
    values.reserve(points.size());
    for (const auto& p : points) values.push_back(p.value);
    series.log_x = analysis::use_log_axis(values, vary.spacing);
    series.points = points;
    return analysis::render_html_report(
        fmt::format("volley sweep: {} over {}", profiles.front().parsed.profile->name, vary.name),
        {analysis::LabeledSeries{"sweep", std::move(series)}});
  });
  if (interrupted) return core::to_int(core::ExitCode::kInterrupted);
  if (failed || !outputs_ok) return core::to_int(core::ExitCode::kRunFailed);
  return core::to_int(core::ExitCode::kOk);
}

}  // namespace volley::cli
