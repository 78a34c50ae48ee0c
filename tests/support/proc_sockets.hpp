#pragma once
// The IPv4 addresses a network namespace's sockets are bound and connected to, read from /proc
// (/proc/net/udp of the test's own namespace, /proc/PID/net/tcp of a process's): how a test sees
// which source address a connection really used.
#include <sys/types.h>

#include <set>
#include <string>

namespace volley::test {

struct SocketAddresses {
  std::set<std::string> local;   ///< "A.B.C.D" the sockets are bound to
  std::set<std::string> remote;  ///< "A.B.C.D" the sockets are connected to
};

/// Adds the IPv4 addresses (v4-mapped ones of IPv6 sockets too) of every socket in `table`, a
/// /proc/.../net/{tcp,tcp6,udp,udp6} file; a missing file adds nothing.
void add_socket_addresses(const std::string& table, SocketAddresses& into);

/// Whether process `pid` is still running (a zombie, exited but not yet waited for, is not).
bool running(pid_t pid);

}  // namespace volley::test
