#pragma once
// Every command-line setting, with its default. CLI11 declarations in cli/ fill these; nothing
// else reads argv. Durations and sizes arrive checked and typed (cli/option_types.hpp).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace volley::cli {

/// `volley run` (and uperf's `volley -m`).
struct RunOptions {
  std::string profile;            ///< path of the profile
  std::vector<std::string> set;   ///< --set name=value, in order
  std::uint16_t port = 20000;     ///< -P: the slaves' control port (uperf's default)
  bool local = false;             ///< --local: start a slave of our own on loopback
  std::size_t workers = 0;        ///< --workers: 0 = one per core
  std::size_t slave_workers = 0;  ///< --slave-workers: 0 = the slave's default
  std::uint32_t processes = 0;    ///< --processes: per side, 0 = decide (nprocs)
  std::uint64_t seed = 1;         ///< --seed: random sizes and file picks
  std::chrono::nanoseconds interval = std::chrono::seconds(1);  ///< -i: the time series' step
  std::string json;                                             ///< --json FILE ("-" = stdout)
  std::string csv;                                              ///< --csv FILE
  std::string html;                                             ///< --html FILE
  std::string latency_log;                                      ///< --latency-log FILE
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);  ///< --connect-timeout
  /// --step-grace: a slave's time to end a step
  std::chrono::nanoseconds step_grace = std::chrono::seconds(10);
  /// --link-timeout: slave silence while steps run
  std::chrono::nanoseconds link_timeout = std::chrono::milliseconds(2500);
  bool allow_empty = false;  ///< --allow-empty: empty steps/groups are ok
  bool strict = false;       ///< --strict: warnings are errors
  bool quiet = false;        ///< --quiet: no live lines, only the final report
  bool no_latency = false;   ///< --no-latency: skip latency recording
  bool no_tcp_info = false;  ///< --no-tcp-info: skip TCP_INFO reads
  std::string start_at;      ///< --start-at TIME: when the timed steps start
  std::optional<std::chrono::nanoseconds> max_duration;  ///< --max-duration T: cap every duration=
  std::string uperf_output;  ///< --uperf-output: uperf's statistics letters
  std::string key_file;      ///< --key-file (or VOLLEY_KEY_FILE)
  std::string tls_ca;        ///< --tls-ca FILE: verify the slaves' TLS certificates against it
  std::string io;            ///< --io: epoll, uring or auto; empty: $VOLLEY_IO (cli/io_choice.hpp)
};

/// `volley serve` (and uperf's `volley -s`).
struct ServeOptions {
  std::string listen;             ///< --listen ADDR:PORT, [IPV6]:PORT or PORT; empty: port 20000
  std::size_t workers = 0;        ///< --workers: 0 = one per core
  int announce_fd = -1;           ///< --announce-fd (for --local): write the port there
  bool exit_with_parent = false;  ///< --exit-with-parent (for --local)
  int child_fd = -1;              ///< --child-fd: serve one session of the parent there
  std::uint32_t processes = 0;    ///< --processes: per run, 0 = decide (nprocs)
  bool quiet = false;
  std::string key_file;   ///< --key-file (or VOLLEY_KEY_FILE): the pre-shared key
  int key_fd = -1;        ///< --key-fd (for --local): read the key from here
  bool insecure = false;  ///< --insecure: no key on a non-loopback address
  std::string tls_cert;   ///< --tls-cert: the certificate TLS accepts show (PEM)
  std::string tls_key;    ///< --tls-key: its private key (PEM)
  std::string io;         ///< --io: epoll, uring or auto; empty: $VOLLEY_IO (cli/io_choice.hpp)
  // Limits (control::SlaveLimits holds the defaults).
  std::size_t max_sessions = 16;
  std::uint64_t max_strands = 100000;
  std::uint64_t max_connections = 100000;
  std::uint64_t max_workers = 1024;
  std::chrono::nanoseconds max_run = std::chrono::hours(24);
  std::chrono::nanoseconds max_think = std::chrono::hours(1);
  std::uint64_t max_profile_bytes = 1U << 20;
  std::uint64_t max_io_bytes = 1U << 30;
  std::uint64_t max_frame_bytes = 16U << 20;
  std::chrono::nanoseconds hello_timeout = std::chrono::seconds(2);
  std::chrono::nanoseconds header_timeout =
      std::chrono::seconds(5);  ///< a data connection's header
};

/// `volley check` and `volley dump`.
struct CheckOptions {
  std::vector<std::string> profiles;
  std::vector<std::string> set;
  bool strict = false;
  std::string host;  ///< dump: only this slave's mirrored view
};

/// `volley merge A.json B.json ...`.
struct MergeOptions {
  std::vector<std::string> documents;  ///< result documents of masters that ran together
  std::string json;                    ///< --json FILE ("-" = stdout)
};

}  // namespace volley::cli
