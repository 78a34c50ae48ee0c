#pragma once
// Any data connection a strand holds: one concrete type per protocol, chosen at connect or accept
// time, reached through std::visit, so the hot path's dispatch is a jump, not a virtual call.
// Adding a protocol: a type with the same surface (see TcpConnection) and an alternative here.
#include <variant>

#include "volley/transport/memory_connection.hpp"
#include "volley/transport/tcp_connection.hpp"

namespace volley::transport {

using AnyConnection = std::variant<TcpConnection, MemoryConnection>;

}  // namespace volley::transport
