#pragma once
// Network namespaces for the multi-host tests (tests/netns): made under names unique to the test
// process, joined by whatever `ip` commands the test lists (veth pairs, addresses, links up), and
// deleted by the destructor whatever happens. Programs run inside one with `ip netns exec`, which
// execs them: the PID a test holds is the program's own. Needs root (CAP_NET_ADMIN) and `ip`.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace volley::test {

/// Where `ip` (iproute2) is; "" when it is not installed.
std::string ip_binary();

/// Why network-namespace tests cannot run here (not root, no `ip`); "" when they can.
std::string netns_unavailable();

/// Runs `ip ARGS...` (at most 20 s); "" when it succeeded, else what went wrong.
std::string ip(const std::vector<std::string>& args);

/// Where `nft` (nftables) is; "" when it is not installed.
std::string nft_binary();

/// Runs `nft ARGS...` inside namespace `ns` (at most 20 s); "" when it succeeded, else what went
/// wrong.
std::string nft_in(const std::string& ns, const std::vector<std::string>& args);

/// The argument vector that runs `command` inside namespace `ns`.
std::vector<std::string> netns_exec(const std::string& ns, const std::vector<std::string>& command);

/// Runs `f` on a thread of ours that joined namespace `ns` (a network namespace is per thread;
/// a socket stays in the namespace it was made in, whoever holds it later); false when the thread
/// could not join it (then `f` did not run).
bool in_namespace(const std::string& ns, const std::function<void()>& f);

/// Whether a TCP connect from inside namespace `ns` to address:port (IPv4, or IPv6 such as
/// "2001:2::2") succeeds now. A thread of ours joins the namespace for the attempt: a network
/// namespace is per thread.
bool reachable_from(const std::string& ns, const std::string& address, std::uint16_t port);

/// The `ip` commands that join namespaces `m` and `s` by a veth pair ("to-s" in `m`, "to-m" in
/// `s`), give its ends the addresses `m_address` and `s_address` (CIDR, e.g. "198.18.4.1/24")
/// and set both ends and both loopbacks up: a master's host and a slave's.
std::vector<std::vector<std::string>> veth_pair(const std::string& m, const std::string& s,
                                                const std::string& m_address,
                                                const std::string& s_address);

class Namespaces {
 public:
  /// One name per prefix, PREFIX-PID-N (unique on the host); nothing is made yet.
  explicit Namespaces(const std::vector<std::string>& prefixes);
  /// Deletes every namespace create() made (their veth ends and processes' sockets go with them).
  ~Namespaces();
  Namespaces(const Namespaces&) = delete;
  Namespaces& operator=(const Namespaces&) = delete;

  /// Makes the namespaces, then runs each `ip` command of `setup` in order; "" or the first
  /// failure (a test skips on it: the host cannot make namespaces).
  std::string create(const std::vector<std::vector<std::string>>& setup = {});
  /// The name made for the i-th prefix.
  [[nodiscard]] const std::string& operator[](std::size_t i) const { return names_.at(i); }

 private:
  std::vector<std::string> names_;
  std::size_t created_ = 0;
};

}  // namespace volley::test
