#include "volley/profile/variables.hpp"

#include <gtest/gtest.h>

namespace volley::profile {
namespace {

TEST(Variables, BindingsWinOverEnvironment) {
  Variables v;
  v.bindings = {{"h", "from-set"}};
  v.environment = {{"h", "from-env"}, {"H", "from-env-upper"}};
  EXPECT_EQ(v.lookup("h"), "from-set");
}

TEST(Variables, UperfsCaseRuleLowerCasedNameThenExactName) {
  Variables v;
  v.environment = {{"H", "upper"}, {"proto", "lower"}, {"PROTO", "upper-proto"}, {"Nthr", "8"}};
  // uperf lower-cases the profile: $PROTO, $Proto and $proto all read `proto`.
  EXPECT_EQ(v.lookup("proto"), "lower");
  EXPECT_EQ(v.lookup("Proto"), "lower");
  EXPECT_EQ(v.lookup("PROTO"), "lower");
  // uperf never reads an upper-case environment name; volley takes the exact name as well.
  EXPECT_EQ(v.lookup("H"), "upper");
  EXPECT_FALSE(v.lookup("h")) << "uperf reads h for $h, never H";
  EXPECT_EQ(v.lookup("Nthr"), "8");
  EXPECT_FALSE(v.lookup("nthr"));
  v.bindings = {{"t", "4"}};
  EXPECT_EQ(v.lookup("T"), "4") << "--set follows the same rule";
}

TEST(Variables, EmptyValueIsSet) {
  Variables v;
  v.bindings = {{"x", ""}};
  EXPECT_EQ(v.lookup("x"), "");
}

}  // namespace
}  // namespace volley::profile
