#pragma once
// A TCP connection's state from the kernel (TCP_INFO), for the report's TCP figures.
#include <optional>

#include "volley/stats/tcp_summary.hpp"

namespace volley::transport {

/// TCP_INFO of socket `fd` in the report's units; empty when it is not a TCP socket or the call
/// fails. Fields a kernel too old to give them leaves at 0 (unset for ssthresh and pacing).
/// One getsockopt: microseconds, so it is taken when a strand ends a step, not per operation.
[[nodiscard]] std::optional<stats::TcpReading> read_tcp_info(int fd);

}  // namespace volley::transport
