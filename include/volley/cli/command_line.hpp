#pragma once
// The whole command line as CLI11 declarations: every subcommand, option and the settings they
// fill. App::main parses with it; the man-page test walks it to find undocumented options.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "volley/cli/commands.hpp"
#include "volley/cli/options.hpp"

namespace volley::cli {

/// The settings every subcommand fills, and the subcommands (owned by the CLI::App).
struct CommandLine {
  RunOptions run;
  ServeOptions serve;
  CheckOptions check;
  CheckOptions dump;
  SweepCompareOptions sweep_compare;
  MergeOptions merge;
  SearchOptions search;
  CLI::App* run_cmd = nullptr;
  CLI::App* serve_cmd = nullptr;
  CLI::App* check_cmd = nullptr;
  CLI::App* dump_cmd = nullptr;
  CLI::App* merge_cmd = nullptr;
  CLI::App* search_cmd = nullptr;
};

/// Declares every subcommand and option of volley on `app`, bound to `cl`.
void define_command_line(CLI::App& app, CommandLine& cl);

/// What to print when CLI11 refused `args` (as typed, in order) on `app`: a word that no command
/// or option knows is named with the closest name that exists ("volley run: unknown option
/// '--jsno'; did you mean '--json'?", "volley: unknown command 'rn'; did you mean 'run'?");
/// any other refusal is CLI11's message after the command it concerns ("volley run: --interval:
/// ..."). Not for --help and --version, which CLI11 answers itself.
std::string describe_parse_error(const CLI::App& app, const std::vector<std::string>& args,
                                 const CLI::ParseError& error);

}  // namespace volley::cli
