#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <optional>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include "volley/cli/commands.hpp"
#include "volley/cli/io_choice.hpp"
#include "volley/cli/key_file.hpp"
#include "volley/transport/tls_identity.hpp"
#include "volley/control/slave_server.hpp"
#include "volley/core/exit_code.hpp"
#include "volley/core/host_port.hpp"
#include "volley/core/limits.hpp"
#include "volley/core/units.hpp"
#include "volley/process/child_process.hpp"
#include "volley/process/process_count.hpp"

namespace volley::cli {

namespace asio = boost::asio;

namespace {

/// --tls-cert and --tls-key, both or neither: the identity, or why it cannot be used ("").
std::string load_tls_identity(const ServeOptions& options,
                              std::shared_ptr<const transport::TlsIdentity>& into) {
  if (options.tls_cert.empty() && options.tls_key.empty()) return {};
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return options.tls_cert.empty() ? "--tls-key needs --tls-cert (the certificate of the key)"
                                    : "--tls-cert needs --tls-key (the certificate's private key)";
  }
  std::string warning;
  auto loaded = transport::TlsIdentity::load(options.tls_cert, options.tls_key, warning);
  if (auto* problem = std::get_if<std::string>(&loaded)) return *problem;
  if (!warning.empty()) std::cerr << "volley serve: " << warning << "\n";
  into = std::make_shared<const transport::TlsIdentity>(
      std::get<transport::TlsIdentity>(std::move(loaded)));
  return {};
}

/// uperf's control port, where `--listen` gives only an address.
constexpr std::uint16_t kDefaultControlPort = 20000;

/// Whether this kernel has IPv6 at all (booted with ipv6.disable=1, it has not).
bool ipv6_available() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

/// Which address `serve` listens on.
enum class ListenScope {
  kGiven,         ///< the address --listen named
  kEveryAddress,  ///< [::] (dual stack), or 0.0.0.0 where the host has no IPv6
  kDefault,       ///< none named: every address with a key or --insecure, loopback without
};

/// Where `serve` listens: an address and port, and what the address means.
struct ListenAt {
  asio::ip::tcp::endpoint endpoint;
  ListenScope scope = ListenScope::kGiven;
};

/// "ADDRESS:PORT", "[IPV6]:PORT", a bare address (port 20000), "[::]:PORT" for every address, or
/// "PORT"/":PORT"/nothing for the default address (see ListenScope). The address must be numeric:
/// the slave listens on what it is given, not on what a name resolves to today.
std::optional<ListenAt> parse_listen(const std::string& text, std::string& error) {
  const auto all_digits = [](std::string_view t) {
    return !t.empty() &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string_view port_only = !text.empty() && text.front() == ':'
                                         ? std::string_view(text).substr(1)
                                         : std::string_view(text);
  const bool default_address = text.empty() || all_digits(port_only);
  const core::HostPort parsed =
      default_address
          ? core::parse_host_port("[::]:" + (text.empty() ? std::to_string(kDefaultControlPort)
                                                          : std::string(port_only)))
          : core::parse_host_port(text);
  if (!parsed.error.empty()) {
    error = fmt::format(
        "--listen '{}': {} (expected ADDRESS:PORT, [IPV6]:PORT or PORT, e.g. "
        "0.0.0.0:20000, [::1]:20000 or 20000)",
        text, parsed.error);
    return std::nullopt;
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(parsed.host, ec);
  if (ec) {
    error = fmt::format(
        "--listen '{}': '{}' is not a numeric address (give this host's IPv4 or "
        "IPv6 address, or only a port for every address)",
        text, parsed.host);
    return std::nullopt;
  }
  if (const std::string zone = core::unknown_zone(parsed.host); !zone.empty()) {
    error = fmt::format("--listen '{}': this host has no interface '{}'", text, zone);
    return std::nullopt;
  }
  ListenAt at;
  at.endpoint = asio::ip::tcp::endpoint(address, parsed.port.value_or(kDefaultControlPort));
  if (default_address) {
    at.scope = ListenScope::kDefault;
  } else if (address.is_v6() && address.is_unspecified()) {
    at.scope = ListenScope::kEveryAddress;
  }
  return at;
}

/// Settles the default address: every address when masters must prove a key (or --insecure
/// says the network is trusted), loopback otherwise, so that a slave started without a key is
/// reachable from this host only. Returns the sentence that tells the user so (empty otherwise).
std::string settle_default_address(ListenAt& at, bool keyed, bool insecure) {
  if (at.scope != ListenScope::kDefault) return "";
  if (keyed || insecure) {
    at.scope = ListenScope::kEveryAddress;
    return "";
  }
  at.scope = ListenScope::kGiven;
  at.endpoint.address(asio::ip::address_v4::loopback());
  return fmt::format(
      "no key: listening on loopback only. To serve other hosts, give --key-file FILE (or "
      "VOLLEY_KEY_FILE; {}), or add --insecure on a network you trust",
      control::key_file_advice("FILE"));
}

/// After a stop request, the most the process waits for its sessions to wind down before it
/// exits anyway: SIGTERM must always work, whatever state a session is in.
constexpr auto kStopDeadline = std::chrono::milliseconds(1500);
/// --header-timeout's range: shorter drops connections on a loaded host; longer lets a stranger
/// pin a descriptor for minutes.
constexpr std::chrono::nanoseconds kMinHeaderTimeout = std::chrono::milliseconds(10);
constexpr std::chrono::nanoseconds kMaxHeaderTimeout = std::chrono::minutes(5);
/// The run and think limits are kept in whole seconds: less than 1 s would be 0.
const DurationRange kAtLeastOneSecond{std::chrono::seconds(1), core::kMaxDuration, ""};

/// The `--local` slave (`--exit-with-parent`) shares its master's process group, so Ctrl-C at the
/// terminal reaches both. The master's is the one that counts: it stops the run, has this slave
/// hand over its figures and reports them; a slave that stopped on its own signal first would
/// abort the run and lose them. So the slave ignores SIGINT and follows its master: the master
/// stops it (SIGTERM) when the run is over, and PR_SET_PDEATHSIG ends it if the master dies. (Its
/// own process group instead would take it out of the terminal's job control, Ctrl-Z included.)
/// LocalSlave starts it with SIGINT blocked; a Ctrl-C pending from then is discarded here.
void ignore_the_terminals_interrupt() {
  ::signal(SIGINT, SIG_IGN);
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  ::sigprocmask(SIG_UNBLOCK, &interrupt, nullptr);
}

/// `volley serve --child-fd N`: one session of the parent process on descriptor N (a socketpair),
/// then exit. The parent checked the run against its limits: none are applied twice.
int serve_child(const ServeOptions& options) {
  // SIGINT is the parent's to act on: it stops the run through this link. (The terminal's Ctrl-C
  // does not reach a child, which runs in a session of its own; one sent by pid is ignored too.)
  ::signal(SIGINT, SIG_IGN);
  if (!process::die_with_parent()) return core::to_int(core::ExitCode::kRunFailed);
  std::shared_ptr<const transport::TlsIdentity> tls_identity;
  if (auto problem = load_tls_identity(options, tls_identity); !problem.empty()) {
    std::cerr << "volley serve: " << problem << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  raise_file_limit();
  asio::io_context context(1);
  control::SlaveSettings settings;
  settings.tls_identity = std::move(tls_identity);
  settings.default_workers = std::max<std::size_t>(1, options.workers);
  settings.processes = 1;
  // The parent relays no pings; its death kills this process (die_with_parent), and a link it
  // closes ends the session at once.
  settings.silence_timeout = std::chrono::hours(24 * 365);
  // Nor is it a stranger: the hello deadline guards the control port against strangers, and a
  // parent spawning several children on a loaded host may take seconds to greet the last.
  settings.limits.hello_timeout = std::chrono::hours(24 * 365);
  settings.limits.max_strands = UINT64_MAX;
  settings.limits.max_connections = UINT64_MAX;
  settings.limits.max_profile_bytes = UINT64_MAX;
  settings.limits.max_frame_bytes = UINT32_MAX;
  settings.limits.max_run = std::chrono::seconds(core::kMaxDuration.count() / 1'000'000'000);
  settings.limits.max_think = settings.limits.max_run;
  if (!options.quiet) {
    settings.log = [](const std::string& line) {
      std::cerr << "volley child: " << line << std::endl;
    };
  }
  control::SlaveServer server(context, settings);
  asio::ip::tcp::socket socket(context);
  boost::system::error_code ec;
  // A Unix socketpair behind a TCP socket object: the channel only reads and writes bytes.
  socket.assign(asio::ip::tcp::v4(), options.child_fd, ec);
  if (ec) return core::to_int(core::ExitCode::kRunFailed);
  server.adopt(std::move(socket));
  context.run();
  return core::to_int(core::ExitCode::kOk);
}

}  // namespace

void add_key_file_option(CLI::App& cmd, std::string& key_file) {
  cmd.add_option("--key-file", key_file,
                 "The slaves' pre-shared key (default: $VOLLEY_KEY_FILE); with it, every slave "
                 "must prove it knows the key")
      ->type_name("FILE");
}

void add_serve_options(CLI::App& cmd, ServeOptions& serve) {
  cmd.add_option("--listen", serve.listen,
                 "Control address and port: ADDRESS:PORT, [IPV6]:PORT, [::]:PORT for every "
                 "address (IPv6 and IPv4), or PORT alone (default 20000) on the default address: "
                 "every address with a key or --insecure, loopback (127.0.0.1) without. Data "
                 "connections take the family the master reached this one by. Other than "
                 "loopback: needs --key-file or --insecure")
      ->type_name("ADDRESS");
  cmd.add_option("--workers", serve.workers,
                 "Default worker threads per run (default: one per core; at most 1024)")
      ->check(unsigned_in(0, core::kMaxWorkers));
  cmd.add_option("--announce-fd", serve.announce_fd, "Write the bound port to this descriptor")
      ->group("");
  cmd.add_flag("--exit-with-parent", serve.exit_with_parent, "Exit when the parent exits")
      ->group("");
  cmd.add_option("--child-fd", serve.child_fd, "Serve one session of the parent on this descriptor")
      ->group("");
  cmd.add_option("--processes", serve.processes,
                 "Processes one run is spread over (default 0: decided from nprocs, the open-file "
                 "limit and the cores; 1: one process)")
      ->check(unsigned_in(0, process::kMaxProcesses));
  cmd.add_flag("-q,--quiet", serve.quiet, "Log nothing");
  cmd.add_option("--key-file", serve.key_file,
                 "Pre-shared key: masters must prove they know it (default: $VOLLEY_KEY_FILE). "
                 "Make one with `openssl rand -hex 32 > FILE; chmod 600 FILE`")
      ->type_name("FILE");
  cmd.add_option("--key-fd", serve.key_fd, "Read the key from this descriptor")->group("");
  cmd.add_flag("--insecure", serve.insecure,
               "Serve any master without a key on a non-loopback address (otherwise refused)");
  cmd.add_option("--tls-cert", serve.tls_cert,
                 "Certificate (PEM, RSA or ECDSA) that protocol=tls accepts show, with --tls-key "
                 "(default: a fresh self-signed ECDSA P-256 one per run; the master pins its "
                 "fingerprint, sent over the control channel)")
      ->type_name("FILE");
  cmd.add_option("--tls-key", serve.tls_key,
                 "The private key of --tls-cert (PEM, no passphrase; read as --key-file is)")
      ->type_name("FILE");
  add_io_option(cmd, serve.io);
  const std::string limits = "Limits (a request beyond one is refused, naming the flag)";
  cmd.add_option("--max-sessions", serve.max_sessions, "Masters served at once")
      ->capture_default_str()
      ->check(unsigned_in(1, 100000))
      ->group(limits);
  cmd.add_option("--max-strands", serve.max_strands, "Strands in one run")
      ->capture_default_str()
      ->check(unsigned_in(1, core::kMaxRunSize))
      ->group(limits);
  cmd.add_option("--max-connections", serve.max_connections, "Data connections in one run")
      ->capture_default_str()
      ->check(unsigned_in(1, core::kMaxRunSize))
      ->group(limits);
  cmd.add_option("--max-workers", serve.max_workers, "Worker threads in one run")
      ->capture_default_str()
      ->check(unsigned_in(1, core::kMaxWorkers))
      ->group(limits);
  add_duration_option(cmd, "--max-run", serve.max_run,
                      "Timed steps of one run, summed (at least 1s)", kAtLeastOneSecond)
      ->group(limits);
  add_duration_option(cmd, "--max-think", serve.max_think, "One think flowop (at least 1s)",
                      kAtLeastOneSecond)
      ->group(limits);
  add_size_option(cmd, "--max-profile-bytes", serve.max_profile_bytes,
                  "Size of a profile (bytes; k, m, g suffixes, e.g. 1m)", 1, 1ULL << 30)
      ->group(limits);
  add_size_option(cmd, "--max-io-bytes", serve.max_io_bytes, "One read or write buffer (bytes)", 1,
                  core::kMaxIoBytes)
      ->group(limits);
  add_size_option(cmd, "--max-frame-bytes", serve.max_frame_bytes,
                  "One control message after the hello (bytes; before it: 4096)", 4096, 1ULL << 30)
      ->group(limits);
  add_duration_option(cmd, "--hello-timeout", serve.hello_timeout,
                      "How long a new connection has to send its hello",
                      {std::chrono::milliseconds(1), core::kMaxDuration, ""})
      ->group(limits);
  add_duration_option(cmd, "--header-timeout", serve.header_timeout,
                      "How long a data connection has to send its header (10ms..5min)",
                      {kMinHeaderTimeout, kMaxHeaderTimeout, ""})
      ->group(limits);
  cmd.footer(
      "Example:\n  volley serve --listen 0.0.0.0:20000 --key-file /etc/volley/key --max-sessions "
      "4");
}

int serve_command(const ServeOptions& options) {
  // A peer that resets a connection during sendfile or a write must cost an error, not the slave.
  ::signal(SIGPIPE, SIG_IGN);
  if (options.exit_with_parent) {
    // The master that started us for --local may die without stopping us: go with it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() == 1) return core::to_int(core::ExitCode::kInterrupted);
    ignore_the_terminals_interrupt();
  }
  if (options.child_fd >= 0) return serve_child(options);
  std::string error;
  auto listen_at = parse_listen(options.listen, error);
  if (!listen_at) {
    std::cerr << "volley serve: " << error << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  std::optional<control::Secret> key;
  if (options.key_fd >= 0) {
    auto read = key_from_descriptor(options.key_fd);
    if (auto* problem = std::get_if<std::string>(&read)) {
      std::cerr << "volley serve: " << *problem << "\n";
      return core::to_int(core::ExitCode::kBadInput);
    }
    key = std::get<control::Secret>(std::move(read));
  } else {
    auto read = key_from_options(options.key_file);
    if (auto* problem = std::get_if<std::string>(&read)) {
      std::cerr << "volley serve: " << *problem << "\n";
      return core::to_int(core::ExitCode::kBadInput);
    }
    key = std::get<std::optional<control::Secret>>(std::move(read));
  }
  const std::string default_note =
      settle_default_address(*listen_at, key.has_value(), options.insecure);
  if (!key && !options.insecure && !listen_at->endpoint.address().is_loopback()) {
    std::cerr << fmt::format(
        "volley serve: refusing to listen on {} without a key: anyone who can reach this port "
        "could make this host listen and send traffic. Give --key-file FILE (or VOLLEY_KEY_FILE; "
        "{}), listen on a loopback address, or add --insecure on a network you trust\n",
        options.listen, control::key_file_advice("FILE"));
    return core::to_int(core::ExitCode::kBadInput);
  }
  std::shared_ptr<const transport::TlsIdentity> tls_identity;
  if (auto problem = load_tls_identity(options, tls_identity); !problem.empty()) {
    std::cerr << "volley serve: " << problem << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  std::string io_note;
  const auto io = resolve_io(options.io, io_note);
  if (const auto* problem = std::get_if<IoProblem>(&io)) {
    std::cerr << "volley serve: " << problem->why << "\n";
    return core::to_int(problem->code);
  }
  if (!io_note.empty() && !options.quiet) std::cerr << "volley serve: " << io_note << "\n";
  raise_file_limit();
  asio::io_context context(1);
  control::SlaveSettings settings;
  settings.io = std::get<engine::IoEngine>(io);
  settings.tls_identity = std::move(tls_identity);
  settings.default_workers =
      std::min<std::size_t>(default_workers(options.workers), options.max_workers);
  settings.limits.max_sessions = options.max_sessions;
  settings.limits.max_strands = options.max_strands;
  settings.limits.max_connections = options.max_connections;
  settings.limits.max_workers = options.max_workers;
  settings.limits.max_run = std::chrono::duration_cast<std::chrono::seconds>(options.max_run);
  settings.limits.max_think = std::chrono::duration_cast<std::chrono::seconds>(options.max_think);
  settings.limits.max_profile_bytes = options.max_profile_bytes;
  settings.limits.max_io_bytes = options.max_io_bytes;
  settings.limits.max_frame_bytes =
      static_cast<std::uint32_t>(options.max_frame_bytes);  // <= 1 GiB
  settings.limits.hello_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.hello_timeout);
  settings.limits.header_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.header_timeout);
  settings.key = std::move(key);
  settings.processes = options.processes;
  if (!options.quiet) {
    settings.log = [](const std::string& line) {
      std::cerr << "volley serve: " << line << std::endl;
    };
  }
  control::SlaveServer server(context, settings);
  asio::ip::tcp::endpoint endpoint = listen_at->endpoint;
  std::string problem = server.listen(endpoint);
  const bool every_address = listen_at->scope == ListenScope::kEveryAddress;
  if (!problem.empty() && every_address && !ipv6_available()) {
    // A host with IPv6 switched off still has every IPv4 address to offer.
    endpoint = asio::ip::tcp::endpoint(asio::ip::address_v4::any(), endpoint.port());
    problem = server.listen(endpoint);
  }
  if (!problem.empty()) {
    std::cerr << "volley serve: " << problem << "\n";
    return core::to_int(core::ExitCode::kRunFailed);
  }
  if (options.announce_fd >= 0) {
    const std::string line = fmt::format("{}\n", server.port());
    [[maybe_unused]] const auto n = ::write(options.announce_fd, line.data(), line.size());
    ::close(options.announce_fd);
  }
  if (!options.quiet) {
    std::cerr << fmt::format(
        "volley serve: listening on {}{} ({} worker(s) per run, io {}; {})\n",
        core::format_host_port(endpoint.address().to_string(), server.port()),
        every_address && endpoint.address().is_v6() ? " (IPv6 and IPv4)" : "",
        settings.default_workers, io_name(settings.io),
        settings.key ? "masters must prove they know the key" : "no key: any master is served");
    if (!default_note.empty()) std::cerr << "volley serve: " << default_note << "\n";
  }
  asio::signal_set signals(context, SIGTERM);
  if (!options.exit_with_parent) signals.add(SIGINT);
  bool interrupted = false;
  // Sessions end promptly after stop() (engines are joined off this thread); should one still be
  // winding down at the deadline, the process exits anyway: an operator's SIGTERM always works.
  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stopped = false;
  std::optional<std::thread> watchdog;
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    interrupted = true;
    watchdog.emplace([&] {
      std::unique_lock lock(stop_mutex);
      if (!stop_cv.wait_for(lock, kStopDeadline, [&] { return stopped; })) {
        static constexpr char kLine[] = "volley serve: sessions did not end in time; exiting\n";
        [[maybe_unused]] const auto n = ::write(2, kLine, sizeof kLine - 1);
        std::_Exit(core::to_int(core::ExitCode::kOk));
      }
    });
    server.stop();
  });
  server.start();
  context.run();
  if (watchdog) {
    {
      std::lock_guard lock(stop_mutex);
      stopped = true;
    }
    stop_cv.notify_one();
    watchdog->join();
  }
  return core::to_int(interrupted ? core::ExitCode::kOk : core::ExitCode::kRunFailed);
}

}  // namespace volley::cli
