#pragma once
// An I/O error is a value (boost::system::error_code) until it is classified here and counted by
// its results::ErrorKind; it never becomes an exception.
#include <boost/system/error_code.hpp>

#include "volley/results/error_kind.hpp"

namespace volley::engine {

/// Maps a system error to its kind. `operation_aborted` is never passed here: the caller knows
/// whether an abort was a deadline (expired), a stop, or a timeout.
results::ErrorKind classify(const boost::system::error_code& ec);

}  // namespace volley::engine
