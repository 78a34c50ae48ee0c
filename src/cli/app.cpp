#include "volley/cli/app.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "volley/cli/command_line.hpp"
#include "volley/cli/commands.hpp"
#include "volley/cli/io_choice.hpp"
#include "volley/process/process_count.hpp"
#include "volley/cli/options.hpp"
#include "volley/core/build_info.hpp"
#include "volley/cli/uperf_args.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/limits.hpp"
#include "volley/core/units.hpp"

namespace volley::cli {

namespace {

/// A uperf command line (`volley -vaR -i 1 -m FILE`, `volley -s`) becomes volley's own; returns
/// the exit status when it is answered here (-V, -h, a bad flag).
std::optional<int> translate_uperf_command_line(std::vector<std::string>& args) {
  if (!is_uperf_command_line(args)) return std::nullopt;
  UperfTranslation t = translate_uperf_args(args);
  for (const auto& note : t.notes) std::cerr << "volley: note: " << note << "\n";
  switch (t.action) {
    case UperfTranslation::Action::kVersion:
      std::cout << "volley " << VOLLEY_VERSION << " (uperf's command line; see volley --help)\n";
      return core::to_int(core::ExitCode::kOk);
    case UperfTranslation::Action::kUsage:
      std::cout << uperf_usage();
      return core::to_int(core::ExitCode::kOk);
    case UperfTranslation::Action::kError:
      std::cerr << "volley: " << t.error << "\n";
      return core::to_int(core::ExitCode::kBadInput);
    case UperfTranslation::Action::kRun: args = std::move(t.args); return std::nullopt;
  }
  return std::nullopt;
}

/// Timeouts the master keeps in milliseconds: less than 1 ms would be 0, which fails every run.
const DurationRange kAtLeastOneMs{std::chrono::milliseconds(1), core::kMaxDuration, ""};

void add_variable_options(CLI::App& cmd, std::vector<std::string>& set, bool& strict) {
  cmd.add_option("--set", set,
                 "Give a profile variable a value, e.g. --set h=192.0.2.1 --set t=64 "
                 "(repeatable; wins over the environment)")
      ->type_name("NAME=VALUE");
  cmd.add_flag("--strict", strict, "Treat profile warnings as errors");
}

}  // namespace

void define_command_line(CLI::App& app, CommandLine& cl) {
  app.description(
      "volley: a network workload generator. It reads a uperf-style XML profile, runs it against "
      "a\n"
      "slave (`volley serve`) that mirrors it, and reports transactions/s, throughput, latency\n"
      "percentiles and CPU on both ends.");
  app.name("volley");
  app.set_version_flag("--version", core::version_line());
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  volley run profiles/pingpong.xml --local --set t=4   # ping-pong against a local slave\n"
      "  openssl rand -hex 32 > key; chmod 600 key            # one key, copied to every host\n"
      "  volley serve --key-file key                          # on the slave host (port 20000)\n"
      "  volley run profiles/pingpong.xml --key-file key --set h=198.18.0.2 --set t=64\n"
      "  volley check profiles/*.xml\n"
      "uperf's command line works too: volley -vaR -i 1 -m PROFILE -P PORT, volley -s -P PORT\n"
      "(volley -h after a uperf flag, e.g. volley -v -h, lists uperf's flags).");

  RunOptions& run = cl.run;
  auto* run_cmd = app.add_subcommand("run", "Run a profile as the master (uperf: -m PROFILE)");
  run_cmd->add_option("profile", run.profile, "The profile (XML)")
      ->required()
      ->check(CLI::ExistingFile);
  add_variable_options(*run_cmd, run.set, run.strict);
  run_cmd->add_flag(
      "--local", run.local,
      "Start a slave of our own on loopback for this run (a separate process) and "
      "point every remotehost at it; sets h=127.0.0.1 unless --set h= is given (with an "
      "IPv6 remotehost such as h=::1, the slave is on ::1 and the run goes over IPv6)");
  add_key_file_option(*run_cmd, run.key_file);
  run_cmd
      ->add_option("--tls-ca", run.tls_ca,
                   "protocol=tls: verify the slaves' certificates against the CA certificates in "
                   "FILE (PEM), and that each names the host connected to (remotehost) in its "
                   "subjectAltName, instead of pinning the fingerprint each slave announces over "
                   "the control channel (the default)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  add_io_option(*run_cmd, run.io);
  run_cmd->add_option("-P,--port", run.port, "Control port of the slaves (1..65535)")
      ->capture_default_str()
      ->check(unsigned_in(1, 65535));
  run_cmd
      ->add_option("--workers", run.workers,
                   "Worker threads on the master (default: one per core; at most 1024)")
      ->check(unsigned_in(0, 1024));
  run_cmd
      ->add_option("--slave-workers", run.slave_workers,
                   "Worker threads each slave uses for this run (default: the slave's own; at "
                   "most 1024)")
      ->check(unsigned_in(0, 1024));
  run_cmd
      ->add_option("--processes", run.processes,
                   "Processes each side spreads the run over (default 0: decided from nprocs, "
                   "the open-file limit and the cores; 1: one process; with --local, the local "
                   "slave's too)")
      ->check(unsigned_in(0, process::kMaxProcesses));
  run_cmd->add_option("--seed", run.seed, "Seed for random sizes and file picks (0..2^64-1)")
      ->capture_default_str()
      ->check(unsigned_in(0, UINT64_MAX));
  add_duration_option(*run_cmd, "-i,--interval", run.interval,
                      "Interval of the live lines and the time series (100ms..365 days)",
                      {core::kMinInterval, core::kMaxDuration,
                       fmt::format("the shortest interval is {} (shorter ones cost more throughput "
                                   "than they show)",
                                   core::format_duration(core::kMinInterval))});
  run_cmd->add_option("--json", run.json, "Write the result document to FILE (- for stdout)")
      ->type_name("FILE");
  run_cmd->add_option("--csv", run.csv, "Write one row per interval and transaction to FILE")
      ->type_name("FILE");
  run_cmd
      ->add_option("--html", run.html,
                   "Write the run's page to FILE: rate, latency and both ends' TCP state per "
                   "interval, the findings and the kernel counters (one file, no scripts)")
      ->type_name("FILE");
  run_cmd->add_option("--latency-log", run.latency_log, "Write the latency histograms to FILE")
      ->type_name("FILE");
  add_duration_option(*run_cmd, "--connect-timeout", run.connect_timeout,
                      "How long to wait for a slave", kAtLeastOneMs);
  run_cmd
      ->add_option("--start-at", run.start_at,
                   "Start the timed steps at this wall-clock TIME (RFC 3339, e.g. "
                   "2026-11-23T12:00:00Z, or Unix seconds, e.g. 1795000000.5), so several masters "
                   "run together; at most 24 h ahead")
      ->type_name("TIME");
  add_duration_option(*run_cmd, "--max-duration", run.max_duration,
                      "Run every duration= transaction for at most T (e.g. 2s), to try a profile "
                      "written for minutes in seconds; iterations= transactions are unchanged")
      ->type_name("T");
  add_duration_option(*run_cmd, "--step-grace", run.step_grace,
                      "After the master ends a step, how long a slave may take to end it before "
                      "it is named and the run fails",
                      kAtLeastOneMs);
  add_duration_option(*run_cmd, "--link-timeout", run.link_timeout,
                      "While steps run, how long a slave may be silent before it counts as lost "
                      "(it pings every 0.5 s)",
                      kAtLeastOneMs);
  run_cmd->add_flag("--allow-empty", run.allow_empty,
                    "Accept a timed step with no transaction or a group with no iteration as ok "
                    "(for a profile that means it); disagreeing byte counts still fail");
  run_cmd->add_flag("-q,--quiet", run.quiet, "No live interval lines");
  run_cmd
      ->add_option("--uperf-output", run.uperf_output,
                   "Print uperf's output instead of volley's report: uperf's statistics "
                   "letters with R (raw, time-stamped), e.g. aR; what `volley -vaR -m FILE` "
                   "sets (docs/uperf-compatibility.md)")
      ->type_name("LETTERS");
  run_cmd->add_flag(
      "--no-latency", run.no_latency,
      "Do not time operations (no percentiles): measures what latency recording costs");
  run_cmd->add_flag("--no-tcp-info", run.no_tcp_info,
                    "Do not read TCP_INFO at transactions' and intervals' ends (no TCP figures, "
                    "no window rules): measures what reading it costs");
  run_cmd->footer(
      "Example:\n  volley run profiles/pingpong.xml --local --set t=16 --json result.json");

  cl.run_cmd = run_cmd;

  ServeOptions& serve = cl.serve;
  auto* serve_cmd = app.add_subcommand("serve", "Serve masters as a slave (uperf: -s)");
  add_serve_options(*serve_cmd, serve);

  cl.serve_cmd = serve_cmd;

  CheckOptions& check = cl.check;
  auto* check_cmd = app.add_subcommand("check", "Validate profiles and print every problem");
  check_cmd->add_option("profiles", check.profiles, "Profiles to check")->required();
  add_variable_options(*check_cmd, check.set, check.strict);
  check_cmd->footer(
      "Example:\n  volley check profiles/*.xml --set h=127.0.0.1 --set t=1 --set r=100 "
      "--set file=/etc/hostname\n"
      "Exit status: 0 all valid, 2 some profile has errors.");

  cl.check_cmd = check_cmd;

  CheckOptions& dump = cl.dump;
  auto* dump_cmd =
      app.add_subcommand("dump", "Print a resolved profile and each slave's mirrored view");
  dump_cmd->add_option("profile", dump.profiles, "The profile")->required()->expected(1);
  add_variable_options(*dump_cmd, dump.set, dump.strict);
  dump_cmd->add_option("--host", dump.host, "Only the view of the slave serving this remotehost");
  dump_cmd->footer("Example:\n  volley dump profiles/pingpong.xml --set h=127.0.0.1 --set t=2");

  cl.dump_cmd = dump_cmd;

  add_sweep_and_compare(app, cl.sweep_compare);
  cl.merge_cmd = add_merge(app, cl.merge);
  cl.search_cmd = add_search(app, cl.search);
}

int App::main(int argc, char** argv) {
  // A peer that closes a connection mid-write is an error to count (EPIPE), never the end of the
  // process: OpenSSL's socket writes, unlike volley's own sends, cannot pass MSG_NOSIGNAL.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "volley: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "volley: internal error: an unknown exception\n";
  }
  return core::to_int(core::ExitCode::kRunFailed);
}

int App::dispatch(int argc, char** argv) {
  CLI::App app;
  CommandLine cl;
  define_command_line(app, cl);

  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto rc = translate_uperf_command_line(args)) return *rc;
  const std::vector<std::string> typed = args;
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    // --help and --version are answered by CLI11 (exit status 0); every other refusal is bad input.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e);
      return core::to_int(core::ExitCode::kOk);
    }
    std::cerr << describe_parse_error(app, typed, e) << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  if (cl.run_cmd->parsed()) return run_command(cl.run, argc, argv);
  if (cl.serve_cmd->parsed()) return serve_command(cl.serve);
  if (cl.check_cmd->parsed()) return check_command(cl.check);
  if (cl.dump_cmd->parsed()) return dump_command(cl.dump);
  if (cl.merge_cmd->parsed()) return merge_command(cl.merge);
  if (cl.search_cmd->parsed()) return search_command(cl.search);
  return sweep_or_compare_command(app, cl.sweep_compare);
}

}  // namespace volley::cli
