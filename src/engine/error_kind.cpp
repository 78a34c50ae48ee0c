#include "volley/engine/error_kind.hpp"

#include <boost/asio/error.hpp>

namespace volley::engine {

results::ErrorKind classify(const boost::system::error_code& ec) {
  namespace e = boost::asio::error;
  using results::ErrorKind;
  if (ec == e::connection_refused) return ErrorKind::kRefused;
  if (ec == e::connection_reset || ec == e::connection_aborted) return ErrorKind::kReset;
  if (ec == e::eof || ec == e::broken_pipe || ec == e::shut_down) return ErrorKind::kPeerClosed;
  if (ec == e::timed_out) return ErrorKind::kTimedOut;
  if (ec == e::not_connected || ec == e::bad_descriptor) return ErrorKind::kNotConnected;
  if (ec == boost::system::errc::address_not_available) return ErrorKind::kAddrUnavailable;
  if (ec == e::host_unreachable || ec == e::network_unreachable || ec == e::network_down) {
    return ErrorKind::kUnreachable;
  }
  return ErrorKind::kOther;
}

}  // namespace volley::engine
