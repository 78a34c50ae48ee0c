// `volley sweep` and `volley compare`: their command-line declarations and dispatch. The commands
// themselves are in sweep_command.cpp and compare_command.cpp.
#include "volley/cli/commands.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/limits.hpp"

namespace volley::cli {

void add_sweep_and_compare(CLI::App& app, SweepCompareOptions& options) {
  SweepOptions& s = options.sweep_options;
  auto* sweep = app.add_subcommand(
      "sweep",
      "Run a profile once per value of a variable (-n times each), or in alternating rounds under "
      "two settings (--interleave), and tabulate the results");
  sweep->add_option("profile", s.profile, "The profile (XML)")
      ->required()
      ->check(CLI::ExistingFile);
  auto* vary =
      sweep
          ->add_option("--vary", s.vary,
                       "The variable and its values: NAME=1,2,4 (a list), NAME=1..4096x2 (multiply "
                       "by 2 up to 4096) or NAME=1..10+3 (add 3 up to 10)")
          ->type_name("NAME=LIST");
  sweep
      ->add_option("--interleave", s.interleave,
                   "Instead of --vary: compare two settings, each NAME=COMMAND (given twice, e.g. "
                   "A='sysctl -w x=0' B='sysctl -w x=1'). Runs alternate A B, B A, ... (-n "
                   "rounds); a side's command runs through /bin/sh on this host before each run "
                   "that changes the setting; the verdicts use the paired t-test over the rounds; "
                   "the first side's setting is restored at the end, also after Ctrl-C")
      ->type_name("NAME=COMMAND")
      ->excludes(vary);
  sweep
      ->add_option(
          "-n,--repeat", s.repeat,
          "Runs per value, or rounds with --interleave (3 or more to judge; 5 or more advised)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  sweep->add_option("--json", s.json, "Write the sweep document (every run) to FILE (- for stdout)")
      ->type_name("FILE");
  add_runs_options(*sweep, s);
  sweep->footer(
      "Examples:\n  volley sweep profiles/pingpong.xml --local --vary t=1..64x4 -n 3 --json s.json "
      "--html s.html\n"
      "  volley sweep profiles/pingpong.xml --local -n 5 --interleave "
      "A='echo 0 > /sys/class/net/lo/queues/rx-0/rps_cpus' --interleave "
      "B='echo 3 > /sys/class/net/lo/queues/rx-0/rps_cpus'\nExit status: 0 every run ok, 1 some "
      "run failed, 2 bad input (nothing run), "
      "130 interrupted (what was measured is still written).");
  options.sweep = sweep;

  CompareOptions& c = options.compare_options;
  auto* compare = app.add_subcommand(
      "compare", "Compare two results (sweeps or single runs): changes, significance, verdicts");
  compare->add_option("base", c.base, "The reference result (JSON from sweep or run)")->required();
  compare->add_option("new", c.next, "The result to judge against it")->required();
  compare
      ->add_option("--fail-if-worse", c.fail_if_worse,
                   "Exit 1 when a metric is significantly worse by more than PCT percent")
      ->type_name("PCT")
      ->check(CLI::NonNegativeNumber);
  compare
      ->add_option("--html", c.html,
                   "Write the verdicts and both series on the same charts to FILE")
      ->type_name("FILE");
  compare->footer(
      "Example:\n  volley compare before.json after.json --fail-if-worse 5\n"
      "Exit status: 0, 1 with --fail-if-worse and a regression beyond PCT, 2 unreadable input.");
  options.compare = compare;
}

void add_runs_options(CLI::App& cmd, SweepOptions& s) {
  cmd.add_option("--set", s.set, "Give another profile variable a value (repeatable)")
      ->type_name("NAME=VALUE");
  cmd.add_flag("--strict", s.strict, "Treat profile warnings as errors");
  cmd.add_flag("--local", s.local,
               "Start one slave of our own on loopback for all the runs; sets h=127.0.0.1 "
               "unless --set h= is given");
  add_key_file_option(cmd, s.key_file);
  cmd.add_option("-P,--port", s.port, "Control port of the slaves (1..65535)")
      ->capture_default_str()
      ->check(unsigned_in(1, 65535));
  cmd.add_option("--workers", s.workers,
                 "Worker threads on the master (default: one per core; at most 1024)")
      ->check(unsigned_in(0, core::kMaxWorkers));
  cmd.add_option("--slave-workers", s.slave_workers,
                 "Worker threads each slave uses (at most 1024)")
      ->check(unsigned_in(0, core::kMaxWorkers));
  cmd.add_option("--seed", s.seed, "Seed for random sizes and file picks (0..2^64-1)")
      ->capture_default_str()
      ->check(unsigned_in(0, UINT64_MAX));
  add_duration_option(cmd, "--connect-timeout", s.connect_timeout, "How long to wait for a slave",
                      {std::chrono::milliseconds(1), core::kMaxDuration, ""});
  cmd.add_option("--html", s.html, "Write an HTML report with charts to FILE")->type_name("FILE");
  cmd.add_flag("-q,--quiet", s.quiet, "No progress line");
  cmd.add_flag("--allow-empty", s.allow_empty,
               "Accept a timed step with no transaction or a group with no iteration as ok");
}

int sweep_or_compare_command(CLI::App& /*app*/, const SweepCompareOptions& options) {
  if (options.sweep != nullptr && options.sweep->parsed())
    return sweep_command(options.sweep_options);
  if (options.compare != nullptr && options.compare->parsed()) {
    return compare_command(options.compare_options);
  }
  return core::to_int(core::ExitCode::kBadInput);
}

}  // namespace volley::cli
