#include "volley/cli/uperf_args.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "volley/report/uperf_output.hpp"

namespace volley::cli {
namespace {

constexpr std::string_view kPlainFlags = "epTgtfknasRvVh";  // uperf's letters without a value
constexpr std::string_view kValueFlags = "EmXiPS";          // uperf's letters that take one

bool is_flag_letter(char c) {
  return kPlainFlags.find(c) != std::string_view::npos ||
         kValueFlags.find(c) != std::string_view::npos;
}

bool starts_long_option(const std::string& a) { return a.size() > 2 && a.starts_with("--"); }

/// The note for a flag volley accepts but handles differently; "" when there is none.
std::string note_for(char flag, const std::string& value) {
  switch (flag) {
    case 'p':
      return "-p: the cpu column is the master process's CPU per execution over each step, not "
             "each flowop's own (volley always fills it); -f is assumed, as uperf does";
    case 'e':
    case 'E':
      return fmt::format("-{}: volley reads no hardware CPU counters; -f is assumed, as uperf does",
                         flag);
    case 'k':
      return "-k: volley always samples the NIC counters (/proc/net/dev): the Netstat section";
    case 'S': return fmt::format("-S {}: volley's control connection is always TCP", value);
    case 'X':
      return fmt::format(
          "-X {}: volley writes its latency histograms there (docs/results.md), "
          "not uperf's one line per operation",
          value);
    default: return "";
  }
}

UperfTranslation failure(std::string sentence) {
  UperfTranslation t;
  t.action = UperfTranslation::Action::kError;
  t.error = std::move(sentence);
  return t;
}

}  // namespace

std::uint64_t uperf_interval_ms(const std::string& text) {
  if (text.empty() || (!std::isdigit(static_cast<unsigned char>(text[0])) && text[0] != '.')) {
    return 0;
  }
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  double unit_ns = 1e9;  // no unit: seconds
  if (end != nullptr && *end != '\0') {
    switch (std::tolower(static_cast<unsigned char>(*end))) {
      case 's': unit_ns = 1e9; break;
      case 'm': unit_ns = 1e6; break;  // uperf: any m is milliseconds (so 1min is 1 ms)
      case 'u': unit_ns = 1e3; break;
      case 'n': unit_ns = 1; break;
      default: return 0;
    }
  }
  const double ms = number * unit_ns / 1e6;
  return ms >= 1 && ms < 1e15 ? static_cast<std::uint64_t>(ms) : 0;
}

bool is_uperf_command_line(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  const std::string& first = args[0];
  if (first.size() < 2 || first[0] != '-' || first[1] == '-' || first == "-h") return false;
  for (std::size_t i = 1; i < first.size(); ++i) {
    if (!is_flag_letter(first[i])) return false;
    if (kValueFlags.find(first[i]) != std::string_view::npos) break;  // the rest is its value
  }
  return true;
}

UperfTranslation translate_uperf_args(const std::vector<std::string>& args) {
  UperfTranslation out;
  bool master = false;
  bool slave = false;
  std::string profile;
  std::string stats;  // uperf's statistics letters, in order
  std::string interval;
  std::string port;
  std::string response_times;
  std::vector<std::string> passthrough;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (starts_long_option(a)) {
      // volley's own option, with its value when it takes one ("-" is stdout, not a flag).
      passthrough.push_back(a);
      while (i + 1 < args.size() && (args[i + 1] == "-" || !args[i + 1].starts_with("-"))) {
        passthrough.push_back(args[++i]);
      }
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      return failure(fmt::format(
          "unexpected argument '{}' (uperf's command line gives the profile with -m PROFILE)", a));
    }
    for (std::size_t j = 1; j < a.size(); ++j) {
      const char c = a[j];
      if (!is_flag_letter(c)) {
        return failure(fmt::format("unknown option -{} in '{}' (uperf's options: {})", c, a,
                                   "-m PROFILE -s -ngtTfkpaeRvVh -E EV -X FILE -i INTERVAL -P PORT "
                                   "-S PROTOCOL"));
      }
      std::string value;
      if (kValueFlags.find(c) != std::string_view::npos) {
        if (j + 1 < a.size()) {
          value = a.substr(j + 1);
        } else if (i + 1 < args.size()) {
          value = args[++i];
        } else {
          return failure(fmt::format("option -{} needs a value", c));
        }
        j = a.size();  // the rest of the cluster was the value
      }
      switch (c) {
        case 'V': out.action = UperfTranslation::Action::kVersion; return out;
        case 'h': out.action = UperfTranslation::Action::kUsage; return out;
        case 'm':
          master = true;
          profile = value;
          break;
        case 's': slave = true; break;
        case 'v': break;  // volley's notes and warnings always go to stderr
        case 'i':
          if (uperf_interval_ms(value) == 0) {
            return failure(fmt::format(
                "-i '{}': not an interval (a number of seconds, or with s, ms, us or ns; at "
                "least 1 ms)",
                value));
          }
          interval = fmt::format("{}ms", uperf_interval_ms(value));
          break;
        case 'P': {
          char* end = nullptr;
          const long number = std::strtol(value.c_str(), &end, 10);
          if (value.empty() || *end != '\0' || number < 1 || number > 65535) {
            return failure(fmt::format("-P '{}': expected a port number, 1 to 65535", value));
          }
          port = value;
          break;
        }
        case 'X': response_times = value; break;
        case 'S': break;
        default: stats += c; break;  // a statistics letter
      }
      if (auto note = note_for(c, value); !note.empty()) out.notes.push_back(std::move(note));
    }
  }
  if (master && slave) return failure("-m and -s: a process is either the master or a slave");
  if (!master && !slave) return failure("give -m PROFILE (run as the master) or -s (a slave)");
  if (slave) {
    out.args = {"serve"};
    if (!port.empty()) {
      out.args.push_back("--listen");
      out.args.push_back(port);  // the default address: every one with a key, loopback without
    }
  } else {
    out.args = {"run", profile};
    const report::UperfSections sections = report::uperf_sections(stats);
    if (sections.raw) {
      out.args.push_back("--uperf-output=" + stats);
    } else {
      if (!sections.stats) out.args.emplace_back("--quiet");
      if (stats.find_first_of("atfgT") != std::string::npos) {
        out.notes.emplace_back(
            "-a/-t/-f/-g/-T: volley's report already has per-transaction and per-flowop tables; "
            "add -R for uperf's layout");
      }
    }
    if (!interval.empty()) out.args.insert(out.args.end(), {"--interval", interval});
    if (!port.empty()) out.args.insert(out.args.end(), {"--port", port});
    if (!response_times.empty()) out.args.insert(out.args.end(), {"--latency-log", response_times});
  }
  out.args.insert(out.args.end(), passthrough.begin(), passthrough.end());
  return out;
}

std::string uperf_usage() {
  return "volley, with uperf's command line (volley --help for volley's own)\n"
         "Usage:   volley -m PROFILE [-ngtTfkpaeR] [-E EV1,EV2] [-X FILE] [-i INTERVAL] [-P PORT]\n"
         "                [volley run options, e.g. --local --set h=HOST]\n"
         "         volley -s [-P PORT] --key-file KEY [volley serve options]\n"
         "\n"
         "\t-m <profile>\t Run this profile as the master (volley run PROFILE)\n"
         "\t-s\t\t Slave (volley serve)\n"
         "\t-S <protocol>\t Accepted; the control connection is always TCP\n"
         "\t-n\t\t No statistics\n"
         "\t-T\t\t Strand (thread) statistics\n"
         "\t-t\t\t Transaction averages\n"
         "\t-f\t\t Flowop averages\n"
         "\t-g\t\t Group statistics\n"
         "\t-k\t\t NIC statistics (always collected)\n"
         "\t-p, -e, -E\t Accepted; -f assumed (no hardware counters)\n"
         "\t-a\t\t All statistics\n"
         "\t-X <file>\t Latency histograms to <file> (volley run --latency-log)\n"
         "\t-i <interval>\t Interval of the statistics (uperf's units: 1 = 1 s, 100m = 100 ms)\n"
         "\t-P <port>\t The slaves' control port (default 20000)\n"
         "\t-R\t\t uperf's raw, time-stamped output (timestamp_ms:... name:Txn2 ...)\n"
         "\t-v\t\t Verbose (volley's notes always go to stderr)\n"
         "\t-V\t\t Version\n"
         "\t-h\t\t This text\n"
         "\nWithout -R volley prints its own report. See docs/uperf-compatibility.md.\n";
}

}  // namespace volley::cli
