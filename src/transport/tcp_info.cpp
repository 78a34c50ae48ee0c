#include "volley/transport/tcp_info.hpp"

// linux/tcp.h, not netinet/tcp.h: glibc's tcp_info lacks the delivery rate, the chrono counts
// and the rest added since Linux 4.1.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace volley::transport {

namespace {

/// Whether the kernel filled `field` (a kernel older than the field returns a shorter struct).
#define VOLLEY_HAS(field) (size >= offsetof(tcp_info, field) + sizeof(info.field))

/// The kernel's "no threshold yet" (TCP_INFINITE_SSTHRESH).
constexpr __u32 kInfiniteSsthresh = 0x7fffffff;

/// Socket states (include/net/tcp_states.h) of a socket that is not, or no longer, a connection.
enum KernelTcpState : __u8 { kSynSent = 2, kSynRecv = 3, kClose = 7, kListen = 10 };

}  // namespace

std::optional<stats::TcpReading> read_tcp_info(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return std::nullopt;
  if (!VOLLEY_HAS(tcpi_total_retrans)) return std::nullopt;
  switch (info.tcpi_state) {
    case kSynSent:
    case kSynRecv:
    case kClose:
    case kListen: return std::nullopt;
    default: break;
  }
  stats::TcpReading r;
  r.rtt_us = info.tcpi_rtt;
  r.rttvar_us = info.tcpi_rttvar;
  r.cwnd = info.tcpi_snd_cwnd;
  if (info.tcpi_snd_ssthresh < kInfiniteSsthresh) r.ssthresh = info.tcpi_snd_ssthresh;
  r.snd_mss = info.tcpi_snd_mss;
  r.rcv_mss = info.tcpi_rcv_mss;
  r.rcv_space = info.tcpi_rcv_space;
  r.reordering = info.tcpi_reordering;
  r.retransmits = info.tcpi_total_retrans;
  r.lost = info.tcpi_lost;
  if (VOLLEY_HAS(tcpi_pacing_rate) && info.tcpi_pacing_rate != ~__u64{0}) {
    r.pacing_rate = info.tcpi_pacing_rate;
  }
  if (VOLLEY_HAS(tcpi_segs_out)) r.segs_out = info.tcpi_segs_out;
  if (VOLLEY_HAS(tcpi_min_rtt)) r.min_rtt_us = info.tcpi_min_rtt;
  if (VOLLEY_HAS(tcpi_delivery_rate)) r.delivery_rate = info.tcpi_delivery_rate;
  if (VOLLEY_HAS(tcpi_sndbuf_limited)) {
    r.busy_us = info.tcpi_busy_time;
    r.rwnd_limited_us = info.tcpi_rwnd_limited;
    r.sndbuf_limited_us = info.tcpi_sndbuf_limited;
  }
  return r;
}

#undef VOLLEY_HAS

}  // namespace volley::transport
