#pragma once
// uperf's command line, read as uperf's getopt loop reads it ("E:epTgtfknasm:X:i:P:S:RvVh":
// clustered letters, an option's value glued on or in the next argument), translated into
// volley's own: `volley -vaR -i 1 -m p.xml -P 30000` becomes
// `volley run p.xml --uperf-output vaR -i 1000ms -P 30000`, and `volley -s -P 30000` becomes
// `volley serve --listen [::]:30000`. volley's long options (`--local`, `--set h=...`) pass
// through unchanged. Pure: no I/O, so the rules are unit-tested.
#include <cstdint>
#include <string>
#include <vector>

namespace volley::cli {

struct UperfTranslation {
  enum class Action { kRun, kVersion, kUsage, kError };
  Action action = Action::kRun;
  std::vector<std::string> args;   ///< volley's arguments (argv without argv[0]), for kRun
  std::vector<std::string> notes;  ///< one line per flag volley accepts but handles differently
  std::string error;               ///< for kError: a sentence naming the flag
};

/// Whether `args` (argv without argv[0]) is a uperf-style command line: its first argument is a
/// cluster of uperf's one-letter flags (`-m`, `-s`, `-vaR`, `-V`, ...). `-h` alone stays volley's
/// own help.
[[nodiscard]] bool is_uperf_command_line(const std::vector<std::string>& args);

/// Translates a uperf command line (see is_uperf_command_line) into volley's.
[[nodiscard]] UperfTranslation translate_uperf_args(const std::vector<std::string>& args);

/// uperf's duration syntax (a number, then s, m = ms, u or n; only the unit's first letter counts;
/// no unit = seconds) in whole milliseconds, as uperf keeps `-i`. 0 when it is not a duration.
[[nodiscard]] std::uint64_t uperf_interval_ms(const std::string& text);

/// The usage text for `volley -h` in a uperf command line.
[[nodiscard]] std::string uperf_usage();

}  // namespace volley::cli
