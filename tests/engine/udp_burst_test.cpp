// A UDP stream's iterations run in batches (UdpOps::burst): many datagrams per sendmmsg on the
// sender and per recvmmsg on the receiver, super-buffers with gso. These tests run a real engine
// over loopback against a peer of the test's own (a UdpListener that takes the master's
// datagrams, or a hand-made master that sends to a slave engine), and script this binary's
// sendmmsg and recvmmsg: a call that takes fewer messages than it was given, one that would block.
// Whatever the kernel did, every datagram sent is counted once, with its own sequence number, and
// every one received once: operations, iterations, bytes, latency samples and the receiver's
// counts are exact, a batch never runs past its step's iterations, and random sizes are drawn
// only for the datagrams that went.
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <gtest/gtest.h>

#include "volley/engine/engine.hpp"
#include "volley/engine/random_stream.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"
#include "volley/transport/datagram.hpp"
#include "volley/transport/udp_batch.hpp"
#include "volley/transport/udp_listener.hpp"

namespace {

/// What this binary's sendmmsg and recvmmsg do on their next calls while armed (a call beyond the
/// script does what libc's would), and what went out: every datagram the kernel took, by
/// sendmmsg or send, in order.
struct UdpScript {
  enum class Fault { kTake, kWouldBlock };
  struct Step {
    Fault fault = Fault::kTake;
    unsigned most = 0;  ///< kTake: the most messages the call takes
  };
  std::mutex mutex;
  bool armed = false;
  std::deque<Step> sendmmsg;
  std::deque<Step> recvmmsg;
  std::vector<unsigned> sendmmsg_asked;  ///< each call's message count
  std::vector<unsigned> recvmmsg_asked;
  std::vector<std::uint16_t> segments;  ///< UDP_SEGMENT of each message of several datagrams
  std::vector<std::uint64_t> sent_seqs;
  std::vector<std::size_t> sent_sizes;
  std::vector<std::uint64_t> sent_stamps;  ///< the headers' send times
  std::uint64_t single_sends = 0;          ///< datagrams that went by send()

  void arm() {
    const std::lock_guard lock(mutex);
    *this = UdpScript{};
    armed = true;
  }
  void disarm() {
    const std::lock_guard lock(mutex);
    armed = false;
  }
  /// Notes one datagram the kernel took (a volley datagram, by its header).
  void took(const char* data, std::size_t size) {
    const auto h = volley::transport::decode_datagram_header(std::span<const char>(data, size));
    if (!h) return;
    sent_seqs.push_back(h->seq);
    sent_sizes.push_back(size);
    sent_stamps.push_back(h->sent_ns);
  }
  UdpScript() = default;
  UdpScript& operator=(UdpScript&& other) noexcept {
    armed = other.armed;
    sendmmsg = std::move(other.sendmmsg);
    recvmmsg = std::move(other.recvmmsg);
    sendmmsg_asked = std::move(other.sendmmsg_asked);
    recvmmsg_asked = std::move(other.recvmmsg_asked);
    segments = std::move(other.segments);
    sent_seqs = std::move(other.sent_seqs);
    sent_sizes = std::move(other.sent_sizes);
    sent_stamps = std::move(other.sent_stamps);
    single_sends = other.single_sends;
    return *this;
  }
};

UdpScript& udp_script() {
  static UdpScript script;
  return script;
}

/// The UDP_SEGMENT size a message asks for, or 0.
std::uint16_t segment_of(const msghdr& h) {
  if (h.msg_control == nullptr) return 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == 103) {
      std::uint16_t s = 0;
      std::memcpy(&s, CMSG_DATA(c), sizeof(s));
      return s;
    }
  }
  return 0;
}

/// Notes the datagrams of message `h` that the kernel took: its bytes, cut by its segment size.
void took_message(UdpScript& s, const msghdr& h) {
  std::vector<char> bytes;
  for (std::size_t v = 0; v < h.msg_iovlen; ++v) {
    const auto* base = static_cast<const char*>(h.msg_iov[v].iov_base);
    bytes.insert(bytes.end(), base, base + h.msg_iov[v].iov_len);
  }
  const std::uint16_t segment = segment_of(h);
  if (segment != 0) s.segments.push_back(segment);
  const std::size_t step = segment != 0 ? segment : bytes.size();
  for (std::size_t at = 0; at < bytes.size(); at += step) {
    s.took(bytes.data() + at, std::min(step, bytes.size() - at));
  }
}

}  // namespace

// This binary's own sendmmsg, recvmmsg and send (an executable's definition comes before libc's):
// the engine's UDP batches and single datagrams go through them.
extern "C" int sendmmsg(int fd, mmsghdr* msgs, unsigned n, int flags) {
  UdpScript& s = udp_script();
  const std::lock_guard lock(s.mutex);
  unsigned pass = n;
  if (s.armed) {
    s.sendmmsg_asked.push_back(n);
    if (!s.sendmmsg.empty()) {
      const UdpScript::Step step = s.sendmmsg.front();
      s.sendmmsg.pop_front();
      if (step.fault == UdpScript::Fault::kWouldBlock) {
        errno = EAGAIN;
        return -1;
      }
      pass = std::min(n, step.most);
    }
  }
  const long sent = ::syscall(SYS_sendmmsg, fd, msgs, pass, flags);
  if (s.armed && sent > 0) {
    for (long m = 0; m < sent; ++m) took_message(s, msgs[m].msg_hdr);
  }
  return static_cast<int>(sent);
}

extern "C" int recvmmsg(int fd, mmsghdr* msgs, unsigned n, int flags, timespec* timeout) {
  UdpScript& s = udp_script();
  unsigned pass = n;
  {
    const std::lock_guard lock(s.mutex);
    if (s.armed) {
      s.recvmmsg_asked.push_back(n);
      if (!s.recvmmsg.empty()) {
        const UdpScript::Step step = s.recvmmsg.front();
        s.recvmmsg.pop_front();
        if (step.fault == UdpScript::Fault::kWouldBlock) {
          errno = EAGAIN;
          return -1;
        }
        pass = std::min(n, step.most);
      }
    }
  }
  return static_cast<int>(::syscall(SYS_recvmmsg, fd, msgs, pass, flags, timeout));
}

extern "C" ssize_t send(int fd, const void* buf, std::size_t n, int flags) {
  const long sent = ::syscall(SYS_sendto, fd, buf, n, flags, nullptr, 0);
  UdpScript& s = udp_script();
  const std::lock_guard lock(s.mutex);
  if (s.armed && sent > 0) {
    const std::size_t before = s.sent_seqs.size();
    s.took(static_cast<const char*>(buf), static_cast<std::size_t>(sent));
    s.single_sends += s.sent_seqs.size() - before;
  }
  return sent;
}

namespace volley::engine {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;
using namespace std::chrono_literals;

constexpr std::uint32_t kToken = 7;

/// A master profile: a UDP connect with `options`, then one step of `iterations` writes of
/// `size` per entry of `steps`, then a disconnect.
std::string stream_xml(const std::vector<std::uint64_t>& steps, const std::string& size,
                       const std::string& options = "") {
  std::string xml =
      "<profile name=\"p\"><group nthreads=\"1\"><transaction iterations=\"1\">"
      "<flowop type=\"connect\" options=\"remotehost=x protocol=udp " +
      options + "\"/></transaction>";
  for (const std::uint64_t n : steps) {
    xml += "<transaction iterations=\"" + std::to_string(n) +
           "\"><flowop type=\"write\" options=\"size=" + size + "\"/></transaction>";
  }
  return xml +
         "<transaction iterations=\"1\"><flowop type=\"disconnect\"/></transaction>"
         "</group></profile>";
}

/// The plan of `xml` for the master, or mirrored for its slave.
Plan burst_plan(const std::string& xml, bool slave) {
  const profile::ParseResult parsed = profile::parse_profile(xml, "test.xml", {});
  EXPECT_FALSE(parsed.diagnostics.has_errors()) << parsed.diagnostics.format(nullptr);
  const profile::Profile p = slave ? profile::mirror(*parsed.profile, "x") : *parsed.profile;
  core::Diagnostics diags;
  auto plan = compile(p, {}, diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  return plan ? std::move(*plan) : Plan{};
}

/// An io_context run on a thread of its own until destroyed.
struct ControlThread {
  asio::io_context context;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(context);
  std::thread thread{[this] { context.run(); }};
  ~ControlThread() {
    work.reset();
    context.stop();
    thread.join();
  }
};

/// Runs `engine`'s steps one after another (each must end by itself within 20 s), calling
/// `before(t)` ahead of releasing step t.
template <class Before>
results::RunResult run_steps(Engine& engine, std::vector<std::promise<void>>& done,
                             Before&& before) {
  engine.start();
  for (std::size_t t = 0; t < done.size(); ++t) {
    before(t);
    engine.release(t);
    if (done[t].get_future().wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "step " << t << " did not end";
      engine.stop();
      break;
    }
  }
  return engine.finish();
}

/// Runs the master of `xml` against a listener of the test's own (what it receives is not read:
/// the script notes what was sent).
results::RunResult run_master(const std::string& xml) {
  const Plan plan = burst_plan(xml, false);
  ControlThread control;
  std::mutex mutex;
  std::vector<udp::socket> peers;
  transport::UdpListener listener(control.context, transport::RunTokens{kToken, 1},
                                  [&](const transport::ConnectionHeader&, udp::socket socket) {
                                    const std::lock_guard lock(mutex);
                                    peers.push_back(std::move(socket));
                                  });
  const auto loopback = asio::ip::make_address("127.0.0.1");
  EXPECT_EQ(listener.open(loopback, 0, std::nullopt), "");
  std::promise<std::uint16_t> port;
  asio::post(control.context, [&] {
    listener.start();
    port.set_value(0);
  });
  port.get_future().wait();
  EngineConfig config;
  config.token = kToken;
  config.targets["x"] = HostTarget{loopback, listener.port()};
  std::vector<std::promise<void>> done(plan.txn_count);
  config.on_txn_done = [&done](std::size_t t) { done.at(t).set_value(); };
  Engine engine(plan, std::move(config));
  results::RunResult r = run_steps(engine, done, [](std::size_t) {});
  std::promise<void> closed;
  asio::post(control.context, [&] {
    listener.close();
    closed.set_value();
  });
  closed.get_future().wait();
  return r;
}

const results::TxnResult& step_of(const results::RunResult& r, std::size_t step) {
  return r.groups.at(0).transactions.at(step);
}

/// A sender's step of `n` iterations of one write of `size`: every count says n.
void expect_sent(const results::TxnResult& txn, std::uint64_t n, std::uint64_t bytes) {
  const results::SlotStats& op = txn.flowops.at(0).stats;
  EXPECT_EQ(op.counters.ops, n);
  EXPECT_EQ(txn.stats.counters.ops, n);
  EXPECT_EQ(op.counters.datagrams.sent, n);
  EXPECT_EQ(op.counters.bytes_written, bytes);
  EXPECT_EQ(op.counters.error_total(), 0U);
  EXPECT_EQ(op.latency.count(), n) << "one latency sample per datagram";
  EXPECT_EQ(txn.stats.latency.count(), n);
}

/// The script saw datagrams 0..n-1 go, each once, in order.
void expect_sequence(const UdpScript& s, std::uint64_t n) {
  ASSERT_EQ(s.sent_seqs.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(s.sent_seqs[i], i) << "datagram " << i;
}

TEST(UdpBurst, ABatchIsCutByItsStepsIterations) {
  udp_script().arm();
  const results::RunResult r = run_master(stream_xml({100, 10}, "200"));
  udp_script().disarm();
  const UdpScript& s = udp_script();
  EXPECT_EQ(s.sendmmsg_asked, (std::vector<unsigned>{64, 36, 10}));
  expect_sequence(s, 110);
  expect_sent(step_of(r, 1), 100, 100 * 200);
  expect_sent(step_of(r, 2), 10, 10 * 200);
  // A batch's operations share its time: the flowop's samples are the transaction's.
  EXPECT_EQ(step_of(r, 1).flowops.at(0).stats.latency, step_of(r, 1).stats.latency);
}

TEST(UdpBurst, APartialSendmmsgSendsTheRestInTheNextCall) {
  udp_script().arm();
  udp_script().sendmmsg = {{UdpScript::Fault::kTake, 10}, {UdpScript::Fault::kTake, 1}};
  const results::RunResult r = run_master(stream_xml({100}, "200"));
  udp_script().disarm();
  const UdpScript& s = udp_script();
  EXPECT_EQ(s.sendmmsg_asked, (std::vector<unsigned>{64, 64, 64, 25}));
  expect_sequence(s, 100);
  expect_sent(step_of(r, 1), 100, 100 * 200);
}

TEST(UdpBurst, ASocketThatWouldBlockMidBatchIsWaitedForAndTheStreamGoesOn) {
  udp_script().arm();
  udp_script().sendmmsg = {{UdpScript::Fault::kTake, 5}, {UdpScript::Fault::kWouldBlock, 0}};
  const results::RunResult r = run_master(stream_xml({100}, "200"));
  udp_script().disarm();
  const UdpScript& s = udp_script();
  EXPECT_EQ(s.single_sends, 1U) << "the datagram that waited goes alone";
  expect_sequence(s, 100);
  expect_sent(step_of(r, 1), 100, 100 * 200);
}

TEST(UdpBurst, RandomSizesAreDrawnForTheDatagramsThatWentOnly) {
  udp_script().arm();
  udp_script().sendmmsg = {{UdpScript::Fault::kTake, 7},
                           {UdpScript::Fault::kWouldBlock, 0},
                           {UdpScript::Fault::kTake, 3}};
  const results::RunResult r = run_master(stream_xml({100}, "rand(64,1472)"));
  udp_script().disarm();
  const UdpScript& s = udp_script();
  expect_sequence(s, 100);
  // The slave's mirror draws the same sizes from the same stream: the seed, the strand, the
  // connection and the step.
  RandomStream drawn = RandomStream::for_connection(1, 0, 0, 0, 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < s.sent_sizes.size(); ++i) {
    const std::uint64_t expected = drawn.between(64, 1472);
    EXPECT_EQ(s.sent_sizes[i], expected) << "datagram " << i;
    total += s.sent_sizes[i];
  }
  expect_sent(step_of(r, 1), 100, total);
}

TEST(UdpBurst, WithGsoDatagramsGoAsSuperBuffersOfTheirSize) {
  udp_script().arm();
  udp_script().sendmmsg = {{UdpScript::Fault::kTake, 1}};
  const results::RunResult r = run_master(stream_xml({100, 150, 300}, "1472", "gso"));
  udp_script().disarm();
  const UdpScript& s = udp_script();
  // 100: 44 + 44 + 12 (one super-buffer taken, then the two others); 150: 44 + 44 + 44 + 18;
  // 300: the worker's buffer (256 KiB) holds 4 super-buffers, then 44 + 44 + 36.
  EXPECT_EQ(s.sendmmsg_asked, (std::vector<unsigned>{3, 2, 4, 4, 3}));
  EXPECT_EQ(s.segments, std::vector<std::uint16_t>(14, 1472));
  expect_sequence(s, 550);
  expect_sent(step_of(r, 1), 100, 100 * 1472);
  expect_sent(step_of(r, 2), 150, 150 * 1472);
  expect_sent(step_of(r, 3), 300, 300 * 1472);
}

TEST(UdpBurst, ADurationStepsBatchesBeginBeforeItsDeadlineAndCountWhatWent) {
  udp_script().arm();
  const std::string xml =
      "<profile name=\"p\"><group nthreads=\"1\"><transaction iterations=\"1\">"
      "<flowop type=\"connect\" options=\"remotehost=x protocol=udp\"/></transaction>"
      "<transaction duration=\"200ms\"><flowop type=\"write\" options=\"size=200\"/>"
      "</transaction><transaction iterations=\"1\"><flowop type=\"disconnect\"/>"
      "</transaction></group></profile>";
  const auto started = std::chrono::steady_clock::now();
  const results::RunResult r = run_master(xml);
  const auto took = std::chrono::steady_clock::now() - started;
  udp_script().disarm();
  const UdpScript& s = udp_script();
  ASSERT_GT(s.sent_seqs.size(), 64U) << "a stream of many batches";
  expect_sequence(s, s.sent_seqs.size());
  expect_sent(step_of(r, 1), s.sent_seqs.size(), s.sent_seqs.size() * 200);
  // Every batch began before the deadline: its datagrams carry its start, all within the step's
  // 200 ms of the first (which began the step).
  EXPECT_LT(std::chrono::nanoseconds(s.sent_stamps.back() - s.sent_stamps.front()), 200ms);
  EXPECT_LT(took, 5s);
}

/// A master of the test's own for a slave engine: its hello to the slave's UDP listener is strand
/// 0's connection 0; then it sends datagrams to the data port the answer names.
struct HandMaster {
  asio::io_context io;
  udp::socket socket{io};
  std::vector<char> out = std::vector<char>(70000, 'm');

  void connect(std::uint16_t listener_port) {
    const auto loopback = asio::ip::make_address("127.0.0.1");
    socket.open(udp::v4());
    socket.bind(udp::endpoint(loopback, 0));
    socket.non_blocking(true);
    const auto hello = transport::encode(transport::ConnectionHeader{kToken, 0, 0, 0});
    for (int attempt = 0; attempt < 200; ++attempt) {
      socket.send_to(asio::buffer(hello), udp::endpoint(loopback, listener_port));
      std::this_thread::sleep_for(10ms);
      std::array<char, 64> answer{};
      udp::endpoint from;
      boost::system::error_code ec;
      const std::size_t n = socket.receive_from(asio::buffer(answer), from, 0, ec);
      if (ec) continue;
      if (auto port = transport::decode_ack(std::span<const char>(answer.data(), n), kToken)) {
        socket.connect(udp::endpoint(loopback, *port));
        return;
      }
    }
    ADD_FAILURE() << "the slave's listener did not answer";
  }
  /// Datagrams `first`.. of `size` bytes, `n` of them, one a call.
  void send(std::uint64_t first, std::uint64_t n, std::size_t size) {
    for (std::uint64_t i = 0; i < n; ++i) {
      transport::encode(transport::DatagramHeader{kToken, 0, first + i, 1}, out);
      socket.send(asio::buffer(out.data(), size));
    }
  }
  /// The same, at most 64, in one sendmmsg: they arrive together.
  void send_batch(std::uint64_t first, std::uint64_t n, std::size_t size) {
    transport::SendBatch batch;
    batch.clear(0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::span<char> datagram(out.data() + i * size, size);
      transport::encode(transport::DatagramHeader{kToken, 0, first + i, 1}, datagram);
      batch.add(datagram);
    }
    ASSERT_EQ(batch.send(socket.native_handle()).bytes, n);
  }
  /// The same as one super-buffer the kernel cuts at `size` (UDP_SEGMENT).
  void send_super(std::uint64_t first, std::uint64_t n, std::size_t size) {
    for (std::uint64_t i = 0; i < n; ++i) {
      transport::encode(transport::DatagramHeader{kToken, 0, first + i, 1},
                        std::span<char>(out.data() + i * size, size));
    }
    const int segment = static_cast<int>(size);
    ASSERT_EQ(::setsockopt(socket.native_handle(), SOL_UDP, 103, &segment, sizeof(segment)), 0);
    socket.send(asio::buffer(out.data(), n * size));
    const int none = 0;
    ::setsockopt(socket.native_handle(), SOL_UDP, 103, &none, sizeof(none));
  }
};

/// Runs the slave of `xml` (mirrored) against `master`, which says hello before the first step
/// and does `send(step, master)` before each step.
template <class Send>
results::RunResult run_slave(const std::string& xml, HandMaster& master, Send&& send) {
  const Plan plan = burst_plan(xml, true);
  ControlThread control;
  EngineConfig config;
  config.token = kToken;
  config.slave_side = true;
  config.listen_address = asio::ip::make_address("127.0.0.1");
  std::vector<std::promise<void>> done(plan.txn_count);
  config.on_txn_done = [&done](std::size_t t) { done.at(t).set_value(); };
  Engine engine(plan, std::move(config));
  EXPECT_EQ(engine.open_listeners(control.context), "");
  const std::uint16_t port = engine.listener_ports().at(0);
  return run_steps(engine, done, [&](std::size_t t) {
    if (t == 0) master.connect(port);
    send(t, master);
  });
}

template <class Send>
results::RunResult run_slave(const std::string& xml, Send&& send) {
  HandMaster master;
  return run_slave(xml, master, std::forward<Send>(send));
}

/// A receiver's step that took datagrams first.. of `size`, `n` of them, each once.
void expect_received(const results::TxnResult& txn, std::uint64_t n, std::uint64_t size) {
  const results::SlotStats& op = txn.flowops.at(0).stats;
  EXPECT_EQ(op.counters.ops, n);
  EXPECT_EQ(txn.stats.counters.ops, n);
  EXPECT_EQ(op.counters.datagrams.received, n);
  EXPECT_EQ(op.counters.datagrams.lost, 0U);
  EXPECT_EQ(op.counters.datagrams.duplicates, 0U);
  EXPECT_EQ(op.counters.datagrams.timeouts, 0U);
  EXPECT_EQ(op.counters.bytes_read, n * size);
  EXPECT_EQ(op.latency.count(), n);
  EXPECT_EQ(txn.stats.latency.count(), n);
}

TEST(UdpBurst, AReceiverTakesNoMoreThanItsStepsIterationsLeft) {
  udp_script().arm();
  const results::RunResult r =
      run_slave(stream_xml({70, 30}, "200"), [](std::size_t step, HandMaster& m) {
        if (step == 1) m.send(0, 100, 200);  // both steps' datagrams, there before the first reads
      });
  udp_script().disarm();
  EXPECT_EQ(udp_script().recvmmsg_asked, (std::vector<unsigned>{64, 6, 30}));
  expect_received(step_of(r, 1), 70, 200);
  expect_received(step_of(r, 2), 30, 200);
}

TEST(UdpBurst, AReceiverTakesWhatCameAndWaitsForTheRest) {
  udp_script().arm();
  udp_script().recvmmsg = {{UdpScript::Fault::kTake, 10}, {UdpScript::Fault::kWouldBlock, 0}};
  const results::RunResult r =
      run_slave(stream_xml({100}, "200"), [](std::size_t s, HandMaster& m) {
        if (s == 1) m.send(0, 100, 200);
      });
  udp_script().disarm();
  expect_received(step_of(r, 1), 100, 200);
}

TEST(UdpBurst, WithGsoAReceiverCutsASuperBufferAndHoldsWhatItsStepDoesNotTake) {
  udp_script().arm();
  const results::RunResult r =
      run_slave(stream_xml({10, 34}, "1472", "gso"), [](std::size_t step, HandMaster& m) {
        if (step == 1) m.send_super(0, 44, 1472);
      });
  udp_script().disarm();
  EXPECT_EQ(udp_script().recvmmsg_asked.size(), 1U)
      << "one call took the super-buffer; the second step's datagrams were held";
  expect_received(step_of(r, 1), 10, 1472);
  expect_received(step_of(r, 2), 34, 1472);
}

TEST(UdpBurst, AReceiverThatPausesBetweenLooksMissesNothingWhenTheStreamStopsAndComesBack) {
  // Three bursts of 300 datagrams, 30 every 30 us (the sender spins: a sleep lasts much longer),
  // 30 ms apart. Between looks the receiver pauses on a timer or waits in epoll, as the rate it
  // measures says (on a quiet machine a timer; on a loaded one, where its looks come far apart,
  // epoll); after each burst a pause finds nothing and it waits in epoll for the next. Either
  // way every datagram is read once.
  HandMaster master;
  std::thread sender;
  const results::RunResult r =
      run_slave(stream_xml({900}, "200", "wndsz=1m"), master, [&](std::size_t step, HandMaster& m) {
        if (step != 1) return;
        sender = std::thread([&m] {
          for (std::uint64_t burst = 0; burst < 3; ++burst) {
            for (std::uint64_t chunk = 0; chunk < 10; ++chunk) {
              m.send_batch(burst * 300 + chunk * 30, 30, 200);
              const auto until = std::chrono::steady_clock::now() + 30us;
              while (std::chrono::steady_clock::now() < until) {
              }
            }
            std::this_thread::sleep_for(30ms);
          }
        });
      });
  if (sender.joinable()) sender.join();
  expect_received(step_of(r, 1), 900, 200);
}

}  // namespace
}  // namespace volley::engine
