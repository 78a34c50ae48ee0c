// The session tables (control/session.hpp) on their own: every (phase, message) pair has a rule,
// refusals are one sentence naming the message, accepted messages move the phase as the
// protocol's diagrams say, and neither side takes the other side's messages.
#include "volley/control/session.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace volley::control {
namespace {

std::vector<MessageType> all_types() {
  std::vector<MessageType> out;
  for (std::size_t i = 0; i < kMessageTypeCount; ++i) out.push_back(static_cast<MessageType>(i));
  return out;
}

/// Messages only a controller sends, and only a served side sends.
const std::set<MessageType> kControllerSends = {
    MessageType::kAuth,    MessageType::kLoad,    MessageType::kStart,
    MessageType::kProceed, MessageType::kEndStep, MessageType::kInterval,
    MessageType::kStop,    MessageType::kFinish,  MessageType::kBye};
const std::set<MessageType> kServedSends = {MessageType::kAuthOk,   MessageType::kLoaded,
                                            MessageType::kRejected, MessageType::kStepDone,
                                            MessageType::kDrained,  MessageType::kIntervalCounts,
                                            MessageType::kResults,  MessageType::kError};

TEST(Session, EveryTypeHasAWireNameThatMapsBack) {
  std::set<std::string> names;
  for (MessageType t : all_types()) {
    if (t == MessageType::kUnknown) continue;
    const std::string name(to_string(t));
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    EXPECT_EQ(message_type(name), t) << name;
  }
  EXPECT_EQ(message_type("no_such_type"), MessageType::kUnknown);
  EXPECT_EQ(message_type(""), MessageType::kUnknown);
}

TEST(Session, EveryServedPairIsAcceptedOrRefusedWithOneSentence) {
  for (std::size_t p = 0; p < kServedPhaseCount; ++p) {
    const auto phase = static_cast<ServedPhase>(p);
    for (MessageType t : all_types()) {
      const std::string name = t == MessageType::kUnknown ? "x_y" : std::string(to_string(t));
      SCOPED_TRACE(std::string(to_string(phase)) + " <- " + name);
      const Rule rule = served_rule(phase, t);
      if (rule == Rule::kAccept) {
        EXPECT_FALSE(kServedSends.count(t)) << "the served side takes its own kind of message";
        EXPECT_TRUE(refusal(rule, name).empty());
        continue;
      }
      const std::string why = refusal(rule, name);
      EXPECT_FALSE(why.empty());
      EXPECT_EQ(why.find('\n'), std::string::npos);
      if (rule != Rule::kAlreadyLoaded) {
        EXPECT_NE(why.find("'" + name + "'"), std::string::npos) << why;
      }
      EXPECT_EQ(served_next(phase, t), phase) << "a refused message moved the phase";
    }
  }
}

TEST(Session, AGreetingSessionTakesOnlyTheGreeting) {
  for (MessageType t : all_types()) {
    const bool greeting = t == MessageType::kHello || t == MessageType::kAuth;
    EXPECT_EQ(served_rule(ServedPhase::kGreeting, t) == Rule::kAccept, greeting) << to_string(t);
  }
}

TEST(Session, TheServedSideWalksIdleLoadedRunningIdle) {
  ServedPhase p = served_next(ServedPhase::kGreeting, MessageType::kHello);
  EXPECT_EQ(p, ServedPhase::kIdle);
  EXPECT_EQ(served_next(p, MessageType::kStart), ServedPhase::kIdle);  // refused: nothing loaded
  p = served_next(p, MessageType::kLoad);
  EXPECT_EQ(p, ServedPhase::kLoaded);
  EXPECT_EQ(served_rule(p, MessageType::kLoad), Rule::kAlreadyLoaded);
  EXPECT_EQ(served_rule(p, MessageType::kProceed), Rule::kBeforeStart);
  p = served_next(p, MessageType::kStart);
  EXPECT_EQ(p, ServedPhase::kRunning);
  EXPECT_EQ(served_rule(p, MessageType::kStart), Rule::kAlreadyStarted);
  for (MessageType t : {MessageType::kProceed, MessageType::kEndStep, MessageType::kWritten,
                        MessageType::kInterval, MessageType::kPing}) {
    EXPECT_EQ(served_next(p, t), ServedPhase::kRunning) << to_string(t);
  }
  EXPECT_EQ(served_next(p, MessageType::kFinish), ServedPhase::kIdle);
  EXPECT_EQ(served_next(p, MessageType::kStop), ServedPhase::kIdle);
}

TEST(Session, EveryPeerPairIsAcceptedOrRefusedWithOneSentence) {
  for (std::size_t p = 0; p < kPeerPhaseCount; ++p) {
    const auto phase = static_cast<PeerPhase>(p);
    for (MessageType t : all_types()) {
      const std::string name = t == MessageType::kUnknown ? "x_y" : std::string(to_string(t));
      SCOPED_TRACE(std::string(to_string(phase)) + " <- " + name);
      const Rule rule = peer_rule(phase, t);
      if (kControllerSends.count(t)) {
        EXPECT_EQ(rule, Rule::kNotFromPeer);
      }
      if (rule == Rule::kAccept) {
        EXPECT_TRUE(unexpected(rule, name, phase).empty());
        continue;
      }
      const std::string why = unexpected(rule, name, phase);
      EXPECT_FALSE(why.empty());
      EXPECT_EQ(why.find('\n'), std::string::npos);
      EXPECT_NE(why.find("'" + name + "'"), std::string::npos) << why;
      EXPECT_EQ(peer_after_receive(phase, t), phase) << "a refused message moved the phase";
    }
  }
}

TEST(Session, APeersErrorAndAbortAreTakenInEveryPhase) {
  for (std::size_t p = 0; p < kPeerPhaseCount; ++p) {
    EXPECT_EQ(peer_rule(static_cast<PeerPhase>(p), MessageType::kError), Rule::kAccept);
    EXPECT_EQ(peer_rule(static_cast<PeerPhase>(p), MessageType::kAbort), Rule::kAccept);
  }
}

TEST(Session, APeerWalksFromGreetingToDoneByWhatIsSentAndAnswered) {
  PeerPhase p = PeerPhase::kGreeting;
  EXPECT_EQ(peer_rule(p, MessageType::kLoaded), Rule::kBeforeGreeting);
  p = peer_after_receive(p, MessageType::kHello);
  EXPECT_EQ(p, PeerPhase::kGreeted);
  EXPECT_EQ(peer_rule(p, MessageType::kStepDone), Rule::kOutOfPhase);
  p = peer_after_send(p, MessageType::kLoad);
  EXPECT_EQ(p, PeerPhase::kLoading);
  EXPECT_EQ(peer_rule(p, MessageType::kRejected), Rule::kAccept);
  p = peer_after_receive(p, MessageType::kLoaded);
  EXPECT_EQ(p, PeerPhase::kLoaded);
  EXPECT_EQ(peer_rule(p, MessageType::kLoaded), Rule::kOutOfPhase);
  p = peer_after_send(p, MessageType::kStart);
  EXPECT_EQ(p, PeerPhase::kRunning);
  EXPECT_EQ(peer_rule(p, MessageType::kResults), Rule::kOutOfPhase);
  p = peer_after_send(p, MessageType::kProceed);
  EXPECT_EQ(p, PeerPhase::kRunning);
  p = peer_after_send(p, MessageType::kFinish);
  EXPECT_EQ(p, PeerPhase::kCollecting);
  EXPECT_EQ(peer_rule(p, MessageType::kStepDone), Rule::kAccept);  // a stop's step still ending
  p = peer_after_receive(p, MessageType::kResults);
  EXPECT_EQ(p, PeerPhase::kDone);
  EXPECT_EQ(peer_rule(p, MessageType::kResults), Rule::kOutOfPhase);
}

TEST(Session, RefusalsNameAnUnknownTypePrintably) {
  const std::string why = refusal(Rule::kUnknownType, std::string("a\x01z"));
  EXPECT_EQ(why.find('\x01'), std::string::npos) << why;
  EXPECT_NE(why.find("unknown message type"), std::string::npos);
}

}  // namespace
}  // namespace volley::control
