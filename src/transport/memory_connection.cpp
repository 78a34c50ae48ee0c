#include "volley/transport/memory_connection.hpp"

#include <algorithm>
#include <cstring>

#include <boost/asio/error.hpp>

namespace volley::transport {

MemoryConnection::MemoryConnection(const boost::asio::any_io_executor& executor, FaultScript script,
                                   std::shared_ptr<FaultTally> tally)
    : script_(script),
      tally_(std::move(tally)),
      ready_(std::make_unique<boost::asio::steady_timer>(executor)) {}

IoResult MemoryConnection::begin_call(std::size_t wanted) {
  const std::uint64_t call = ++tally_->calls;
  if (tally_->closed) return IoResult{0, boost::asio::error::bad_descriptor};
  if (script_.fail_on_call != 0 && call == script_.fail_on_call) return IoResult{0, script_.error};
  if (script_.would_block_every != 0 && call % script_.would_block_every == 0) {
    ++tally_->would_blocks;
    return IoResult{0, boost::asio::error::would_block};
  }
  return IoResult{std::min(wanted, script_.max_per_call), {}};
}

IoResult MemoryConnection::try_read(std::span<char> into) {
  IoResult r = begin_call(into.size());
  if (r.ec) return r;
  const std::uint64_t left = script_.readable_bytes - read_so_far_;
  if (left == 0) return IoResult{0, boost::asio::error::eof};
  r.bytes = static_cast<std::size_t>(std::min<std::uint64_t>(r.bytes, left));
  std::memset(into.data(), 0, r.bytes);
  read_so_far_ += r.bytes;
  tally_->bytes_read += r.bytes;
  return r;
}

ReadAwaitable MemoryConnection::read(std::span<char> into) {
  for (;;) {
    const IoResult r = try_read(into);
    if (!r.would_block()) co_return std::tuple{r.ec, r.bytes};
    auto [ec] = co_await wait(Wait::kReadable);
    if (ec) co_return std::tuple{ec, std::size_t{0}};
  }
}

IoResult MemoryConnection::try_write(std::span<const char> from) {
  IoResult r = begin_call(from.size());
  if (!r.ec) tally_->bytes_written += r.bytes;
  return r;
}

IoResult MemoryConnection::sendfile(int /*fd*/, off_t* offset, std::size_t bytes) {
  IoResult r = begin_call(bytes);
  if (r.ec) return r;
  *offset += static_cast<off_t>(r.bytes);
  tally_->bytes_written += r.bytes;
  return r;
}

WaitAwaitable MemoryConnection::wait(Wait /*what*/) {
  ++tally_->waits;
  // Ready at once, but through the event loop, as a socket's readiness is; or never.
  ready_->expires_at(script_.never_ready ? boost::asio::steady_timer::time_point::max()
                                         : boost::asio::steady_timer::clock_type::now());
  return ready_->async_wait(kWaitToken);
}

void MemoryConnection::cancel() {
  ++tally_->cancels;
  if (ready_) ready_->cancel();
}

void MemoryConnection::close() {
  tally_->closed = true;
  if (ready_) ready_->cancel();
}

}  // namespace volley::transport
