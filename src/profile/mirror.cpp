#include "volley/profile/mirror.hpp"

#include <string>

#include "flowop_specs.hpp"
#include "volley/profile/flowop_hosts.hpp"
#include "volley/profile/flowop_traits.hpp"

namespace volley::profile {

Profile mirror(const Profile& master, std::string_view host) {
  Profile out;
  out.name = master.name;
  out.file = master.file;
  out.location = master.location;
  const FlowopHosts hosts = host.empty() ? FlowopHosts{} : flowop_hosts(master);
  for (std::size_t gi = 0; gi < master.groups.size(); ++gi) {
    const Group& group = master.groups[gi];
    Group g;
    g.name = group.name;
    g.nthreads = group.nthreads;
    g.from_nprocs = group.from_nprocs;
    g.location = group.location;
    bool serves_host = false;
    for (std::size_t ti = 0; ti < group.transactions.size(); ++ti) {
      const Transaction& txn = group.transactions[ti];
      Transaction t;
      t.name = txn.name;
      t.bound = txn.bound;
      // No rate: the slave's strand waits for the master's data, so it already follows the
      // master's pace; a second pacer could only add delay.
      t.location = txn.location;
      for (std::size_t fi = 0; fi < txn.flowops.size(); ++fi) {
        const Flowop& op = txn.flowops[fi];
        // A flowop goes to the host its connection was last opened to (flowop_hosts()).
        const bool to_host = !host.empty() && hosts[gi][ti][fi] == host;
        serves_host = serves_host || to_host;
        const bool off_connection = traits(op.spec).connection == OnConnection::kNone;
        if (!host.empty() && !to_host && !off_connection) continue;
        t.flowops.push_back(Flowop{std::string(traits(traits(kind_of(op)).mirror).name),
                                   detail::mirror_spec(op.spec), op.common, op.location});
      }
      g.transactions.push_back(std::move(t));
    }
    if (!host.empty() && !serves_host) g.nthreads = 0;
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace volley::profile
