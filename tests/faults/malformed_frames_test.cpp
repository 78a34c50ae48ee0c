// Thousands of malformed control sessions against one slave: a valid master's frames mutated
// (bytes flipped), truncated, given wrong lengths, wrong types and wrongly typed fields, sent out
// of order, or followed by garbage. After each session the test half-closes and the slave must
// close too (a session it keeps is a hang); every few hundred sessions a fresh master must be
// greeted; at the end the slave is back to its idle baseline, serves a real run, and exits
// cleanly on SIGTERM.
#include <sys/socket.h>

#include <random>

#include "fault_suite.hpp"
#include "support/control_client.hpp"
#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// A valid master's side of a session, frame by frame.
std::vector<std::string> valid_session() {
  std::vector<json> messages = {
      control::make_hello(),
      load_message(pingpong("1", "200ms")),
      control_message("start", {{"master_port", 1}}),
      control_message("proceed", {{"step", 0}}),
      control_message("end_step", {{"step", 0}, {"connected", json::array()}}),
      control_message("proceed", {{"step", 1}}),
      control_message("end_step", {{"step", 1}, {"connected", json::array()}}),
      control_message("ping"),
      control_message("finish"),
      control_message("abort", {{"reason", "fault suite"}}),
      control_message("bye")};
  std::vector<std::string> frames;
  for (const auto& m : messages) frames.push_back(control::encode_frame(m));
  return frames;
}

const std::vector<std::string> kTypes = {"hello",  "load",  "start", "proceed",      "end_step",
                                         "finish", "abort", "bye",   "ping",         "results",
                                         "loaded", "error", "",      "\u00e9\u0000x"};

/// The same message with one field (or the type) replaced by a value of another JSON type.
std::string wrong_type(const std::string& frame, std::mt19937_64& rng) {
  json m = json::parse(frame.substr(4));
  const std::vector<json> values = {json(-1),
                                    json(1e300),
                                    json("x"),
                                    json::array(),
                                    json(nullptr),
                                    json::object(),
                                    json(true),
                                    json(18446744073709551615ULL),
                                    json(std::string(3000, 'a'))};
  const auto& value = values[rng() % values.size()];
  if (rng() % 3 == 0) {
    m["type"] = kTypes[rng() % kTypes.size()];
  } else {
    std::vector<std::string> keys;
    for (const auto& [k, v] : m.items()) keys.push_back(k);
    m[keys[rng() % keys.size()]] = value;
  }
  return control::encode_frame(m);
}

std::string with_length(const std::string& frame, std::uint32_t n) {
  std::string out = frame;
  for (int i = 0; i < 4; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>(n >> (24 - 8 * i));
  return out;
}

struct Session {
  std::string bytes;
  std::size_t malformed = 0;  ///< frames in `bytes` that a correct master would not send
};

Session malformed_session(const std::vector<std::string>& valid, std::size_t i,
                          std::mt19937_64& rng) {
  Session s;
  // A prefix of valid frames (often with the load, so mutations reach a loaded session), then
  // the fault.
  const std::size_t k = rng() % valid.size();
  for (std::size_t f = 0; f < k; ++f) s.bytes += valid[f];
  std::string frame = valid[k];
  switch (i % 6) {
    case 0: {  // bytes flipped, header included
      const std::size_t flips = 1 + rng() % 8;
      for (std::size_t f = 0; f < flips; ++f) {
        frame[rng() % frame.size()] ^= static_cast<char>(1U << (rng() % 8));
      }
      break;
    }
    case 1:  // truncated: the peer goes away mid-frame
      frame.resize(rng() % frame.size());
      break;
    case 2: {  // a length that does not match the payload
      const std::uint32_t payload = static_cast<std::uint32_t>(frame.size() - 4);
      const std::vector<std::uint32_t> lengths = {
          0,    1,    payload - 1, payload + 1,     payload * 2,
          4096, 4097, 16U << 20,   (16U << 20) + 1, 0xffffffffU};
      frame = with_length(frame, lengths[rng() % lengths.size()]);
      break;
    }
    case 3: frame = wrong_type(frame, rng); break;
    case 4: {  // valid frames, in a wrong order
      frame.clear();
      const std::size_t n = 1 + rng() % 6;
      for (std::size_t f = 0; f < n; ++f) frame += valid[1 + rng() % (valid.size() - 1)];
      s.malformed += n - 1;
      break;
    }
    default: {  // garbage
      frame.resize(1 + rng() % 64);
      for (auto& c : frame) c = static_cast<char>(rng());
      break;
    }
  }
  s.bytes += frame;
  ++s.malformed;
  return s;
}

TEST(Faults, MalformedFramesNeverHarmTheSlave) {
  BaselinedSlave slave;
  const auto valid = valid_session();
  const std::size_t sessions = 1500 * fault_scale();
  const auto seed = static_cast<std::uint64_t>(::testing::UnitTest::GetInstance()->random_seed());
  std::mt19937_64 rng(seed);
  std::size_t malformed = 0;
  std::size_t slow_closes = 0;
  for (std::size_t i = 0; i < sessions; ++i) {
    const Session s = malformed_session(valid, i, rng);
    ControlClient c(slave.serve().port());
    ASSERT_TRUE(c.connected()) << "session " << i << ": the slave stopped accepting (seed " << seed
                               << ")\n"
                               << slave.serve().process().stderr_so_far();
    (void)c.send_raw(s.bytes);  // the slave may have closed already: that is a fine answer
    malformed += s.malformed;
    // We are done talking: the slave must end the session (a refused frame may end it sooner).
    c.shutdown_write();
    if (!c.closed_within(std::chrono::milliseconds(static_cast<int>(10'000 * kSlowdown)))) {
      ++slow_closes;
      ADD_FAILURE() << "session " << i << " (seed " << seed << "): the slave kept the session "
                    << "open after the master half-closed";
    }
    if (i % 250 == 249) {
      ControlClient probe(slave.serve().port());
      ASSERT_TRUE(probe.greet()) << "after session " << i << " (seed " << seed
                                 << "): a new master is not greeted";
    }
  }
  slave.expect_back_to_baseline("after malformed sessions");
  slave.expect_serves("after malformed sessions");
  slave.expect_back_to_baseline("after the real run");
  fault_figure("malformed_sessions", std::to_string(sessions));
  fault_figure("malformed_frames_sent", std::to_string(malformed));
  fault_figure("malformed_hangs", std::to_string(slow_closes));
  fault_figure("malformed_worst_ms_to_baseline", std::to_string(slave.worst().count()));
  slave.expect_clean_exit();
}

}  // namespace
}  // namespace volley::test
