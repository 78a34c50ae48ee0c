// The list of protocols (src/engine/protocols.hpp): each connection type reaches its own executor,
// the hooks an executor leaves out fall back to their defaults, and no kind makes every
// connection larger.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <type_traits>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>

#include "../../src/engine/protocols.hpp"

namespace volley::engine {
namespace {

static_assert(std::is_same_v<OpsFor<transport::TcpConnection>, TcpOps>);
static_assert(std::is_same_v<OpsFor<transport::UdpConnection>, UdpOps>);
static_assert(std::is_same_v<OpsFor<transport::MemoryConnection>, MemoryOps>);
static_assert(std::is_same_v<OpsFor<transport::TlsConnection>, TlsOps>);
static_assert(std::is_same_v<OpsFor<const transport::TcpConnection&>, TcpOps>);
static_assert(std::is_same_v<OpsFor<transport::UringTcpConnection>, UringTcpOps>);
static_assert(std::variant_size_v<AnyConnection> == 5);

struct Links {
  boost::asio::io_context io;
  AnyConnection tcp{transport::TcpConnection(boost::asio::ip::tcp::socket(io))};
  AnyConnection udp{transport::UdpConnection(boost::asio::ip::udp::socket(io))};
  AnyConnection memory{transport::MemoryConnection(io.get_executor(), {},
                                                   std::make_shared<transport::FaultTally>())};
  AnyConnection tls{
      transport::TlsConnection(transport::TcpConnection(boost::asio::ip::tcp::socket(io)))};
  AnyConnection uring{transport::UringTcpConnection()};
};

TEST(Protocols, EveryKindOfConnectionIsAboutAsSmallAsATcpConnection) {
  // AnyConnection is as large as its largest kind, and every connection of a run holds one: a
  // kind that grows costs every connection of every kind (at 200,000 connections, 200,000 times
  // on each side). What only some connections need (a UDP receiver's window, the TLS state)
  // belongs on the heap.
  constexpr std::size_t kBound = sizeof(transport::TcpConnection) + sizeof(void*);
  EXPECT_LE(sizeof(transport::UdpConnection), kBound);
  EXPECT_LE(sizeof(transport::TlsConnection), kBound);
  EXPECT_LE(sizeof(transport::MemoryConnection), kBound);
  EXPECT_LE(sizeof(transport::UringTcpConnection), kBound);
  EXPECT_LE(sizeof(AnyConnection), kBound + sizeof(void*));
}

TEST(Protocols, WhatThePeerWroteIsBoundToArriveExceptOnUdp) {
  Links links;
  EXPECT_TRUE(reliable(links.tcp));
  EXPECT_FALSE(reliable(links.udp));
  EXPECT_TRUE(reliable(links.memory));  // no kReliable: the default
  EXPECT_TRUE(reliable(links.uring));
}

TEST(Protocols, OnlyUdpReadsHaveATimeoutOfTheirOwn) {
  Links links;
  EXPECT_EQ(default_read_timeout(links.udp), std::chrono::milliseconds(500));
  EXPECT_FALSE(default_read_timeout(links.tcp).has_value());
  EXPECT_FALSE(default_read_timeout(links.memory).has_value());
}

TEST(Protocols, ByteStreamsAreTheStreamExecutorsAndOnlyUdpBursts) {
  Links links;
  EXPECT_TRUE(is_stream(links.tcp));
  EXPECT_TRUE(is_stream(links.memory));
  EXPECT_TRUE(is_stream(links.tls));
  EXPECT_TRUE(is_stream(links.uring));
  EXPECT_FALSE(is_stream(links.udp));
  EXPECT_TRUE(bursts(links.udp));
  EXPECT_FALSE(bursts(links.tcp));
  EXPECT_FALSE(bursts(links.memory));
}

TEST(Protocols, AConnectionWithoutTheHooksKeepsTheDefaults) {
  Links links;
  stats::TcpSummary summary;
  sample(links.udp, summary);  // no sample hook: nothing read
  sample(links.memory, summary);
  EXPECT_EQ(summary, stats::TcpSummary{});
  EXPECT_FALSE(closed_at_header(links.udp));
  EXPECT_FALSE(closed_at_header(links.memory));
  profile::ConnectionOptions options;
  EXPECT_FALSE(prepare_arrival(links.udp, &options));
  EXPECT_FALSE(prepare_arrival(links.memory, nullptr));
}

}  // namespace
}  // namespace volley::engine
