// Zero-copy sends: the ledger's bookkeeping of numbered sends and completions (tags, ranges in any
// order, numbers that wrap), and MSG_ZEROCOPY over a real loopback connection, whose completions
// all say the kernel copied.
#include "volley/transport/zero_copy_sends.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "support/tcp_pair.hpp"

namespace volley::transport {
namespace {

using Totals = std::map<std::uint32_t, ZeroCopyCompleted>;

void add_to(Totals& into, const std::vector<ZeroCopyCompleted>& parts) {
  for (const ZeroCopyCompleted& p : parts) {
    into[p.tag].tag = p.tag;
    into[p.tag].zero_copied += p.zero_copied;
    into[p.tag].copied += p.copied;
  }
}

TEST(ZeroCopyLedger, ARangeIsSplitByTheTagsOfItsSends) {
  ZeroCopyLedger ledger;
  for (int i = 0; i < 3; ++i) ledger.sent(7);
  for (int i = 0; i < 2; ++i) ledger.sent(9);
  ledger.sent(7);
  EXPECT_EQ(ledger.owed(), 6U);
  std::vector<ZeroCopyCompleted> parts;
  ledger.settle(1, 4, /*copied=*/true, parts);  // two of tag 7's first run, both of tag 9's
  Totals totals;
  add_to(totals, parts);
  EXPECT_EQ(totals[7].copied, 2U);
  EXPECT_EQ(totals[9].copied, 2U);
  EXPECT_EQ(ledger.owed(), 2U);
  parts.clear();
  ledger.settle(5, 5, /*copied=*/false, parts);
  ledger.settle(0, 0, /*copied=*/false, parts);  // out of order: the oldest comes last
  Totals rest;
  add_to(rest, parts);
  EXPECT_EQ(rest[7].zero_copied, 2U);
  EXPECT_EQ(rest[7].copied, 0U);
  EXPECT_EQ(ledger.owed(), 0U);
  EXPECT_EQ(ledger.sends(), 6U);
}

TEST(ZeroCopyLedger, NumbersThatWrapStillMatchTheirSends) {
  ZeroCopyLedger ledger(0xFFFFFFFEU);  // the third send is numbered 0
  for (int i = 0; i < 4; ++i) ledger.sent(3);
  std::vector<ZeroCopyCompleted> parts;
  ledger.settle(0xFFFFFFFEU, 1, /*copied=*/true, parts);
  ASSERT_EQ(parts.size(), 1U);
  EXPECT_EQ(parts[0].copied, 4U);
  EXPECT_EQ(ledger.owed(), 0U);
}

TEST(ZeroCopyLedger, NumbersNotOwedCountForNothing) {
  ZeroCopyLedger ledger;
  ledger.sent(1);
  ledger.sent(1);
  std::vector<ZeroCopyCompleted> parts;
  ledger.settle(0, 1, true, parts);
  ledger.settle(0, 1, true, parts);  // settled already: its run is gone
  ledger.settle(5, 9, true, parts);  // never sent
  Totals totals;
  add_to(totals, parts);
  EXPECT_EQ(totals[1].copied, 2U);
  EXPECT_EQ(ledger.owed(), 0U);
  ledger.sent(1);  // the run begins again at the next number
  parts.clear();
  ledger.settle(2, 2, false, parts);
  ASSERT_EQ(parts.size(), 1U);
  EXPECT_EQ(parts[0].zero_copied, 1U);
}

/// Sends `count` blocks of `size` bytes for `tag` on `fd` with MSG_ZEROCOPY, waiting for room
/// when the socket has none; every completion read on the way goes to `totals`.
void send_blocks(ZeroCopySends& sends, int fd, std::uint32_t tag, int count, std::size_t size,
                 Totals& totals) {
  const std::string block(size, 'z');
  for (int i = 0; i < count;) {
    const IoResult io = sends.send(fd, block, tag);
    if (io.would_block() || ZeroCopySends::no_buffers(io)) {
      sends.collect(fd, [&](const ZeroCopyCompleted& c) { add_to(totals, {c}); });
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    ASSERT_FALSE(io.ec) << io.ec.message();
    ++i;  // a short send is a send too; its block's rest is not sent again
  }
}

TEST(ZeroCopySends, OverLoopbackEveryCompletionComesAndSaysCopied) {
  test::TcpPair pair;
  const int fd = pair.ours->socket().native_handle();
  ASSERT_FALSE(ZeroCopySends::enable(fd));
  // The peer reads everything until the end of the stream.
  std::uint64_t received = 0;
  std::thread reader([&] {
    std::vector<char> buffer(1 << 20);
    boost::system::error_code ec;
    while (!ec) received += pair.peer->read_some(boost::asio::buffer(buffer), ec);
  });
  ZeroCopySends sends;
  Totals totals;
  send_blocks(sends, fd, 4, 100, 64 * 1024, totals);
  send_blocks(sends, fd, 5, 50, 1024 * 1024, totals);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sends.owed() > 0 && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, 0, 0};  // POLLERR is always reported: a completion is queued
    ::poll(&p, 1, 100);
    sends.collect(fd, [&](const ZeroCopyCompleted& c) { add_to(totals, {c}); });
  }
  ::shutdown(fd, SHUT_WR);
  reader.join();
  EXPECT_EQ(sends.owed(), 0U) << "every send's completion came";
  EXPECT_EQ(totals[4].copied, 100U) << "loopback copies every send";
  EXPECT_EQ(totals[5].copied, 50U);
  EXPECT_EQ(totals[4].zero_copied + totals[5].zero_copied, 0U);
  EXPECT_GE(received, 100U * 64 * 1024);
}

TEST(ZeroCopySends, WithoutSoZerocopyNothingIsSentAsZeroCopyAndNoCompletionComes) {
  // The kernel ignores MSG_ZEROCOPY on a socket without SO_ZEROCOPY: why the engine enables it
  // first and fails the write when it cannot.
  test::TcpPair pair;
  const int fd = pair.ours->socket().native_handle();
  ZeroCopySends sends;
  ASSERT_FALSE(sends.send(fd, std::string(65536, 'z'), 1).ec);
  std::string drain(65536, 0);
  boost::asio::read(*pair.peer, boost::asio::buffer(drain));
  pollfd p{fd, 0, 0};
  EXPECT_EQ(::poll(&p, 1, 200), 0) << "no completion is queued";
  EXPECT_EQ(sends.collect(fd, [](const ZeroCopyCompleted&) {}), 0U);
  EXPECT_EQ(sends.owed(), 1U);
}

}  // namespace
}  // namespace volley::transport
