#pragma once
// Every command-line setting, with its default. CLI11 declarations in cli/ fill these; nothing
// else reads argv.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace volley::cli {

/// `volley run` (and uperf's `volley -m`).
struct RunOptions {
  std::string profile;                        ///< path of the profile
  std::vector<std::string> set;               ///< --set name=value, in order
  std::uint16_t port = 20000;                 ///< -P: the slaves' control port (uperf's default)
  bool local = false;                         ///< --local: start a slave of our own on loopback
  std::size_t workers = 0;                    ///< --workers: 0 = one per core
  std::size_t slave_workers = 0;              ///< --slave-workers: 0 = the slave's default
  std::uint64_t seed = 1;                     ///< --seed: random sizes and file picks
  std::string interval = "1s";                ///< -i: interval of the time series
  std::string json;                           ///< --json FILE ("-" = stdout)
  std::string csv;                            ///< --csv FILE
  std::string latency_log;                    ///< --latency-log FILE
  std::string connect_timeout = "5s";         ///< --connect-timeout
  bool strict = false;                        ///< --strict: warnings are errors
  bool quiet = false;                         ///< --quiet: no live lines, only the final report
  bool no_latency = false;                    ///< --no-latency: skip latency recording
  std::string uperf_output;                   ///< --uperf-output: uperf's statistics letters
};

/// `volley serve` (and uperf's `volley -s`).
struct ServeOptions {
  std::string listen = "0.0.0.0:20000";  ///< --listen ADDR:PORT
  std::size_t workers = 0;               ///< --workers: 0 = one per core
  int announce_fd = -1;                  ///< --announce-fd (for --local): write the port there
  bool exit_with_parent = false;         ///< --exit-with-parent (for --local)
  bool quiet = false;
};

/// `volley check` and `volley dump`.
struct CheckOptions {
  std::vector<std::string> profiles;
  std::vector<std::string> set;
  bool strict = false;
  std::string host;  ///< dump: only this slave's mirrored view
};

}  // namespace volley::cli
