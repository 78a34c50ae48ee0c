#include "volley/transport/source_quota.hpp"

#include <gtest/gtest.h>

namespace volley::transport {
namespace {

using boost::asio::ip::make_address;
using Verdict = SourceQuota::Verdict;

TEST(SourceQuota, AnAddressAtItsShareReplacesItsOwnOldestAndOthersAreUntouched) {
  SourceQuota quota({2, 8});
  EXPECT_EQ(quota.admit(1, make_address("127.0.0.2")).verdict, Verdict::kAdmitted);
  EXPECT_EQ(quota.admit(2, make_address("127.0.0.1")).verdict, Verdict::kAdmitted);
  EXPECT_EQ(quota.admit(3, make_address("127.0.0.2")).verdict, Verdict::kAdmitted);
  const auto d = quota.admit(4, make_address("127.0.0.2"));
  EXPECT_EQ(d.verdict, Verdict::kReplacesOwnOldest);
  EXPECT_EQ(d.evict, 1U);
  EXPECT_EQ(quota.held_by(make_address("127.0.0.2")), 2U);
  EXPECT_EQ(quota.held_by(make_address("127.0.0.1")), 1U);
  EXPECT_EQ(quota.size(), 3U);
  quota.forget(3);
  quota.forget(3);  // twice: ignored
  EXPECT_EQ(quota.admit(5, make_address("127.0.0.2")).verdict, Verdict::kAdmitted);
}

TEST(SourceQuota, WhenFullANewcomerReplacesTheOldestOfTheAddressHoldingTheMost) {
  SourceQuota quota({3, 5});
  for (std::uint64_t id = 1; id <= 3; ++id) quota.admit(id, make_address("10.0.0.1"));
  quota.admit(4, make_address("10.0.0.2"));
  quota.admit(5, make_address("10.0.0.2"));
  const auto d = quota.admit(6, make_address("10.0.0.3"));
  EXPECT_EQ(d.verdict, Verdict::kReplacesHeaviest);
  EXPECT_EQ(d.evict, 1U) << "the oldest of 10.0.0.1, which held the most";
  EXPECT_EQ(quota.size(), 5U);
  EXPECT_EQ(quota.held_by(make_address("10.0.0.1")), 2U);
  EXPECT_EQ(quota.held_by(make_address("10.0.0.3")), 1U);
}

TEST(SourceQuota, AnIpv6SlashSixtyFourIsOneAddressAndMappedIpv4IsIpv4) {
  EXPECT_EQ(SourceQuota::key(make_address("2001:db8:1:2::1")),
            SourceQuota::key(make_address("2001:db8:1:2:ffff::9")));
  EXPECT_NE(SourceQuota::key(make_address("2001:db8:1:2::1")),
            SourceQuota::key(make_address("2001:db8:1:3::1")));
  EXPECT_EQ(SourceQuota::key(make_address("::ffff:10.1.2.3")),
            SourceQuota::key(make_address("10.1.2.3")));
  EXPECT_NE(SourceQuota::key(make_address("10.1.2.3")), SourceQuota::key(make_address("10.1.2.4")));
  SourceQuota quota({1, 8});
  quota.admit(1, make_address("2001:db8:1:2::1"));
  EXPECT_EQ(quota.admit(2, make_address("2001:db8:1:2::2")).verdict, Verdict::kReplacesOwnOldest);
}

}  // namespace
}  // namespace volley::transport
