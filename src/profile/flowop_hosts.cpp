#include "volley/profile/flowop_hosts.hpp"

#include <map>

namespace volley::profile {

FlowopHosts flowop_hosts(const Profile& profile) {
  FlowopHosts hosts;
  for (const Group& group : profile.groups) {
    // Which host each connection of the strand currently goes to, in the order flowops run (as
    // in mirror()).
    std::map<std::uint32_t, std::string> host_of;
    auto& group_hosts = hosts.emplace_back();
    for (const Transaction& txn : group.transactions) {
      auto& txn_hosts = group_hosts.emplace_back();
      for (const Flowop& op : txn.flowops) {
        if (const auto* c = std::get_if<ConnectOp>(&op.spec)) {
          host_of[op.common.connection] = c->connection.remotehost;
        } else if (const auto* a = std::get_if<AcceptOp>(&op.spec)) {
          host_of[op.common.connection] = a->connection.remotehost;
        }
        const bool off_connection =
            std::holds_alternative<ThinkOp>(op.spec) || std::holds_alternative<NopOp>(op.spec);
        const auto it = host_of.find(op.common.connection);
        txn_hosts.push_back(off_connection || it == host_of.end() ? std::string() : it->second);
      }
    }
  }
  return hosts;
}

}  // namespace volley::profile
