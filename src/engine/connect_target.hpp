#pragma once
// Where a connect flowop goes, as the strand's script found it for the protocol's executor.
#include <cstdint>

#include <boost/asio/ip/address.hpp>

#include "volley/transport/connection_header.hpp"

namespace volley::engine {

struct HostTarget;

struct ConnectTarget {
  const HostTarget* host = nullptr;  ///< an entry of the engine's targets, or its peer
  boost::asio::ip::address address;
  std::uint16_t port = 0;
  transport::ConnectionHeader who;  ///< the header the connection carries (its token set)
};

}  // namespace volley::engine
