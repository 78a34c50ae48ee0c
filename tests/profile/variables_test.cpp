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

TEST(Variables, EnvironmentExactNameThenLowerCasedName) {
  Variables v;
  v.environment = {{"H", "upper"}, {"proto", "exact"}, {"PROTO", "upper-proto"}};
  EXPECT_EQ(v.lookup("h"), "upper") << "uperf lower-cases environment names";
  EXPECT_EQ(v.lookup("proto"), "exact");
  EXPECT_EQ(v.lookup("H"), "upper");
  EXPECT_FALSE(v.lookup("nthr"));
  EXPECT_FALSE(v.lookup("Proto")) << "only the environment side is lower-cased";
}

TEST(Variables, EmptyValueIsSet) {
  Variables v;
  v.bindings = {{"x", ""}};
  EXPECT_EQ(v.lookup("x"), "");
}

}  // namespace
}  // namespace volley::profile
