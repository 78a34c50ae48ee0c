// `volley sweep PROFILE --interleave A='CMD' --interleave B='CMD' -n N`: the profile run N times
// on each side of a setting, alternately, with the user's command switching the setting before
// each run that changes it; then the paired comparison of the two sides over the rounds, and A's
// setting restored (also after Ctrl-C, or a command or run that failed).
//
// Rounds alternate their order (A B, then B A: ABBA), so a drift of the machine during the
// comparison (a neighbour's load, a warming cache, a throttling CPU) favours neither side, and
// the paired t-test over the rounds takes out what the two runs of a round share.
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "sweep_runs.hpp"
#include "shell_command.hpp"
#include "volley/analysis/compare.hpp"
#include "volley/analysis/html_report.hpp"
#include "volley/analysis/sweep_document.hpp"
#include "volley/analysis/sweep_table.hpp"
#include "volley/cli/commands.hpp"
#include "volley/cli/interrupt_signals.hpp"
#include "volley/cli/key_file.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/host_port.hpp"
#include "volley/report/json_report.hpp"
#include "volley/sampling/system_snapshot.hpp"

namespace volley::cli {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

/// One side of the comparison: its name and the command that applies its setting.
struct Side {
  std::string name;
  std::string command;
};
using Sides = std::array<Side, 2>;

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-') return false;
  }
  return true;
}

/// The sides of `--interleave NAME=COMMAND`, given twice, or an error sentence.
std::variant<Sides, std::string> parse_sides(const std::vector<std::string>& items) {
  if (items.size() != 2) {
    return fmt::format(
        "--interleave is given twice, once per side (A='command' B='command'), "
        "not {} time(s)",
        items.size());
  }
  Sides sides;
  for (std::size_t i = 0; i < 2; ++i) {
    const auto eq = items[i].find('=');
    if (eq == std::string::npos || !valid_name(items[i].substr(0, eq))) {
      return fmt::format(
          "--interleave '{}': expected NAME=COMMAND (NAME of letters, digits, _ "
          "or -)",
          items[i]);
    }
    sides[i] = {items[i].substr(0, eq), items[i].substr(eq + 1)};
    if (sides[i].command.find_first_not_of(" \t") == std::string::npos) {
      return fmt::format("--interleave {}: the command is empty (it must apply {}'s setting)",
                         sides[i].name, sides[i].name);
    }
  }
  if (sides[0].name == sides[1].name) {
    return fmt::format("--interleave names the side '{}' twice", sides[0].name);
  }
  return sides;
}

/// The side that runs at position `i` (0 or 1) of round `round`: A B, then B A (ABBA).
std::size_t side_at(std::size_t round, std::size_t i) { return round % 2 == 0 ? i : 1 - i; }

/// Applies the sides' settings, running a side's command only when the setting changes, and
/// takes each side's system snapshot after its first application.
class Settings {
 public:
  explicit Settings(const Sides& sides) : sides_(sides) {}

  /// "" once `side`'s setting is applied, else why not.
  std::string apply(std::size_t side) {
    if (applied_ == side) return {};
    applied_.reset();  // unknown until the command succeeds
    if (auto problem = run_shell(sides_[side].command); !problem.empty()) {
      return fmt::format("the command of {} ('{}') failed: {}", sides_[side].name,
                         sides_[side].command, problem);
    }
    applied_ = side;
    if (snapshots_[side].is_null()) snapshots_[side] = sampling::read_system_snapshot();
    return {};
  }
  /// Whether the first side's setting is known to be in place.
  [[nodiscard]] bool at_first() const { return applied_ == 0; }
  [[nodiscard]] const json& snapshot(std::size_t side) const { return snapshots_[side]; }

 private:
  const Sides& sides_;
  std::optional<std::size_t> applied_;
  std::array<json, 2> snapshots_;
};

}  // namespace

int interleave_command(const SweepOptions& options) {
  auto parsed_sides = parse_sides(options.interleave);
  if (auto* problem = std::get_if<std::string>(&parsed_sides)) return bad_input(*problem);
  const Sides sides = std::get<Sides>(std::move(parsed_sides));
  std::string error;
  auto bindings = parse_bindings(options.set, error);
  if (!bindings) return bad_input(error);
  if (options.local && bindings->count("h") == 0) (*bindings)["h"] = "127.0.0.1";
  for (const auto* path : {&options.json, &options.html}) {
    if (path->empty() || *path == "-") continue;
    std::ofstream probe(*path, std::ios::app);
    if (!probe) return bad_input(fmt::format("cannot write '{}': {}", *path, std::strerror(errno)));
  }
  const LoadedProfile loaded = load_profile(
      options.profile, profile::Variables{*bindings, environment_map()}, options.strict);
  if (!loaded.parsed.profile) return bad_input("the profile is not valid");
  const profile::Profile& profile = *loaded.parsed.profile;
  if (auto problem = zone_problem(profile); !problem.empty() && !options.local) {
    return bad_input(problem);
  }
  std::optional<control::Secret> key;
  if (auto problem = sweep_key(options, key); !problem.empty()) return bad_input(problem);
  raise_file_limit();
  // SIGINT and SIGTERM stop the comparison after the run or command they interrupt; the first
  // side's setting is restored then. A second one exits at once, restoring nothing.
  const InterruptSignals::Scope interrupt_signals;
  LocalSlave local;
  if (auto problem = start_local_slave(options, profile, local); !problem.empty()) {
    std::cerr << "volley: " << problem << "\n";
    return core::to_int(core::ExitCode::kRunFailed);
  }
  std::ostream& text = options.json == "-" ? std::cerr : std::cout;
  const std::size_t runs = 2 * options.repeat;
  text << fmt::format(
              "volley {}: interleaving profile '{}' between {} and {} ({} round(s), {} runs; "
              "{})\n",
              VOLLEY_VERSION, profile.name, sides[0].name, sides[1].name, options.repeat, runs,
              options.local ? fmt::format("local slave on {}",
                                          core::format_host_port(local.address(), local.port()))
                            : std::string("remote slaves"))
       << std::flush;

  Settings settings(sides);
  std::array<analysis::SweepPoint, 2> points{analysis::SweepPoint{json(sides[0].name), {}},
                                             analysis::SweepPoint{json(sides[1].name), {}}};
  json order = json::array();
  bool failed = false;
  bool interrupted = false;
  const auto start = Clock::now();
  std::size_t run = 0;
  for (std::size_t round = 0; round < options.repeat && !interrupted && !failed; ++round) {
    for (std::size_t i = 0; i < 2 && !interrupted && !failed; ++i, ++run) {
      const std::size_t side = side_at(round, i);
      if (auto problem = settings.apply(side); !problem.empty()) {
        interrupted = InterruptSignals::received();
        failed = !interrupted;
        std::cerr << "\nvolley: " << problem << "\n";
        break;
      }
      if (InterruptSignals::received()) {
        interrupted = true;
        break;
      }
      if (!options.quiet) {
        show_progress(progress_line(run, runs, sides[side].name, "round", round, options.repeat,
                                    Clock::now() - start));
      }
      report::RunReport result = run_once(sweep_request(options, loaded, local, key));
      result.command_line =
          sweep_command_line(options,
                             {"--interleave", sides[0].name + "=" + sides[0].command,
                              "--interleave", sides[1].name + "=" + sides[1].command},
                             fmt::format("{} round {}", sides[side].name, round + 1));
      if (result.status == report::RunStatus::kFailed) {
        failed = true;
        std::cerr << fmt::format("\nvolley: run {}/{} ({} round {}) failed: {}\n", run + 1, runs,
                                 sides[side].name, round + 1, result.failure);
      }
      interrupted = result.status == report::RunStatus::kInterrupted;
      points[side].runs.push_back(report::to_json_document(result));
      order.push_back(sides[side].name);
    }
  }
  if (interrupted) std::cerr << "\nvolley: interrupted; the comparison stops here\n";
  // The first side's setting, restored whatever happened (unless it is known to be in place).
  std::string restore_problem;
  if (!settings.at_first()) restore_problem = settings.apply(0);
  if (!restore_problem.empty()) std::cerr << "volley: restoring: " << restore_problem << "\n";
  if (!options.quiet && !interrupted && !failed) std::cerr << "\n";
  local.stop();

  const std::vector<analysis::SweepPoint> both{points[0], points[1]};
  const analysis::Comparison comparison =
      analysis::compare_rounds(points[0], points[1], settings.snapshot(0), settings.snapshot(1));
  text << analysis::format_sweep_table("setting", both)
       << fmt::format("{} against {}:\n", sides[1].name, sides[0].name)
       << analysis::format_comparison(comparison)
       << (restore_problem.empty()
               ? fmt::format("{}'s setting restored ('{}')\n", sides[0].name, sides[0].command)
               : fmt::format("{}'s setting NOT restored: {}\n", sides[0].name, restore_problem));

  bool outputs_ok = true;
  auto emit = [&](const std::string& path, const std::string& content) {
    if (path.empty()) return;
    if (auto problem = write_text(path, content); !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      outputs_ok = false;
    }
  };
  if (!options.json.empty()) {
    analysis::SweepInfo info;
    info.volley_version = VOLLEY_VERSION;
    info.vary_name = "setting";
    info.repeat = options.repeat;
    info.system_local = settings.snapshot(0);
    json doc = analysis::make_sweep_document(info, both);
    doc["interleave"] = {
        {"sides",
         {{{"name", sides[0].name}, {"command", sides[0].command}},
          {{"name", sides[1].name}, {"command", sides[1].command}}}},
        {"order", order},
        {"snapshots",
         {{sides[0].name, settings.snapshot(0)}, {sides[1].name, settings.snapshot(1)}}},
        {"restored", restore_problem.empty()},
        {"restore_problem", restore_problem.empty() ? json(nullptr) : json(restore_problem)},
        {"comparison", analysis::to_json(comparison)}};
    std::ostringstream out;
    report::write_pretty_json(doc, out);
    emit(options.json, out.str());
  }
  if (!options.html.empty()) {
    analysis::Series series;
    series.vary_name = "setting";
    series.points = both;
    emit(options.html, analysis::render_html_report(
                           fmt::format("volley: {} interleaved, {} against {}", profile.name,
                                       sides[1].name, sides[0].name),
                           {analysis::LabeledSeries{"rounds", std::move(series)}}, &comparison));
  }
  if (interrupted) return core::to_int(core::ExitCode::kInterrupted);
  if (failed || !restore_problem.empty() || !outputs_ok) {
    return core::to_int(core::ExitCode::kRunFailed);
  }
  return core::to_int(core::ExitCode::kOk);
}

}  // namespace volley::cli
