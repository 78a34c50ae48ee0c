#include "volley/profile/connections.hpp"

namespace volley::profile {

std::vector<ConnectionSite> connection_sites(const Profile& profile) {
  std::vector<ConnectionSite> sites;
  for (std::size_t g = 0; g < profile.groups.size(); ++g) {
    const Group& group = profile.groups[g];
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const Transaction& txn = group.transactions[t];
      for (std::size_t f = 0; f < txn.flowops.size(); ++f) {
        const Flowop& op = txn.flowops[f];
        const OnConnection role = traits(op.spec).connection;
        const ConnectionOptions* c = connection_options(op.spec);
        if (!opens(role) || c == nullptr) continue;
        sites.push_back(ConnectionSite{g, t, f, op.common.connection, role, c->protocol, c->port,
                                       c->remotehost});
      }
    }
  }
  return sites;
}

}  // namespace volley::profile
