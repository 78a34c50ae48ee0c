#pragma once
// One function per subcommand; each returns the process exit status (core::ExitCode).
#include <CLI/CLI.hpp>

#include "volley/cli/options.hpp"

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

/// Raises the open-file limit to its hard limit (one socket per connection).
void raise_file_limit();
/// One worker per core unless the user said otherwise.
std::size_t default_workers(std::size_t requested);

}  // namespace volley::cli
