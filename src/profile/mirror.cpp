#include "volley/profile/mirror.hpp"

#include <map>
#include <string>
#include <type_traits>

namespace volley::profile {
namespace {

/// The slave's counterpart of one master flowop spec and the type name it reports under.
struct Mirrored {
  FlowopSpec spec;
  std::string_view type;
};

std::string_view opposite_type(std::string_view type) {
  if (type == "connect") return "accept";
  if (type == "accept") return "connect";
  if (type == "write") return "read";
  if (type == "read") return "write";
  if (type == "send") return "recv";
  if (type == "recv") return "send";
  return type;
}

Mirrored mirror_spec(const Flowop& op) {
  const std::string_view type = opposite_type(op.type);
  return std::visit(
      [&](const auto& s) -> Mirrored {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConnectOp>) {
          return {AcceptOp{s.connection}, type};
        } else if constexpr (std::is_same_v<T, AcceptOp>) {
          return {ConnectOp{s.connection}, type};
        } else if constexpr (std::is_same_v<T, WriteOp>) {
          // The master's rsize is how much the slave moves per call.
          return {ReadOp{s.size, std::nullopt, s.rsize_bytes}, type};
        } else if constexpr (std::is_same_v<T, ReadOp>) {
          return {WriteOp{s.size, std::nullopt, s.rsize_bytes}, type};
        } else if constexpr (std::is_same_v<T, SendfileOp>) {
          return {RecvFileOp{s.source, 1}, "recvfile"};
        } else if constexpr (std::is_same_v<T, SendfilevOp>) {
          return {RecvFileOp{s.source, s.nfiles}, "recvfile"};
        } else {
          // disconnect, think and nop are their own mirror (RecvFileOp never occurs on a master).
          return {s, type};
        }
      },
      op.spec);
}

const ConnectionOptions* opened_connection(const Flowop& op) {
  if (const auto* c = std::get_if<ConnectOp>(&op.spec)) return &c->connection;
  if (const auto* a = std::get_if<AcceptOp>(&op.spec)) return &a->connection;
  return nullptr;
}

bool off_connection(const Flowop& op) {
  return std::holds_alternative<ThinkOp>(op.spec) || std::holds_alternative<NopOp>(op.spec);
}

}  // namespace

Profile mirror(const Profile& master, std::string_view host) {
  Profile out;
  out.name = master.name;
  out.file = master.file;
  out.location = master.location;
  for (const Group& group : master.groups) {
    Group g;
    g.name = group.name;
    g.nthreads = group.nthreads;
    g.from_nprocs = group.from_nprocs;
    g.location = group.location;
    // Which host each connection of the strand currently goes to, in the order flowops run.
    std::map<std::uint32_t, std::string> host_of;
    bool serves_host = false;
    for (const Transaction& txn : group.transactions) {
      Transaction t;
      t.name = txn.name;
      t.bound = txn.bound;
      // No rate: the slave's strand waits for the master's data, so it already follows the
      // master's pace; a second pacer could only add delay.
      t.location = txn.location;
      for (const Flowop& op : txn.flowops) {
        bool keep = host.empty() || off_connection(op);
        if (const ConnectionOptions* conn = opened_connection(op)) {
          host_of[op.common.connection] = conn->remotehost;
          if (conn->remotehost == host) serves_host = true;
        }
        if (!keep) {
          auto it = host_of.find(op.common.connection);
          keep = it != host_of.end() && it->second == host;
        }
        if (!keep) continue;
        Mirrored m = mirror_spec(op);
        t.flowops.push_back(Flowop{std::string(m.type), std::move(m.spec), op.common, op.location});
      }
      g.transactions.push_back(std::move(t));
    }
    if (!host.empty() && !serves_host) g.nthreads = 0;
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace volley::profile
