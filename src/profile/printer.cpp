#include "volley/profile/printer.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "volley/core/units.hpp"

namespace volley::profile {
namespace {

using core::format_bytes;
using core::format_duration;

std::string size_text(const SizeSpec& s) {
  if (!s.is_random()) return format_bytes(s.min_bytes);
  return fmt::format("rand({}, {})", format_bytes(s.min_bytes), format_bytes(s.max_bytes));
}

std::string connection_text(const ConnectionOptions& c) {
  std::string out = fmt::format(" remotehost={} protocol={}", c.remotehost,
                                c.protocol == Protocol::kUdp ? "udp" : "tcp");
  if (c.port) out += fmt::format(" port={}", *c.port);
  if (c.window_bytes) out += fmt::format(" wndsz={}", format_bytes(*c.window_bytes));
  if (c.tcp_nodelay) out += " tcp_nodelay";
  if (!c.congestion_control.empty()) out += fmt::format(" cc={}", c.congestion_control);
  if (c.source_addresses.size() == 1) out += fmt::format(" srcaddr={}", c.source_addresses[0]);
  if (c.source_addresses.size() > 1) {
    out += fmt::format(" srcaddr={}-{}", c.source_addresses.front(), c.source_addresses.back());
  }
  return out;
}

std::string source_text(const FileSource& s) {
  return fmt::format(" {}={}", s.is_directory ? "dir" : "file", s.path);
}

std::string optional_bytes(std::string_view name, const std::optional<std::uint64_t>& v) {
  return v ? fmt::format(" {}={}", name, format_bytes(*v)) : std::string();
}

std::string spec_text(const FlowopSpec& spec) {
  return std::visit(
      [](const auto& s) -> std::string {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConnectOp> || std::is_same_v<T, AcceptOp>) {
          return connection_text(s.connection);
        } else if constexpr (std::is_same_v<T, WriteOp> || std::is_same_v<T, ReadOp>) {
          return fmt::format(" size={}{}{}", size_text(s.size),
                             optional_bytes("rsize", s.rsize_bytes),
                             optional_bytes("chunk", s.chunk_bytes));
        } else if constexpr (std::is_same_v<T, SendfileOp>) {
          return source_text(s.source) + optional_bytes("size", s.chunk_bytes);
        } else if constexpr (std::is_same_v<T, SendfilevOp>) {
          return source_text(s.source) + fmt::format(" nfiles={}", s.nfiles) +
                 optional_bytes("size", s.chunk_bytes);
        } else if constexpr (std::is_same_v<T, RecvFileOp>) {
          return source_text(s.source) + fmt::format(" nfiles={}", s.nfiles);
        } else if constexpr (std::is_same_v<T, ThinkOp>) {
          return fmt::format(" duration={} {}", format_duration(s.duration),
                             s.busy ? "busy" : "idle");
        } else {
          return {};
        }
      },
      spec);
}

std::string common_text(const FlowopCommon& c) {
  std::string out;
  if (c.count != 1) out += fmt::format(" count={}", c.count);
  if (c.connection != 0) out += fmt::format(" conn={}", c.connection);
  if (c.canfail) out += " canfail";
  if (c.timeout) out += fmt::format(" timeout={}", format_duration(*c.timeout));
  return out;
}

std::string quoted_name(const std::string& name) {
  return name.empty() ? std::string() : fmt::format(" \"{}\"", name);
}

}  // namespace

std::string to_text(const Profile& profile) {
  std::string out = fmt::format("profile{}", quoted_name(profile.name));
  if (!profile.file.empty()) out += fmt::format(" ({})", profile.file);
  out += '\n';
  for (std::size_t g = 0; g < profile.groups.size(); ++g) {
    const Group& group = profile.groups[g];
    out += fmt::format("  group {}{}: {}={}\n", g + 1, quoted_name(group.name),
                       group.from_nprocs ? "nprocs" : "nthreads", group.nthreads);
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const Transaction& txn = group.transactions[t];
      std::string bound;
      if (const auto* it = std::get_if<Iterations>(&txn.bound)) {
        bound = fmt::format("iterations={}", it->count);
      } else {
        bound = fmt::format("duration={}", format_duration(std::get<Duration>(txn.bound).length));
      }
      if (txn.rate_per_s) bound += fmt::format(" rate={}/s", *txn.rate_per_s);
      out += fmt::format("    transaction {}{}: {}\n", t + 1, quoted_name(txn.name), bound);
      for (const Flowop& op : txn.flowops) {
        out += fmt::format("      {}{}{}\n", op.type, spec_text(op.spec), common_text(op.common));
      }
    }
  }
  return out;
}

}  // namespace volley::profile
