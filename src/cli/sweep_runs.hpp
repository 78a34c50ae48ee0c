#pragma once
// What `volley sweep` and its interleaved form share: one run's request, the progress line and
// writing an output file.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volley/cli/commands.hpp"
#include "volley/cli/local_slave.hpp"
#include "volley/cli/profile_loader.hpp"
#include "volley/cli/run_once.hpp"

namespace volley::cli {

/// Problems found before anything runs print and give kBadInput.
int bad_input(const std::string& problem);

/// The command line a run document records: the sweep's options (`varies`: what the sweep
/// varies, e.g. {"--vary", "t=1,2"}), not the process argv, and which run of it this is.
std::vector<std::string> sweep_command_line(const SweepOptions& options,
                                            const std::vector<std::string>& varies,
                                            const std::string& this_run);

/// The key for remote slaves (--key-file or VOLLEY_KEY_FILE; none with --local) into `key`;
/// "" or why it cannot be read.
std::string sweep_key(const SweepOptions& options, std::optional<control::Secret>& key);

/// With --local, starts `local` for `profile`'s hosts; "" or why it could not start.
std::string start_local_slave(const SweepOptions& options, const profile::Profile& profile,
                              LocalSlave& local);

/// Writes `text` to `path` ("-" is stdout); an error sentence, or "".
std::string write_text(const std::string& path, const std::string& text);

/// "run 5/12: t=16 repeat 2/3, about 40 s left" (no estimate before the first run has ended);
/// `repeat_word` names the repeats ("repeat", "round").
std::string progress_line(std::size_t run, std::size_t runs, const std::string& what,
                          std::string_view repeat_word, std::size_t repeat, std::size_t repeats,
                          std::chrono::steady_clock::duration elapsed);

/// Shows `line` on stderr: in place on a terminal, a line each otherwise.
void show_progress(const std::string& line);

/// The request of one run of `loaded` in a sweep: its slaves (the local one with --local), the
/// sweep's settings and key.
RunOnceRequest sweep_request(const SweepOptions& options, const LoadedProfile& loaded,
                             const LocalSlave& local, const std::optional<control::Secret>& key);

}  // namespace volley::cli
