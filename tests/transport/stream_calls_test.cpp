#include "volley/transport/stream_calls.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <boost/asio/error.hpp>
#include <gtest/gtest.h>

namespace volley::transport {
namespace {

/// A connected pair of non-blocking Unix stream sockets, closed at the end of the scope.
struct SocketPair {
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds.data()), 0); }
  ~SocketPair() {
    for (const int fd : fds) ::close(fd);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  std::array<int, 2> fds{-1, -1};
};

int wake_mark(int fd) {
  int mark = 0;
  socklen_t size = sizeof mark;
  EXPECT_EQ(::getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &mark, &size), 0);
  return mark;
}

TEST(StreamCalls, SendNowSendsWhatFitsThenSaysWouldBlock) {
  SocketPair p;
  const std::string message = "ping";
  IoResult r = send_now(p.fds[0], message);
  EXPECT_FALSE(r.ec);
  EXPECT_EQ(r.bytes, message.size());
  const std::vector<char> big(std::size_t{1} << 20, 'x');
  std::size_t sent = 0;
  do {
    r = send_now(p.fds[0], big);
    sent += r.bytes;
  } while (!r.ec && sent < std::size_t{64} << 20);
  EXPECT_TRUE(r.would_block()) << r.ec.message();
  EXPECT_EQ(send_now(-1, message).ec, boost::asio::error::bad_descriptor);
}

TEST(StreamCalls, SendfileNowAdvancesTheOffsetBySentBytes) {
  SocketPair p;
  char path[] = "/tmp/volley-stream-calls-XXXXXX";
  const int file = ::mkstemp(path);
  ASSERT_GE(file, 0);
  ::unlink(path);
  const std::string contents(10'000, 'y');
  ASSERT_EQ(::write(file, contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
  off_t offset = 1'000;
  const IoResult r = sendfile_now(p.fds[0], file, &offset, 4'000);
  EXPECT_FALSE(r.ec);
  EXPECT_EQ(r.bytes, 4'000U);
  EXPECT_EQ(offset, 5'000);
  EXPECT_TRUE(sendfile_now(p.fds[0], -1, &offset, 1).ec);
  ::close(file);
}

TEST(StreamCalls, SetWakeMarkClampsAndFollowsWhatTheKernelTook) {
  SocketPair p;
  int current = 1;
  set_wake_mark(p.fds[1], 4'096, current);
  EXPECT_EQ(current, 4'096);
  EXPECT_EQ(wake_mark(p.fds[1]), 4'096);
  set_wake_mark(p.fds[1], 0, current);  // at least one byte
  EXPECT_EQ(current, 1);
  set_wake_mark(p.fds[1], 100 * kMaxWakeAfter, current);
  EXPECT_EQ(current, static_cast<int>(kMaxWakeAfter));
  EXPECT_EQ(wake_mark(p.fds[1]), static_cast<int>(kMaxWakeAfter));
  // A mark the socket cannot take leaves `current` as it was.
  set_wake_mark(-1, 10, current);
  EXPECT_EQ(current, static_cast<int>(kMaxWakeAfter));
}

}  // namespace
}  // namespace volley::transport
