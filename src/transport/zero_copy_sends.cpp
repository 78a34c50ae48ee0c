#include "volley/transport/zero_copy_sends.hpp"

#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace volley::transport {

boost::system::error_code ZeroCopySends::enable(int fd) {
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on) == 0) return {};
  return {errno, boost::system::system_category()};
}

IoResult ZeroCopySends::send(int fd, std::span<const char> from, std::uint32_t tag) {
  IoResult r;
  ssize_t n = 0;
  do {
    n = ::send(fd, from.data(), from.size(), MSG_ZEROCOPY | MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    r.ec = boost::system::error_code(errno, boost::system::system_category());
    return r;
  }
  r.bytes = static_cast<std::size_t>(n);
  if (n == 0) return r;  // nothing moved: the kernel numbered no send
  ledger_.sent(tag);
  ++unread_sends_;
  return r;
}

bool ZeroCopySends::no_buffers(const IoResult& io) {
  return io.ec && io.ec.value() == ENOBUFS && io.ec.category() == boost::system::system_category();
}

bool ZeroCopySends::read_one(int fd, Range& range) {
  for (;;) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(sock_extended_err) + sizeof(sockaddr_in6))];
    msghdr msg{};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = 0;
    do {
      n = ::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return false;  // EAGAIN: none queued
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      const bool recverr = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                           (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);
      if (!recverr) continue;
      sock_extended_err err{};
      std::memcpy(&err, CMSG_DATA(c), sizeof err);
      if (err.ee_origin != SO_EE_ORIGIN_ZEROCOPY || err.ee_errno != 0) continue;
      range.first = err.ee_info;
      range.last = err.ee_data;
      range.copied = (err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) != 0;
      return true;
    }
    // Something else on the error queue (not a completion): read on.
  }
}

void ZeroCopyLedger::sent(std::uint32_t tag) {
  if (runs_.empty() || runs_.back().tag != tag) runs_.push_back(Run{next_, tag, 0});
  ++next_;
  ++sends_;
}

void ZeroCopyLedger::settle(std::uint32_t first, std::uint32_t last, bool copied,
                            std::vector<ZeroCopyCompleted>& out) {
  if (runs_.empty()) return;
  // Offsets from the oldest owed run's first send, so that numbers that wrapped past 2^32 still
  // compare; a completion of sends already settled falls far beyond `span` and covers nothing.
  const std::uint32_t base = runs_.front().first;
  const auto offset = [base](std::uint32_t number) -> std::uint64_t {
    return static_cast<std::uint32_t>(number - base);
  };
  const std::uint64_t span = offset(next_);
  const std::uint64_t lo = offset(first);
  const std::uint64_t hi = lo + static_cast<std::uint32_t>(last - first) + 1;
  const auto end_of = [&](std::size_t i) {
    return i + 1 < runs_.size() ? offset(runs_[i + 1].first) : span;
  };
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const std::uint64_t from = std::max(offset(runs_[i].first), lo);
    const std::uint64_t to = std::min(end_of(i), hi);
    if (from >= to) continue;
    const std::uint64_t n = to - from;
    runs_[i].settled += n;
    settled_ += n;
    out.push_back(ZeroCopyCompleted{runs_[i].tag, copied ? 0 : n, copied ? n : 0});
  }
  // Drop the runs whose every send has settled; the last one stays (the next send of its tag
  // joins it), begun again at the next send.
  std::size_t done = 0;
  while (done < runs_.size() && runs_[done].settled >= end_of(done) - offset(runs_[done].first)) {
    ++done;
  }
  if (done == runs_.size()) {
    runs_.erase(runs_.begin(), runs_.end() - 1);
    runs_.back().first = next_;
    runs_.back().settled = 0;
  } else {
    runs_.erase(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(done));
  }
}

}  // namespace volley::transport
