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

namespace volley::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// Writes `text` to `path` ("-" is stdout); an error sentence, or "".
std::string write_text(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return {};
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fmt::format("cannot write '{}': {}", path, std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return fmt::format("cannot write '{}'", path);
  return {};
}

/// The command line a run document records (the sweep's options, not the process argv).
std::vector<std::string> sweep_command_line(const SweepOptions& o, const std::string& binding) {
  std::vector<std::string> line{"volley", "sweep", o.profile, "--vary", o.vary};
  for (const auto& s : o.set) line.insert(line.end(), {"--set", s});
  if (o.local) line.emplace_back("--local");
  if (o.allow_empty) line.emplace_back("--allow-empty");
  line.insert(line.end(), {"--repeat", std::to_string(o.repeat), "--seed", std::to_string(o.seed)});
  line.emplace_back("# this run: " + binding);
  return line;
}

/// "run 5/12: t=16 repeat 2/3, about 40 s left" (no estimate before the first run has ended).
std::string progress_line(std::size_t run, std::size_t runs, const std::string& binding,
                          std::size_t repeat, std::size_t repeats, Clock::duration elapsed) {
  std::string line =
      fmt::format("run {}/{}: {} repeat {}/{}", run + 1, runs, binding, repeat + 1, repeats);
  if (run > 0) {
    const double per_run =
        std::chrono::duration<double>(elapsed).count() / static_cast<double>(run);
    const double left = per_run * static_cast<double>(runs - run);
    line += left >= 120 ? fmt::format(", about {:.0f} min left", left / 60)
                        : fmt::format(", about {:.0f} s left", left);
  }
  return line;
}

/// Problems found before anything runs print and give kBadInput.
int bad_input(const std::string& problem) {
  std::cerr << "volley: " << problem << "\n";
  return core::to_int(core::ExitCode::kBadInput);
}

}  // namespace

int sweep_command(const SweepOptions& options) {
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
  const auto connect_timeout = core::parse_duration(options.connect_timeout);
  if (!connect_timeout.value || connect_timeout.value->count() <= 0) {
    return bad_input("--connect-timeout: " + (connect_timeout.error.empty()
                                                  ? std::string("must be more than 0")
                                                  : connect_timeout.error));
  }
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
  if (!options.local) {
    auto read = key_from_options(options.key_file);
    if (auto* problem = std::get_if<std::string>(&read)) return bad_input(*problem);
    key = std::get<std::optional<control::Secret>>(std::move(read));
  }
  raise_file_limit();
  // SIGINT and SIGTERM stop the sweep after the run they interrupt (a second one exits at once),
  // also between runs.
  const InterruptSignals::Scope interrupt_signals;
  LocalSlave local;
  if (options.local) {
    if (auto problem = local.start(options.slave_workers, "/proc/self/exe", 0,
                                   local_loopback(*profiles.front().parsed.profile)); !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      return core::to_int(core::ExitCode::kRunFailed);
    }
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
    const profile::Profile& profile = *loaded.parsed.profile;
    const std::string binding = vary.name + "=" + vary.values[v];
    points.push_back(analysis::SweepPoint{analysis::value_json(vary.values[v]), {}});
    for (std::size_t r = 0; r < options.repeat && !interrupted; ++r, ++run) {
      if (!options.quiet) {
        const std::string line =
            progress_line(run, runs, binding, r, options.repeat, Clock::now() - start);
        if (tty)
          std::cerr << '\r' << line << "\x1b[K" << std::flush;
        else
          std::cerr << line << '\n' << std::flush;
      }
      RunOnceRequest request;
      request.profile = &profile;
      request.profile_text = loaded.text;
      request.profile_path = options.profile;
      request.variables = loaded.parsed.used_variables;
      request.slaves = slave_addresses(profile, options.local ? local.address() : "", local.port(),
                                       options.port);
      request.seed = options.seed;
      request.workers = default_workers(options.workers);
      request.slave_workers = options.slave_workers;
      request.connect_timeout =
          std::chrono::duration_cast<std::chrono::milliseconds>(*connect_timeout.value);
      request.allow_empty = options.allow_empty;
      request.key = options.local ? std::optional<control::Secret>(local.key()) : key;
      report::RunReport result = run_once(request);
      result.command_line = sweep_command_line(options, binding);
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
