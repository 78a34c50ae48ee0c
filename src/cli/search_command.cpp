// `volley search`: the highest load (a value of one profile variable) whose runs are error-free
// and meet a latency target, by bisection (analysis/capacity_search.hpp), against the same
// slaves; then the answer, the runs it took, and the curve of latency against load.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "volley/analysis/capacity_search.hpp"
#include "volley/analysis/html_report.hpp"
#include "volley/analysis/sweep_document.hpp"
#include "volley/cli/commands.hpp"
#include "volley/cli/interrupt_signals.hpp"
#include "volley/cli/local_slave.hpp"
#include "volley/cli/profile_loader.hpp"
#include "volley/cli/run_once.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/host_port.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/units_format.hpp"
#include "volley/sampling/system_snapshot.hpp"
#include "sweep_runs.hpp"

namespace volley::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// One load tried: its runs' documents, and whether every one met the target.
struct Tried {
  double load = 0;
  bool met = false;
  std::string why;  ///< the last run's reading against the target
  std::vector<nlohmann::json> runs;
};

/// The profile bound with `name=value`, or why it cannot run with it.
std::string load_with(const SweepOptions& options,
                      const std::map<std::string, std::string>& bindings, const std::string& name,
                      const std::string& value, LoadedProfile& out) {
  auto with_value = bindings;
  with_value[name] = value;
  out = load_profile(options.profile, profile::Variables{with_value, environment_map()},
                     options.strict);
  if (!out.parsed.profile) return fmt::format("the profile is not valid with {}={}", name, value);
  if (out.parsed.used_variables.count(name) == 0) {
    return fmt::format("the profile does not use ${}: varying it changes nothing", name);
  }
  if (auto problem = zone_problem(*out.parsed.profile); !problem.empty() && !options.local) {
    return problem;
  }
  return {};
}

nlohmann::json search_json(const analysis::CapacitySearch& search,
                           const analysis::LatencyTarget& target, double precision_pct,
                           const std::vector<Tried>& tried, bool interrupted) {
  nlohmann::json steps = nlohmann::json::array();
  for (const Tried& t : tried) {
    steps.push_back(
        {{"value", t.load}, {"met", t.met}, {"reading", t.why}, {"runs", t.runs.size()}});
  }
  const auto& range = search.range();
  nlohmann::json out{{"variable", range.name},
                     {"low", range.low},
                     {"high", range.high},
                     {"target", target.text},
                     {"precision_pct", precision_pct},
                     {"tried", std::move(steps)},
                     {"interrupted", interrupted}};
  out["capacity"] =
      search.capacity() ? nlohmann::json(*search.capacity()) : nlohmann::json(nullptr);
  out["lowest_missed"] =
      search.missed() ? nlohmann::json(*search.missed()) : nlohmann::json(nullptr);
  return out;
}

/// The answer in one sentence.
std::string answer_text(const analysis::CapacitySearch& search,
                        const analysis::LatencyTarget& target, bool interrupted) {
  const auto& range = search.range();
  const std::string prefix = interrupted ? "interrupted; so far: " : "";
  if (!search.capacity()) {
    return prefix + fmt::format("no load meets {} with no error: even {}={} missed it", target.text,
                                range.name, search.text(range.low));
  }
  if (!search.missed()) {
    return prefix + fmt::format(
                        "capacity: at least {}={} (the top of the range met {}); "
                        "search higher",
                        range.name, search.text(*search.capacity()), target.text);
  }
  return prefix + fmt::format("capacity: {}={} meets {} with no error; {} missed it", range.name,
                              search.text(*search.capacity()), target.text,
                              search.text(*search.missed()));
}

}  // namespace

int search_command(const SearchOptions& search_options) {
  const SweepOptions& options = search_options.sweep;
  const analysis::RangeParse range = analysis::parse_search_range(options.vary);
  if (!range.range) return bad_input(range.error);
  const analysis::TargetParse target_parse = analysis::parse_target(search_options.target);
  if (!target_parse.target) return bad_input(target_parse.error);
  const analysis::LatencyTarget& target = *target_parse.target;
  std::string error;
  auto bindings = parse_bindings(options.set, error);
  if (!bindings) return bad_input(error);
  const std::string& name = range.range->name;
  if (bindings->count(name) != 0) {
    return bad_input(fmt::format("--set {0}= and --vary {0}= both give '{0}' a value", name));
  }
  if (options.local && bindings->count("h") == 0) (*bindings)["h"] = "127.0.0.1";
  analysis::CapacitySearch search(*range.range, search_options.precision_pct / 100.0);
  // Both ends are loaded before anything runs: a bad bound fails the search at once.
  LoadedProfile first;
  for (const double bound : {range.range->low, range.range->high}) {
    if (auto problem = load_with(options, *bindings, name, search.text(bound), first);
        !problem.empty()) {
      return bad_input(problem);
    }
  }
  std::optional<control::Secret> key;
  if (auto problem = sweep_key(options, key); !problem.empty()) return bad_input(problem);
  raise_file_limit();
  const InterruptSignals::Scope interrupt_signals;
  LocalSlave local;
  if (auto problem = start_local_slave(options, *first.parsed.profile, local); !problem.empty()) {
    std::cerr << "volley: " << problem << "\n";
    return core::to_int(core::ExitCode::kRunFailed);
  }
  std::ostream& text = options.json == "-" ? std::cerr : std::cout;
  text << fmt::format(
              "volley {}: searching profile '{}' for the highest {} in {}..{} that meets "
              "{} ({} run(s) per load; {})\n",
              VOLLEY_VERSION, first.parsed.profile->name, name, search.text(range.range->low),
              search.text(range.range->high), target.text, options.repeat,
              options.local ? fmt::format("local slave on {}",
                                          core::format_host_port(local.address(), local.port()))
                            : std::string("remote slaves"))
       << std::flush;

  std::vector<Tried> tried;
  bool interrupted = false;
  const auto start = Clock::now();
  while (const auto load = search.next()) {
    const std::string value = search.text(*load);
    LoadedProfile loaded;
    if (auto problem = load_with(options, *bindings, name, value, loaded); !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      return core::to_int(core::ExitCode::kRunFailed);
    }
    Tried t{*load, true, "", {}};
    for (std::size_t r = 0; r < options.repeat && t.met; ++r) {
      if (!options.quiet) {
        show_progress(fmt::format("load {}: {}={}, run {}/{}, {:.0f} s so far", tried.size() + 1,
                                  name, value, r + 1, options.repeat,
                                  std::chrono::duration<double>(Clock::now() - start).count()));
      }
      report::RunReport result = run_once(sweep_request(options, loaded, local, key));
      result.command_line =
          sweep_command_line(options, {"--vary", options.vary}, fmt::format("{}={}", name, value));
      interrupted = result.status == report::RunStatus::kInterrupted;
      t.runs.push_back(report::to_json_document(result));
      t.met = !interrupted && analysis::run_meets(t.runs.back(), target, t.why);
      if (result.status == report::RunStatus::kFailed) t.why = result.failure;
      if (interrupted) break;
    }
    if (::isatty(STDERR_FILENO) != 0 && !options.quiet) std::cerr << '\r' << "\x1b[K" << std::flush;
    if (interrupted) break;
    text << fmt::format("  {}={:<12} {}: {}\n", name, value, t.met ? "met   " : "missed", t.why);
    search.record(*load, t.met);
    tried.push_back(std::move(t));
  }
  local.stop();
  text << answer_text(search, target, interrupted) << "\n";

  // The curve: the tried loads in increasing order, as a sweep's points.
  std::vector<analysis::SweepPoint> points;
  points.reserve(tried.size());
  std::vector<const Tried*> by_load;
  by_load.reserve(tried.size());
  for (const Tried& t : tried) by_load.push_back(&t);
  std::sort(by_load.begin(), by_load.end(),
            [](const Tried* a, const Tried* b) { return a->load < b->load; });
  for (const Tried* t : by_load) {
    points.push_back(analysis::SweepPoint{analysis::value_json(search.text(t->load)), t->runs});
  }
  bool outputs_ok = true;
  if (!options.json.empty()) {
    analysis::SweepInfo info;
    info.volley_version = VOLLEY_VERSION;
    info.vary_name = name;
    info.spacing = analysis::ValueSpacing::kGeometric;
    info.repeat = options.repeat;
    info.system_local = sampling::read_system_snapshot();
    nlohmann::json doc = analysis::make_sweep_document(info, points);
    doc["search"] = search_json(search, target, search_options.precision_pct, tried, interrupted);
    std::ostringstream out;
    report::write_pretty_json(doc, out);
    if (auto problem = write_text(options.json, out.str()); !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      outputs_ok = false;
    }
  }
  if (!options.html.empty()) {
    analysis::Series series;
    series.vary_name = name;
    series.log_x = true;
    series.points = points;
    const std::string page =
        analysis::render_html_report(fmt::format("volley search: {} over {} ({})",
                                                 first.parsed.profile->name, name, target.text),
                                     {analysis::LabeledSeries{"search", std::move(series)}});
    if (auto problem = write_text(options.html, page); !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      outputs_ok = false;
    }
  }
  if (interrupted) return core::to_int(core::ExitCode::kInterrupted);
  if (!search.capacity() || !outputs_ok) return core::to_int(core::ExitCode::kRunFailed);
  return core::to_int(core::ExitCode::kOk);
}

CLI::App* add_search(CLI::App& app, SearchOptions& options) {
  SweepOptions& s = options.sweep;
  auto* cmd = app.add_subcommand(
      "search",
      "Find the highest load (a profile variable) whose runs are error-free and meet a latency "
      "target, by bisection");
  cmd->add_option("profile", s.profile, "The profile (XML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--vary", s.vary,
                  "The load and its range: NAME=LOW..HIGH (a rate, a strand count; integer "
                  "bounds search integers)")
      ->required()
      ->type_name("NAME=LOW..HIGH");
  cmd->add_option("--target", options.target,
                  "What a run must meet: p50, p99 or p99.9 of the timed transaction's latency at "
                  "or under a duration, e.g. 'p99<=500us' (and no error)")
      ->required()
      ->type_name("PCT<=DURATION");
  cmd->add_option("--precision", options.precision_pct,
                  "Stop when the highest load that met and the lowest that missed are within "
                  "this many percent (0.1..50)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 50.0));
  cmd->add_option("-n,--repeat", s.repeat,
                  "Runs at each load; a load meets the target only when every run does")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  cmd->add_option("--json", s.json,
                  "Write the search document (the answer, every run, the curve) to FILE (- for "
                  "stdout)")
      ->type_name("FILE");
  add_runs_options(*cmd, s);
  cmd->footer(
      "Example:\n  volley search profiles/paced-pingpong.xml --local --set t=4 --vary r=100..50000 "
      "--target 'p99<=500us' -n 2 --json s.json --html s.html\n"
      "The load is assumed to make the target harder as it grows: an open-loop rate (rate=$r, "
      "whose latency counts from each transaction's intended start) or a strand count.\n"
      "Exit status: 0 a capacity was found, 1 no load in the range met the target (or a run "
      "could not start), 2 bad input (nothing run), 130 interrupted (what was measured is "
      "still written).");
  return cmd;
}

}  // namespace volley::cli
