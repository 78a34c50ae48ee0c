// The slave's session table (control/session.hpp), walked against a real `volley serve`: every
// message type in every phase of a session. A message the table refuses gets an `error` with the
// table's one sentence and, once greeted, the session goes on as it was; a message it accepts
// reaches its handler (whose own answer, if any, is never the table's refusal).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "support/control_client.hpp"
#include "support/serve.hpp"
#include "volley/control/session.hpp"

namespace volley::test {
namespace {

using control::MessageType;
using control::Rule;
using control::ServedPhase;
using nlohmann::json;
using namespace std::chrono_literals;

/// A session brought to `phase` by the messages a master sends to get there.
bool reach(ControlClient& c, ServedPhase phase) {
  if (phase == ServedPhase::kGreeting) return c.connected();
  if (!c.greet()) return false;
  if (phase == ServedPhase::kIdle) return true;
  if (!c.send(load_message(pingpong("1", "1s"))) || !c.receive_type("loaded")) return false;
  if (phase == ServedPhase::kLoaded) return true;
  return c.send(control_message("start", {{"master_port", 1}}));
}

/// The next answer, skipping the slave's `loaded`/`results` bookkeeping of an accepted message;
/// nullopt when the slave closed the session (or said nothing within the limit).
std::optional<json> next_error(ControlClient& c) { return c.receive_type("error", 3s); }

TEST(SlaveSession, EveryMessageInEveryPhaseIsTakenAsTheTableSays) {
  Serve serve({"--max-sessions", "1000"});
  ASSERT_TRUE(serve.listening());
  for (std::size_t p = 0; p < control::kServedPhaseCount; ++p) {
    const auto phase = static_cast<ServedPhase>(p);
    for (std::size_t t = 0; t < control::kMessageTypeCount; ++t) {
      const auto type = static_cast<MessageType>(t);
      const std::string name =
          type == MessageType::kUnknown ? "no_such_type" : std::string(to_string(type));
      SCOPED_TRACE(std::string(to_string(phase)) + " <- " + name);
      ControlClient c(serve.port());
      ASSERT_TRUE(reach(c, phase));
      const Rule rule = control::served_rule(phase, type);
      const std::string table_refusal = "slave: " + control::refusal(rule, name);
      ASSERT_TRUE(c.send(control_message(name)));
      // A probe after it: an unknown type, refused in any greeted phase.
      c.send(control_message("probe"));
      const auto answer = next_error(c);
      if (rule == Rule::kAccept) {
        // Its handler ran: whatever it said, it was not a refusal by the table.
        if (answer) {
          EXPECT_NE(answer->value("message", ""),
                    "slave: " + control::refusal(Rule::kBeforeGreeting, name));
        }
        continue;
      }
      ASSERT_TRUE(answer) << "no refusal";
      EXPECT_EQ(answer->value("message", ""), table_refusal);
      EXPECT_EQ(table_refusal.find('\n'), std::string::npos);
      if (phase == ServedPhase::kGreeting) {
        EXPECT_TRUE(c.closed_within(3s)) << "a peer refused at its greeting stays connected";
        continue;
      }
      // The session went on as it was: the probe is refused as an unknown type.
      const auto probe = next_error(c);
      ASSERT_TRUE(probe) << "the session ended on a refusal";
      EXPECT_EQ(probe->value("message", ""), "slave: unknown message type 'probe'");
    }
  }
}

}  // namespace
}  // namespace volley::test
