#include "support/netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "support/net.hpp"
#include "support/process.hpp"

namespace volley::test {

std::string ip_binary() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return {};
}

std::string netns_unavailable() {
  if (::geteuid() != 0) return "network namespace tests need root (CAP_NET_ADMIN)";
  if (ip_binary().empty()) return "network namespace tests need the `ip` command (iproute2)";
  return {};
}

namespace {
/// Runs `full` (at most 20 s); "" when it succeeded, else what went wrong, naming `shown ARGS`.
std::string run_checked(const std::vector<std::string>& full, const std::string& shown,
                        const std::vector<std::string>& args) {
  Process p(full);
  const ProcessResult r = p.wait(std::chrono::seconds(20));
  if (r.exit_code == 0) return {};
  std::string command = shown;
  for (const auto& a : args) command += " " + a;
  return fmt::format("`{}` failed (exit {}): {}", command, r.exit_code, r.err);
}
}  // namespace

std::string ip(const std::vector<std::string>& args) {
  std::vector<std::string> full{ip_binary()};
  full.insert(full.end(), args.begin(), args.end());
  return run_checked(full, "ip", args);
}

std::string nft_binary() {
  for (const char* p : {"/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return {};
}

std::string nft_in(const std::string& ns, const std::vector<std::string>& args) {
  std::vector<std::string> command{nft_binary()};
  command.insert(command.end(), args.begin(), args.end());
  return run_checked(netns_exec(ns, command), "nft", args);
}

std::vector<std::string> netns_exec(const std::string& ns,
                                    const std::vector<std::string>& command) {
  std::vector<std::string> full{ip_binary(), "netns", "exec", ns};
  full.insert(full.end(), command.begin(), command.end());
  return full;
}

bool in_namespace(const std::string& ns, const std::function<void()>& f) {
  bool entered = false;
  std::thread([&] {
    const int nsfd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) return;
    entered = ::setns(nsfd, CLONE_NEWNET) == 0;
    ::close(nsfd);
    if (entered) f();
  }).join();
  return entered;
}

bool reachable_from(const std::string& ns, const std::string& address, std::uint16_t port) {
  bool ok = false;
  in_namespace(ns, [&] { ok = accepts_connections(address, port); });
  return ok;
}

std::vector<std::vector<std::string>> veth_pair(const std::string& m, const std::string& s,
                                                const std::string& m_address,
                                                const std::string& s_address) {
  return {
      {"-n", m, "link", "add", "name", "to-s", "type", "veth", "peer", "name", "to-m", "netns", s},
      {"-n", m, "addr", "add", m_address, "dev", "to-s"},
      {"-n", s, "addr", "add", s_address, "dev", "to-m"},
      {"-n", m, "link", "set", "dev", "lo", "up"},
      {"-n", m, "link", "set", "dev", "to-s", "up"},
      {"-n", s, "link", "set", "dev", "lo", "up"},
      {"-n", s, "link", "set", "dev", "to-m", "up"}};
}

Namespaces::Namespaces(const std::vector<std::string>& prefixes) {
  static std::atomic<int> counter{0};
  for (const auto& prefix : prefixes) {
    names_.push_back(fmt::format("{}-{}-{}", prefix, ::getpid(), counter++));
  }
}

Namespaces::~Namespaces() {
  for (std::size_t i = 0; i < created_; ++i) ip({"netns", "del", names_[i]});
}

std::string Namespaces::create(const std::vector<std::vector<std::string>>& setup) {
  for (; created_ < names_.size(); ++created_) {
    if (auto problem = ip({"netns", "add", names_[created_]}); !problem.empty()) return problem;
  }
  for (const auto& step : setup) {
    if (auto problem = ip(step); !problem.empty()) return problem;
  }
  return {};
}

}  // namespace volley::test
