#include "sweep_runs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "volley/cli/key_file.hpp"
#include "volley/core/exit_code.hpp"

namespace volley::cli {

int bad_input(const std::string& problem) {
  std::cerr << "volley: " << problem << "\n";
  return core::to_int(core::ExitCode::kBadInput);
}

std::vector<std::string> sweep_command_line(const SweepOptions& o,
                                            const std::vector<std::string>& varies,
                                            const std::string& this_run) {
  std::vector<std::string> line{"volley", "sweep", o.profile};
  line.insert(line.end(), varies.begin(), varies.end());
  for (const auto& s : o.set) line.insert(line.end(), {"--set", s});
  if (o.local) line.emplace_back("--local");
  if (o.allow_empty) line.emplace_back("--allow-empty");
  line.insert(line.end(), {"--repeat", std::to_string(o.repeat), "--seed", std::to_string(o.seed)});
  line.emplace_back("# this run: " + this_run);
  return line;
}

std::string sweep_key(const SweepOptions& options, std::optional<control::Secret>& key) {
  if (options.local) return {};
  auto read = key_from_options(options.key_file);
  if (auto* problem = std::get_if<std::string>(&read)) return *problem;
  key = std::get<std::optional<control::Secret>>(std::move(read));
  return {};
}

std::string start_local_slave(const SweepOptions& options, const profile::Profile& profile,
                              LocalSlave& local) {
  if (!options.local) return {};
  return local.start(options.slave_workers, "/proc/self/exe", 0, local_loopback(profile));
}

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

std::string progress_line(std::size_t run, std::size_t runs, const std::string& what,
                          std::string_view repeat_word, std::size_t repeat, std::size_t repeats,
                          std::chrono::steady_clock::duration elapsed) {
  std::string line =
      fmt::format("run {}/{}: {} {} {}/{}", run + 1, runs, what, repeat_word, repeat + 1, repeats);
  if (run > 0) {
    const double per_run =
        std::chrono::duration<double>(elapsed).count() / static_cast<double>(run);
    const double left = per_run * static_cast<double>(runs - run);
    line += left >= 120 ? fmt::format(", about {:.0f} min left", left / 60)
                        : fmt::format(", about {:.0f} s left", left);
  }
  return line;
}

void show_progress(const std::string& line) {
  if (::isatty(STDERR_FILENO) != 0) {
    std::cerr << '\r' << line << "\x1b[K" << std::flush;
  } else {
    std::cerr << line << '\n' << std::flush;
  }
}

RunOnceRequest sweep_request(const SweepOptions& options, const LoadedProfile& loaded,
                             const LocalSlave& local, const std::optional<control::Secret>& key) {
  const profile::Profile& profile = *loaded.parsed.profile;
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
  request.connect_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.connect_timeout);
  request.allow_empty = options.allow_empty;
  request.key = options.local ? std::optional<control::Secret>(local.key()) : key;
  return request;
}

}  // namespace volley::cli
