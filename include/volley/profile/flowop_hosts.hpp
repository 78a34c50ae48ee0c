#pragma once
// Which slave each of the master's flowops talks to, by the rule profile::mirror() uses to split a
// profile between slaves: a flowop goes to the remotehost its connection was last opened to;
// think and nop are off any connection. The report uses it to compare each slave with its own
// share of the master's traffic.
#include <string>
#include <vector>

#include "volley/profile/model.hpp"

namespace volley::profile {

/// hosts[group][transaction][flowop]: the remotehost (as written) of that flowop's connection,
/// or "" for a flowop on no connection (think, nop) or on a connection never opened.
using FlowopHosts = std::vector<std::vector<std::vector<std::string>>>;

[[nodiscard]] FlowopHosts flowop_hosts(const Profile& profile);

}  // namespace volley::profile
