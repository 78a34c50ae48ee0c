// ErrorKind's names: stable JSON keys, read back to the same kind.
#include "volley/results/error_kind.hpp"

#include <gtest/gtest.h>

namespace volley::results {
namespace {

TEST(ErrorKindNames, EveryKindReadsBackFromItsName) {
  for (std::size_t k = 0; k < kErrorKindCount; ++k) {
    const auto kind = static_cast<ErrorKind>(k);
    EXPECT_EQ(error_kind_from_string(to_string(kind)), kind) << to_string(kind);
  }
  EXPECT_EQ(to_string(ErrorKind::kPeerClosed), "peer_closed");
  EXPECT_EQ(to_string(ErrorKind::kAddrUnavailable), "addr_unavailable");
  EXPECT_EQ(error_kind_from_string("total"), std::nullopt);
  EXPECT_EQ(error_kind_from_string("Reset"), std::nullopt);
  EXPECT_EQ(error_kind_from_string(""), std::nullopt);
}

}  // namespace
}  // namespace volley::results
