#include "volley/sampling/resident_memory.hpp"

#include <gtest/gtest.h>

namespace volley::sampling {
namespace {

TEST(ResidentMemory, ResidentBytesAreThisProcesssMemory) { EXPECT_GT(resident_bytes(), 0); }

}  // namespace
}  // namespace volley::sampling
