#include "volley/transport/closed_at_header.hpp"

// linux/tcp.h, not netinet/tcp.h: glibc's tcp_info lacks these counts (Linux 4.1, 4.6).
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

#include "volley/transport/connection_header.hpp"

namespace volley::transport {

bool closed_at_header(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return false;
  if (size < offsetof(tcp_info, tcpi_data_segs_in) + sizeof info.tcpi_data_segs_in) return false;
  // Segments with data, not bytes, from the peer: its FIN counts one byte. Bytes acknowledged are
  // in sequence numbers: our SYN counts one.
  return info.tcpi_data_segs_in == 0 && info.tcpi_bytes_acked <= kConnectionHeaderBytes + 1;
}

}  // namespace volley::transport
