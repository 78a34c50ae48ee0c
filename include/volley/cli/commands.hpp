#pragma once
// One function per subcommand; each returns the process exit status (core::ExitCode).
#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>

#include "volley/cli/options.hpp"
#include "volley/report/run_report.hpp"

namespace volley::cli {

int run_command(const RunOptions& options, int argc, char** argv);
int serve_command(const ServeOptions& options);
int check_command(const CheckOptions& options);
int dump_command(const CheckOptions& options);

/// `volley sweep` and `volley compare` (declared by add_sweep_and_compare).
struct SweepCompareOptions {
  CLI::App* sweep = nullptr;
  CLI::App* compare = nullptr;
};
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
