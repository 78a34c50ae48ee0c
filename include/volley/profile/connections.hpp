#pragma once
// Every connect and accept of a profile, in the order strands run them: the one walk that finds
// a profile's connections (slaves to reach, listeners to open, descriptors to budget, UDP).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "volley/profile/flowop_traits.hpp"
#include "volley/profile/model.hpp"

namespace volley::profile {

/// One flowop that opens a connection. Values, not references: an engine::Plan keeps them.
struct ConnectionSite {
  std::size_t group = 0;                      ///< index into Profile::groups
  std::size_t transaction = 0;                ///< index into Group::transactions
  std::size_t flowop = 0;                     ///< index into Transaction::flowops
  std::uint32_t id = 0;                       ///< conn=N; 0 is the strand's anonymous connection
  OnConnection opens = OnConnection::kDials;  ///< kDials (connect) or kAccepts (accept)
  Protocol protocol = Protocol::kTcp;
  std::optional<std::uint16_t> port;
  std::string remotehost;  ///< as written, variables expanded
  friend bool operator==(const ConnectionSite&, const ConnectionSite&) = default;
};

/// The flowops of `profile` that open connections, by group, transaction and flowop.
[[nodiscard]] std::vector<ConnectionSite> connection_sites(const Profile& profile);

}  // namespace volley::profile
