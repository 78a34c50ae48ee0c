#include "volley/profile/flowop_hosts.hpp"

#include <map>

#include "volley/profile/connections.hpp"
#include "volley/profile/flowop_traits.hpp"

namespace volley::profile {

FlowopHosts flowop_hosts(const Profile& profile) {
  const std::vector<ConnectionSite> sites = connection_sites(profile);
  auto site = sites.begin();
  FlowopHosts hosts;
  for (std::size_t g = 0; g < profile.groups.size(); ++g) {
    // Which host each connection of the strand currently goes to, in the order flowops run.
    std::map<std::uint32_t, std::string> host_of;
    auto& group_hosts = hosts.emplace_back();
    const auto& txns = profile.groups[g].transactions;
    for (std::size_t t = 0; t < txns.size(); ++t) {
      auto& txn_hosts = group_hosts.emplace_back();
      for (std::size_t f = 0; f < txns[t].flowops.size(); ++f) {
        const Flowop& op = txns[t].flowops[f];
        if (site != sites.end() && site->group == g && site->transaction == t &&
            site->flowop == f) {
          host_of[site->id] = site->remotehost;
          ++site;
        }
        const bool off_connection = traits(op.spec).connection == OnConnection::kNone;
        const auto it = host_of.find(op.common.connection);
        txn_hosts.push_back(off_connection || it == host_of.end() ? std::string() : it->second);
      }
    }
  }
  return hosts;
}

}  // namespace volley::profile
