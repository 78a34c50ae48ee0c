#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include "volley/cli/commands.hpp"
#include "volley/cli/interrupt_signals.hpp"
#include "volley/cli/io_choice.hpp"
#include "volley/cli/key_file.hpp"
#include "volley/cli/local_slave.hpp"
#include "volley/cli/profile_loader.hpp"
#include "volley/cli/run_once.hpp"
#include "volley/control/master_run.hpp"
#include "volley/core/host_port.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/limits.hpp"
#include "volley/core/units.hpp"
#include "volley/core/wall_time.hpp"
#include "volley/profile/duration_cap.hpp"
#include "volley/report/csv_report.hpp"
#include "volley/analysis/run_html.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/latency_log.hpp"
#include "volley/report/result_checks.hpp"
#include "volley/report/text_report.hpp"
#include "volley/report/uperf_output.hpp"
#include "volley/report/uperf_raw_lines.hpp"
#include "volley/core/sha256.hpp"

namespace volley::cli {

namespace asio = boost::asio;

void raise_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

std::size_t default_workers(std::size_t requested) {
  if (requested > 0) return requested;
  return std::max(1U, std::thread::hardware_concurrency());
}

namespace {

/// uperf's "Starting N threads running profile:NAME ... " for this profile.
std::string uperf_start_line(const profile::Profile& profile) {
  std::uint64_t threads = 0;
  std::uint64_t processes = 0;
  for (const profile::Group& g : profile.groups)
    (g.from_nprocs ? processes : threads) += g.nthreads;
  return report::format_uperf_start(profile.name, threads, processes);
}

}  // namespace

LivePrinter live_line_printer(std::ostream& out, bool tty) {
  return [&out, tty](const report::RunReport& r, const report::IntervalSample& s) {
    const std::string line = report::format_interval_line(r, s);
    if (tty) {
      out << '\r' << line << "\x1b[K" << std::flush;  // rewrite in place, clear the rest
    } else {
      out << line << '\n' << std::flush;
    }
  };
}

namespace {

/// Opens FILE for a report ("-" is stdout). Errors are sentences.
bool write_output(const std::string& path, const std::function<void(std::ostream&)>& write,
                  std::string& error) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) {
      error = fmt::format("cannot write the result document to stdout: {}", std::strerror(errno));
      return false;
    }
    return true;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return false;
  }
  write(out);
  // A full disk shows only when the buffer reaches the file: flush and close before judging.
  out.flush();
  out.close();
  if (!out) {
    error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

int run_command(const RunOptions& options, int argc, char** argv) {
  std::string error;
  auto bindings = parse_bindings(options.set, error);
  if (!bindings) {
    std::cerr << "volley: " << error << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  if (options.local && bindings->count("h") == 0) (*bindings)["h"] = "127.0.0.1";
  const report::UperfSections uperf = report::uperf_sections(options.uperf_output);
  const bool uperf_layout = !options.uperf_output.empty();
  if (uperf_layout && !uperf.raw) {
    std::cerr << fmt::format(
        "volley: --uperf-output '{}': uperf's layout is printed in its raw "
        "form only (add R); without it volley prints its own report\n",
        options.uperf_output);
    return core::to_int(core::ExitCode::kBadInput);
  }
  std::optional<std::int64_t> start_at;
  if (!options.start_at.empty()) {
    const core::WallTimeParse parsed = core::parse_wall_time(options.start_at);
    std::string problem = parsed.error;
    if (parsed.unix_ns) problem = core::check_start_time(*parsed.unix_ns, core::unix_now_ns());
    if (!problem.empty()) {
      std::cerr << "volley: --start-at " << options.start_at << ": " << problem << "\n";
      return core::to_int(core::ExitCode::kBadInput);
    }
    start_at = parsed.unix_ns;
  }
  // Fail on unwritable outputs now, not after a long run.
  for (const auto* path : {&options.json, &options.csv, &options.html, &options.latency_log}) {
    if (path->empty() || *path == "-") continue;
    std::ofstream probe(*path, std::ios::app);
    if (!probe) {
      std::cerr << fmt::format("volley: cannot write '{}': {}\n", *path, std::strerror(errno));
      return core::to_int(core::ExitCode::kBadInput);
    }
  }
  const profile::Variables variables{*bindings, environment_map()};
  auto loaded = load_profile(options.profile, variables, options.strict);
  if (!loaded.parsed.profile) return core::to_int(core::ExitCode::kBadInput);
  if (options.max_duration) {
    // Said on stderr whatever the output: the run is not the one the profile describes.
    if (const std::size_t n = profile::cap_durations(*loaded.parsed.profile, *options.max_duration);
        n > 0) {
      std::cerr << fmt::format("volley: --max-duration {}: {} duration transaction(s) shortened\n",
                               core::format_duration(*options.max_duration), n);
    }
  }
  const profile::Profile& profile = *loaded.parsed.profile;
  if (auto problem = zone_problem(profile); !problem.empty() && !options.local) {
    std::cerr << "volley: " << problem << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }

  // --local has a key of its own; otherwise --key-file or VOLLEY_KEY_FILE, if any.
  std::optional<control::Secret> key;
  if (!options.local) {
    auto read = key_from_options(options.key_file);
    if (auto* problem = std::get_if<std::string>(&read)) {
      std::cerr << "volley: " << *problem << "\n";
      return core::to_int(core::ExitCode::kBadInput);
    }
    key = std::get<std::optional<control::Secret>>(std::move(read));
  }
  std::string io_note;
  const auto io = resolve_io(options.io, io_note);
  if (const auto* problem = std::get_if<IoProblem>(&io)) {
    std::cerr << "volley: " << problem->why << "\n";
    return core::to_int(problem->code);
  }
  if (!io_note.empty()) std::cerr << "volley: " << io_note << "\n";
  raise_file_limit();
  // From here on SIGINT and SIGTERM stop the run and report it (a second one exits at once),
  // also while the local slave starts and stops and the report is written.
  const InterruptSignals::Scope interrupt_signals;
  LocalSlave local;
  local.use_io(std::get<engine::IoEngine>(io));
  if (options.local) {
    if (auto problem = local.start(options.slave_workers, "/proc/self/exe", options.processes,
                                   local_loopback(profile));
        !problem.empty()) {
      std::cerr << "volley: " << problem << "\n";
      return core::to_int(core::ExitCode::kRunFailed);
    }
  }

  // With --json -, stdout carries the document; the human report goes to stderr.
  std::ostream& text = options.json == "-" ? std::cerr : std::cout;
  const bool tty = ::isatty(options.json == "-" ? STDERR_FILENO : STDOUT_FILENO) != 0;

  RunOnceRequest request;
  request.profile = &profile;
  request.profile_text = loaded.text;
  request.profile_path = options.profile;
  request.variables = loaded.parsed.used_variables;
  request.slaves =
      slave_addresses(profile, options.local ? local.address() : "", local.port(), options.port);
  request.seed = options.seed;
  request.workers = default_workers(options.workers);
  request.slave_workers = options.slave_workers;
  request.io = std::get<engine::IoEngine>(io);
  request.processes = options.processes;
  request.interval = options.interval;
  request.record_latency = !options.no_latency;
  request.sample_tcp = !options.no_tcp_info;
  request.count_strands = uperf_layout && uperf.strands;
  request.start_at_unix_ns = start_at;
  request.max_duration = options.max_duration;
  request.connect_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.connect_timeout);
  request.step_grace = std::chrono::duration_cast<std::chrono::milliseconds>(options.step_grace);
  request.link_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.link_timeout);
  request.key = options.local ? std::optional<control::Secret>(local.key()) : key;
  request.tls_ca_file = options.tls_ca;
  request.allow_empty = options.allow_empty;
  // The latency log streams each interval's histograms as it ends: they are not kept.
  std::ofstream latency_file;
  std::ostream* latency_out = nullptr;
  if (!options.latency_log.empty()) {
    if (options.latency_log == "-") {
      latency_out = &std::cout;
    } else {
      latency_file.open(options.latency_log, std::ios::binary | std::ios::trunc);
      if (!latency_file) {
        std::cerr << fmt::format("volley: cannot write '{}': {}\n", options.latency_log,
                                 std::strerror(errno));
        return core::to_int(core::ExitCode::kBadInput);
      }
      latency_out = &latency_file;
    }
    report::write_latency_log_header(*latency_out);
    request.on_interval_histograms = [latency_out](const report::RunReport& r,
                                                   const report::IntervalSample&,
                                                   const std::vector<results::SlotStats>& slots) {
      report::write_interval_histograms(r, r.intervals.size() - 1, slots, *latency_out);
    };
  }
  // uperf's time-stamped lines go out as each interval arrives, as uperf prints them.
  report::UperfRawLines raw_lines(uperf.stats, core::unix_now_ns());
  if (uperf_layout) {
    text << uperf_start_line(profile) << std::flush;
    request.on_interval = [&text, &raw_lines](const report::RunReport& r,
                                              const report::IntervalSample& s) {
      text << raw_lines.interval(r, s) << std::flush;
    };
  } else {
    if (!options.quiet) request.on_interval = live_line_printer(text, tty);
    text << fmt::format("volley {}: running profile '{}' ({})\n", VOLLEY_VERSION, profile.name,
                        options.local
                            ? fmt::format("local slave on {}",
                                          core::format_host_port(local.address(), local.port()))
                            : fmt::format("{} slave(s)", request.slaves.size()));
    if (start_at) {
      text << fmt::format("volley: the timed steps start at {} (in {:.3f} s)\n",
                          report::iso8601_utc_ms(*start_at),
                          static_cast<double>(*start_at - core::unix_now_ns()) / 1e9);
    }
  }
  report::RunReport result = run_once(request);
  if (tty && !options.quiet && !uperf_layout) text << '\n';
  local.stop();
  result.command_line.assign(argv, argv + argc);
  if (uperf_layout) {
    text << raw_lines.finish(result) << report::format_uperf_report(result, uperf);
  } else {
    text << report::format_final_report(result);
  }
  bool outputs_ok = true;
  auto emit = [&](const std::string& path, const std::function<void(std::ostream&)>& write) {
    if (path.empty()) return;
    std::string problem;
    if (!write_output(path, write, problem)) {
      std::cerr << "volley: " << problem << "\n";
      outputs_ok = false;
    }
  };
  emit(options.json, [&](std::ostream& out) { report::write_json_document(result, out); });
  emit(options.csv, [&](std::ostream& out) { report::write_interval_csv(result, out); });
  emit(options.html, [&](std::ostream& out) {
    out << analysis::render_run_html(report::to_json_document(result));
  });
  if (latency_out != nullptr) {
    report::write_run_histograms(result, *latency_out);
    latency_out->flush();
    if (!*latency_out) {
      std::cerr << fmt::format("volley: cannot write '{}'\n", options.latency_log);
      outputs_ok = false;
    }
  }

  // uperf's layout has no place for it (wrappers parse it): an ok run with failed operations
  // says on stderr that canfail allowed them, by side and kind (volley's own header says it).
  if (const std::string failed = report::failed_operations_by_kind(result);
      uperf_layout && result.status == report::RunStatus::kOk && !failed.empty()) {
    std::cerr << "volley: failed operations, allowed by canfail (all steps): " << failed << "\n";
  }
  switch (result.status) {
    case report::RunStatus::kOk:
      return core::to_int(outputs_ok ? core::ExitCode::kOk : core::ExitCode::kRunFailed);
    case report::RunStatus::kInterrupted: return core::to_int(core::ExitCode::kInterrupted);
    case report::RunStatus::kFailed:
      std::cerr << "volley: run failed: " << result.failure << "\n";
      return core::to_int(core::ExitCode::kRunFailed);
  }
  return core::to_int(core::ExitCode::kRunFailed);
}

}  // namespace volley::cli
