#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <fmt/format.h>

#include "volley/cli/commands.hpp"
#include "volley/control/slave_server.hpp"
#include "volley/core/exit_code.hpp"

namespace volley::cli {

namespace asio = boost::asio;

namespace {

/// "ADDR:PORT", "[v6]:PORT" or ":PORT"/"PORT" (all addresses).
std::optional<asio::ip::tcp::endpoint> parse_listen(const std::string& text, std::string& error) {
  std::string host;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      error = fmt::format("--listen '{}': expected [IPv6]:PORT", text);
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else {
    port = text;
  }
  boost::system::error_code ec;
  const auto address = host.empty() ? asio::ip::address(asio::ip::address_v4::any())
                                    : asio::ip::make_address(host, ec);
  char* end = nullptr;
  const unsigned long number = std::strtoul(port.c_str(), &end, 10);
  if (ec || port.empty() || *end != '\0' || number > 65535) {
    error = fmt::format("--listen '{}': expected ADDRESS:PORT with a numeric address, e.g. "
                        "0.0.0.0:20000 or [::1]:20000",
                        text);
    return std::nullopt;
  }
  return asio::ip::tcp::endpoint(address, static_cast<std::uint16_t>(number));
}

}  // namespace

int serve_command(const ServeOptions& options) {
  if (options.exit_with_parent) {
    // The master that started us for --local may die without stopping us: go with it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() == 1) return core::to_int(core::ExitCode::kInterrupted);
  }
  std::string error;
  const auto endpoint = parse_listen(options.listen, error);
  if (!endpoint) {
    std::cerr << "volley serve: " << error << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  raise_file_limit();
  asio::io_context context(1);
  control::SlaveSettings settings;
  settings.default_workers = default_workers(options.workers);
  if (!options.quiet) {
    settings.log = [](const std::string& line) { std::cerr << "volley serve: " << line << std::endl; };
  }
  control::SlaveServer server(context, settings);
  if (auto problem = server.listen(*endpoint); !problem.empty()) {
    std::cerr << "volley serve: " << problem << "\n";
    return core::to_int(core::ExitCode::kRunFailed);
  }
  if (options.announce_fd >= 0) {
    const std::string line = fmt::format("{}\n", server.port());
    [[maybe_unused]] const auto n = ::write(options.announce_fd, line.data(), line.size());
    ::close(options.announce_fd);
  }
  if (!options.quiet) {
    std::cerr << fmt::format("volley serve: listening on {}:{} ({} worker(s) per run)\n",
                             endpoint->address().to_string(), server.port(), settings.default_workers);
  }
  asio::signal_set signals(context, SIGINT, SIGTERM);
  bool interrupted = false;
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    interrupted = true;
    server.stop();
  });
  server.start();
  context.run();
  return core::to_int(interrupted ? core::ExitCode::kOk : core::ExitCode::kRunFailed);
}

}  // namespace volley::cli
