#pragma once
// One function per subcommand; each returns the process exit status (core::ExitCode).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <ostream>

#include "volley/cli/option_types.hpp"
#include "volley/cli/options.hpp"
#include "volley/report/run_report.hpp"

namespace volley::cli {

int run_command(const RunOptions& options, int argc, char** argv);
int serve_command(const ServeOptions& options);
/// Declares `volley serve`'s options (its listen address, key and limits) on `serve_cmd`.
void add_serve_options(CLI::App& serve_cmd, ServeOptions& options);
/// Declares a master's --key-file on `cmd` (run, sweep).
void add_key_file_option(CLI::App& cmd, std::string& key_file);
int check_command(const CheckOptions& options);
int dump_command(const CheckOptions& options);
int merge_command(const MergeOptions& options);
/// Declares `volley merge` on `app`; returns the subcommand.
CLI::App* add_merge(CLI::App& app, MergeOptions& options);

/// `volley sweep`: the profile run once per value of one variable, `repeat` times each.
struct SweepOptions {
  std::string profile;
  std::string vary;                     ///< --vary NAME=LIST (analysis/value_list.hpp)
  std::vector<std::string> interleave;  ///< --interleave NAME=COMMAND, twice (instead of --vary)
  std::vector<std::string> set;         ///< --set name=value
  bool strict = false;
  std::uint16_t port = 20000;  ///< -P: the slaves' control port
  bool local = false;          ///< --local: one slave of our own for the whole sweep
  std::size_t repeat = 1;      ///< -n/--repeat
  std::size_t workers = 0;     ///< --workers: 0 = one per core
  std::size_t slave_workers = 0;
  std::uint64_t seed = 1;
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);
  std::string json;          ///< --json FILE ("-" = stdout)
  std::string html;          ///< --html FILE
  bool quiet = false;        ///< -q: no progress line
  bool allow_empty = false;  ///< --allow-empty, as for `volley run`
  std::string key_file;      ///< --key-file (or VOLLEY_KEY_FILE)
};

/// `volley search`: the sweep's options (its --vary is NAME=LOW..HIGH, -n the repeats at each
/// load) and the target to meet.
struct SearchOptions {
  SweepOptions sweep;
  std::string target;        ///< --target, e.g. "p99<=500us" (analysis/capacity_search.hpp)
  double precision_pct = 2;  ///< --precision: stop when the bracket is this narrow
};
int search_command(const SearchOptions& options);
/// Declares what every command made of runs takes (sweep, search): variables, slaves, key,
/// workers, seed, timeouts, --html, -q, --allow-empty.
void add_runs_options(CLI::App& cmd, SweepOptions& options);
/// Declares `volley search` on `app`; returns the subcommand.
CLI::App* add_search(CLI::App& app, SearchOptions& options);

/// `volley compare BASE NEW`.
struct CompareOptions {
  std::string base;
  std::string next;
  std::optional<double> fail_if_worse;  ///< --fail-if-worse PCT
  std::string html;                     ///< --html FILE
};

/// `volley sweep` and `volley compare` (declared by add_sweep_and_compare).
struct SweepCompareOptions {
  CLI::App* sweep = nullptr;
  CLI::App* compare = nullptr;
  SweepOptions sweep_options;
  CompareOptions compare_options;
};
int sweep_command(const SweepOptions& options);
/// `volley sweep --interleave`: the two sides of a setting, alternately (interleave_command.cpp).
int interleave_command(const SweepOptions& options);
int compare_command(const CompareOptions& options);
void add_sweep_and_compare(CLI::App& app, SweepCompareOptions& options);
int sweep_or_compare_command(CLI::App& app, const SweepCompareOptions& options);

/// Prints each interval's live line: rewritten in place on a terminal, one line each otherwise.
using LivePrinter = std::function<void(const report::RunReport&, const report::IntervalSample&)>;
LivePrinter live_line_printer(std::ostream& out, bool tty);

/// Raises the open-file limit to its hard limit (one socket per connection).
void raise_file_limit();
/// One worker per core unless the user said otherwise.
std::size_t default_workers(std::size_t requested);

}  // namespace volley::cli
