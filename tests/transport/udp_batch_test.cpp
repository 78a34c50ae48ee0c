// Many datagrams per system call (udp_batch.hpp) on a connected loopback pair: a batch sends every
// datagram it holds, each with its own header, in order; with a segment size the kernel cuts the
// super-buffers back into those same datagrams for a receiver without UDP_GRO, and hands them
// whole to one with it, whose reads cut them back (and hold what a read did not take). Lengths
// and counts are exact, also for a datagram longer than its slot and a super-buffer whose last
// datagram is short.
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <gtest/gtest.h>

#include "volley/transport/udp_batch.hpp"
#include "volley/transport/udp_connection.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

/// A connected loopback pair: `ours` (a UdpConnection, non-blocking, out of the reactor) and
/// `peer` (a plain non-blocking socket).
struct BatchPair {
  asio::io_context context;
  std::optional<UdpConnection> ours;
  udp::socket peer{context};

  BatchPair() {
    const udp::endpoint any(asio::ip::make_address("127.0.0.1"), 0);
    peer.open(udp::v4());
    peer.bind(any);
    udp::socket socket(context);
    socket.open(udp::v4());
    socket.bind(any);
    // Room for every datagram a test sends before it reads (loopback drops what does not fit).
    socket.set_option(asio::socket_base::receive_buffer_size(4 << 20));
    peer.set_option(asio::socket_base::receive_buffer_size(4 << 20));
    socket.connect(peer.local_endpoint());
    peer.connect(socket.local_endpoint());
    socket.non_blocking(true);
    peer.non_blocking(true);
    ours.emplace(std::move(socket));
    EXPECT_FALSE(ours->leave_reactor());
  }
};

DatagramHeader header_of(std::uint64_t seq) { return DatagramHeader{7, 1, seq, 1000 + seq}; }

/// The sequence number in a datagram's first bytes.
std::uint64_t seq_in(std::span<const char> datagram) {
  const auto h = decode_datagram_header(datagram);
  EXPECT_TRUE(h.has_value());
  return h ? h->seq : ~std::uint64_t{0};
}

/// A batch of `n` datagrams of `size` bytes, seq 0..n-1, cut by `segment` (0: none), laid out in
/// `room` one after the other, or `apart` bytes apart.
void fill(SendBatch& batch, std::size_t n, std::size_t size, std::size_t segment,
          std::vector<char>& room, std::size_t apart = 0) {
  batch.clear(segment);
  room.assign(n * (size + apart), 'b');
  for (std::size_t i = 0; i < n; ++i) {
    const std::span<char> datagram(room.data() + i * (size + apart), size);
    encode(header_of(i), datagram);
    batch.add(datagram);
  }
}

/// What the peer (no UDP_GRO) receives: each datagram's seq and length.
std::vector<std::pair<std::uint64_t, std::size_t>> peer_receives(BatchPair& p) {
  std::vector<std::pair<std::uint64_t, std::size_t>> got;
  std::vector<char> in(70000);
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = p.peer.receive(asio::buffer(in), 0, ec);
    if (ec) break;
    got.emplace_back(seq_in(std::span<const char>(in.data(), n)), n);
  }
  return got;
}

TEST(UdpBatch, SuperBuffersHoldAsManyDatagramsAsFitUpToTheKernelsMost) {
  EXPECT_EQ(segments_per_super(0), 1U);
  EXPECT_EQ(segments_per_super(1472), 44U);  // 65507 / 1472
  EXPECT_EQ(segments_per_super(100), kMaxGsoSegments);
  EXPECT_EQ(segments_per_super(32753), 2U);
  EXPECT_EQ(segments_per_super(32754), 1U);
  SendBatch batch;
  batch.clear(0);
  EXPECT_EQ(batch.room(), SendBatch::kMostMessages);
  batch.clear(1472);
  EXPECT_EQ(batch.room(), SendBatch::kMostDatagrams);
  batch.clear(32753);
  EXPECT_EQ(batch.room(), 2 * SendBatch::kMostMessages);
}

TEST(UdpBatch, ABatchSendsEveryDatagramWithItsOwnHeaderInOrder) {
  BatchPair p;
  std::vector<char> room;
  SendBatch batch;
  fill(batch, 40, 1472, 0, room);
  EXPECT_EQ(batch.room(), SendBatch::kMostMessages - 40);
  EXPECT_EQ(batch.bytes_of_first(3), 3U * 1472);
  const IoResult r = p.ours->try_write_batch(batch);
  ASSERT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.bytes, 40U);
  const auto got = peer_receives(p);
  ASSERT_EQ(got.size(), 40U);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, i);
    EXPECT_EQ(got[i].second, 1472U);
  }
}

TEST(UdpBatch, SuperBuffersArriveAsTheirDatagramsWithoutGro) {
  // Laid out one after the other (a super-buffer is one piece) or apart (a piece per datagram).
  for (const std::size_t apart : {std::size_t{0}, std::size_t{8}}) {
    BatchPair p;
    std::vector<char> room;
    SendBatch batch;
    fill(batch, 100, 1000, 1000, room, apart);  // 64 + 36: two super-buffers
    ASSERT_FALSE(p.ours->use_gso()) << "this kernel has no UDP_SEGMENT or UDP_GRO";
    const IoResult r = p.ours->try_write_batch(batch);
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.bytes, 100U);
    const auto got = peer_receives(p);
    ASSERT_EQ(got.size(), 100U) << "apart " << apart;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, i);
      EXPECT_EQ(got[i].second, 1000U);
    }
  }
}

TEST(UdpBatch, AReceiveBatchTakesWhatIsThereAndCountsADatagramLongerThanItsSlot) {
  BatchPair p;
  std::vector<char> out(500, 'x');
  for (std::uint64_t i = 0; i < 5; ++i) {
    encode(header_of(i), out);
    p.peer.send(asio::buffer(out.data(), i == 4 ? 500 : 100));
  }
  std::vector<char> into(64 * 200);
  ReceiveBatch batch;
  const IoResult r = p.ours->try_read_batch(batch, into, 200, 64);
  ASSERT_FALSE(r.ec) << r.ec.message();
  ASSERT_EQ(r.bytes, 5U);
  ASSERT_EQ(batch.messages(), 5U);
  for (std::size_t m = 0; m < 5; ++m) {
    EXPECT_EQ(batch.datagrams_in(m), 1U);
    const auto d = batch.datagram(m, 0);
    EXPECT_EQ(seq_in(d.data), m);
    EXPECT_EQ(d.length, m == 4 ? 500U : 100U);
    EXPECT_EQ(d.data.size(), m == 4 ? 200U : 100U) << "cut to its slot";
  }
  EXPECT_TRUE(p.ours->try_read_batch(batch, into, 200, 64).would_block());
}

TEST(UdpBatch, AReceiveBatchTakesNoMoreThanItIsAskedFor) {
  BatchPair p;
  std::vector<char> out(100, 'x');
  for (std::uint64_t i = 0; i < 10; ++i) {
    encode(header_of(i), out);
    p.peer.send(asio::buffer(out));
  }
  std::vector<char> into(64 * 100);
  ReceiveBatch batch;
  ASSERT_EQ(p.ours->try_read_batch(batch, into, 100, 3).bytes, 3U);
  EXPECT_EQ(seq_in(batch.datagram(2, 0).data), 2U);
  ASSERT_EQ(p.ours->try_read_batch(batch, into, 100, 64).bytes, 7U);
  EXPECT_EQ(seq_in(batch.datagram(0, 0).data), 3U);
}

/// Sends one super-buffer of `n` datagrams of `segment` bytes from the peer, seq from `first`,
/// the last one `last` bytes (the kernel allows a short last segment).
void peer_sends_super(BatchPair& p, std::size_t n, std::size_t segment, std::size_t last,
                      std::uint64_t first = 0) {
  std::vector<char> out(n * segment, 's');
  for (std::size_t i = 0; i < n; ++i) {
    encode(header_of(first + i), std::span<char>(out.data() + i * segment, segment));
  }
  const std::size_t total = (n - 1) * segment + last;
  iovec iov{out.data(), total};
  std::array<char, CMSG_SPACE(sizeof(std::uint16_t))> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_UDP;
  c->cmsg_type = 103;  // UDP_SEGMENT
  c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
  const auto seg = static_cast<std::uint16_t>(segment);
  std::memcpy(CMSG_DATA(c), &seg, sizeof(seg));
  ASSERT_EQ(::sendmsg(p.peer.native_handle(), &msg, 0), static_cast<ssize_t>(total));
}

TEST(UdpBatch, WithGroASuperBufferComesWholeAndIsCutByItsSegmentSize) {
  BatchPair p;
  ASSERT_FALSE(p.ours->use_gso());
  peer_sends_super(p, 10, 1000, 300);
  std::vector<char> into(4 * ReceiveBatch::kSuperSlotBytes);
  ReceiveBatch batch;
  const IoResult r = p.ours->try_read_batch(batch, into, ReceiveBatch::kSuperSlotBytes, 4);
  ASSERT_FALSE(r.ec) << r.ec.message();
  ASSERT_EQ(r.bytes, 1U) << "one message: the super-buffer";
  ASSERT_EQ(batch.datagrams_in(0), 10U);
  for (std::size_t d = 0; d < 10; ++d) {
    const auto got = batch.datagram(0, d);
    EXPECT_EQ(seq_in(got.data), d);
    EXPECT_EQ(got.length, d == 9 ? 300U : 1000U);
  }
}

TEST(UdpBatch, WithGroAReadTakesOneDatagramAndHoldsTheRestForTheNextReads) {
  BatchPair p;
  ASSERT_FALSE(p.ours->use_gso());
  peer_sends_super(p, 5, 1472, 1472);
  peer_sends_super(p, 2, 1472, 100, 5);
  std::vector<char> in(kMaxSuperBufferBytes);
  for (std::uint64_t i = 0; i < 7; ++i) {
    const IoResult r = p.ours->try_read(in);
    ASSERT_FALSE(r.ec) << i << ": " << r.ec.message();
    EXPECT_EQ(r.bytes, i == 6 ? 100U : 1472U) << i;
    EXPECT_EQ(seq_in(std::span<const char>(in.data(), kDatagramHeaderBytes)), i);
    EXPECT_EQ(p.ours->holds(), i != 4 && i != 6) << i;
  }
  EXPECT_TRUE(p.ours->try_read(in).would_block());
  // A batch read leaves the held ones alone: the caller takes them first.
  peer_sends_super(p, 3, 1000, 1000, 7);
  ASSERT_FALSE(p.ours->try_read(in).ec);
  ASSERT_TRUE(p.ours->holds());
  const UdpConnection::Held next = p.ours->take_held();
  EXPECT_EQ(seq_in(next.header), 8U);
  EXPECT_EQ(next.length, 1000U);
  EXPECT_TRUE(p.ours->holds());
  EXPECT_EQ(seq_in(p.ours->take_held().header), 9U);
  EXPECT_FALSE(p.ours->holds());
}

TEST(UdpBatch, HeldDatagramsMoveWithTheConnection) {
  BatchPair p;
  ASSERT_FALSE(p.ours->use_gso());
  peer_sends_super(p, 3, 500, 500);
  std::vector<char> in(kMaxSuperBufferBytes);
  ASSERT_FALSE(p.ours->try_read(in).ec);
  UdpConnection moved(std::move(*p.ours));
  EXPECT_FALSE(p.ours->holds());
  EXPECT_TRUE(moved.gso());
  ASSERT_TRUE(moved.holds());
  EXPECT_EQ(seq_in(moved.take_held().header), 1U);
}

}  // namespace
}  // namespace volley::transport
