// Connections that hold the slave's ports and say nothing, or half a frame: silent and
// half-open control connections from the master's own address (beyond the address's 64 places
// each replaces an older one at once, the rest are closed at the hello deadline), 500
// connections that each announce a 16 MiB frame before the hello (refused at 4 KiB: memory must
// not grow with them), and silent or half-sent data connections on a session's data port
// (closed when the session ends). Meanwhile real masters are served; afterwards the slave is
// back to its baseline.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

#include "fault_suite.hpp"
#include "support/control_client.hpp"

namespace volley::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Many clients at once; each closed with the vector.
using Clients = std::vector<std::unique_ptr<ControlClient>>;

TEST(Faults, SilentAndHalfOpenControlConnectionsAreClosedAtTheHelloDeadline) {
  BaselinedSlave slave({"--hello-timeout", "1s"});
  Clients held;
  const std::size_t silent = 300, half_open = 100;
  for (std::size_t i = 0; i < silent + half_open; ++i) {
    held.push_back(std::make_unique<ControlClient>(slave.serve().port()));
    ASSERT_TRUE(held.back()->connected()) << i;
    if (i >= silent) {
      (void)held.back()->send_raw(std::string("\x00\x00", 2));  // half a length, then EOF
      held.back()->shutdown_write();
    }
  }
  // They hold no session slot a real master needs, nor its address's places for hellos: a
  // master replaces the oldest of them.
  slave.expect_serves("with 400 silent connections");
  for (std::size_t i = 0; i < held.size(); ++i) {
    EXPECT_TRUE(
        held[i]->closed_within(std::chrono::milliseconds(static_cast<int>(10'000 * kSlowdown))))
        << "connection " << i << " still open after the hello deadline";
  }
  held.clear();
  slave.expect_back_to_baseline("after silent control connections");
  slave.expect_serves("after silent control connections");
  fault_figure("idle_control_connections_held", std::to_string(silent + half_open));
  fault_figure("idle_control_worst_ms_to_baseline", std::to_string(slave.worst().count()));
  slave.expect_clean_exit();
}

TEST(Faults, FiveHundredAnnounced16MiBFramesCostNoMemory) {
  BaselinedSlave slave;
  const std::size_t connections = 500;
  PeakMemory peak(slave.pid());
  Clients held;
  for (std::size_t i = 0; i < connections; ++i) {
    held.push_back(std::make_unique<ControlClient>(slave.serve().port()));
    ASSERT_TRUE(held.back()->connected()) << i;
    ASSERT_TRUE(held.back()->send_raw(std::string("\x01\x00\x00\x00", 4))) << i;  // 16 MiB
  }
  std::size_t refused = 0;
  for (auto& c : held) {
    const auto error = c->receive_type("error", 10s);
    if (error && error->value("message", "").find("4096") != std::string::npos) ++refused;
  }
  const std::uint64_t peak_kib = peak.stop();
  EXPECT_EQ(refused, connections) << "each announcement is refused, naming the 4096-byte limit";
  // 500 x 16 MiB would be 8 GiB; the slave must not allocate what a stranger announces.
  const std::uint64_t growth_kib =
      peak_kib > slave.baseline().rss_kib ? peak_kib - slave.baseline().rss_kib : 0;
  EXPECT_LT(growth_kib, kRssSlackKib + 64 * 1024) << "peak " << peak_kib << " KiB";
  held.clear();
  slave.expect_back_to_baseline("after 500 announced 16 MiB frames");
  slave.expect_serves("after 500 announced 16 MiB frames");
  fault_figure("announced_16mib_connections", std::to_string(connections));
  fault_figure("announced_16mib_peak_rss_kib", std::to_string(peak_kib));
  fault_figure("announced_16mib_baseline_rss_kib", std::to_string(slave.baseline().rss_kib));
  slave.expect_clean_exit();
}

int connect_raw(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// True when the peer closes `fd` within `limit` (anything it sends is skipped).
bool peer_closes(int fd, std::chrono::milliseconds limit) {
  ControlClient c(ControlClient::Adopt{fd});
  return c.closed_within(limit);
}

TEST(Faults, SilentDataConnectionsAreClosedWhenTheSessionEnds) {
  BaselinedSlave slave;
  std::vector<int> data;
  std::size_t held = 0;
  {
    ControlClient master(slave.serve().port());
    ASSERT_TRUE(master.greet());
    ASSERT_TRUE(master.send(load_message(pingpong("4", "20s"))));
    const auto loaded = master.receive_type("loaded");
    ASSERT_TRUE(loaded);
    const std::uint16_t port = negotiated_port(*loaded);
    ASSERT_NE(port, 0);
    ASSERT_TRUE(master.send(control_message("start", {{"master_port", 1}})));
    ASSERT_TRUE(master.send(control_message("proceed", {{"step", 0}})));
    for (std::size_t i = 0; i < 200; ++i) {
      const int fd = connect_raw(port);
      ASSERT_GE(fd, 0) << i;
      if (i % 4 == 1) (void)::send(fd, "VLY1\0\0", 6, MSG_NOSIGNAL);  // half a header
      if (i % 4 == 2) ::shutdown(fd, SHUT_WR);                        // half-open, nothing sent
      data.push_back(fd);
    }
    held = data.size();
    // Meanwhile another master is served.
    slave.expect_serves("with 200 silent data connections");
  }  // the master goes away: its session and every pending data socket end
  for (std::size_t i = 0; i < data.size(); ++i) {
    EXPECT_TRUE(
        peer_closes(data[i], std::chrono::milliseconds(static_cast<int>(10'000 * kSlowdown))))
        << "data connection " << i << " still open after its session ended";
  }
  slave.expect_back_to_baseline("after silent data connections");
  slave.expect_serves("after silent data connections");
  fault_figure("idle_data_connections_held", std::to_string(held));
  fault_figure("idle_data_worst_ms_to_baseline", std::to_string(slave.worst().count()));
  slave.expect_clean_exit();
}

}  // namespace
}  // namespace volley::test
