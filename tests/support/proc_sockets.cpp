#include "support/proc_sockets.hpp"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

namespace volley::test {
namespace {

/// The "A.B.C.D" of a /proc/net address field ("0200007F:1F90", or its v4-mapped IPv6 form
/// "0000000000000000FFFF00000200007F:1F90"); empty when it is neither.
std::string ipv4_of(const std::string& field) {
  const std::string hex = field.substr(0, field.find(':'));
  std::string v4;
  if (hex.size() == 8) {
    v4 = hex;
  } else if (hex.size() == 32 && hex.substr(16, 8) == "FFFF0000") {
    v4 = hex.substr(24, 8);
  } else {
    return {};
  }
  const auto word = static_cast<std::uint32_t>(std::stoul(v4, nullptr, 16));  // host order
  return fmt::format("{}.{}.{}.{}", word & 0xFFU, (word >> 8U) & 0xFFU, (word >> 16U) & 0xFFU,
                     word >> 24U);
}

}  // namespace

void add_socket_addresses(const std::string& table, SocketAddresses& into) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the column titles
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot;
    std::string local;
    std::string remote;
    if (!(fields >> slot >> local >> remote)) continue;
    if (const auto a = ipv4_of(local); !a.empty()) into.local.insert(a);
    if (const auto a = ipv4_of(remote); !a.empty()) into.remote.insert(a);
  }
}

bool running(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto name_end = stat.rfind(')');  // the state follows the command name, which may hold ')'
  return name_end != std::string::npos && name_end + 2 < stat.size() && stat[name_end + 2] != 'Z';
}

}  // namespace volley::test
