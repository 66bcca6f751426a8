// ByteRanges: ranges merge when they touch, removal splits, and the byte count follows.
#include "sim/storage/byte_ranges.h"

#include <gtest/gtest.h>

namespace racesim::storage {
namespace {

TEST(ByteRangesTest, AddMergesAndRemoveSplits) {
  ByteRanges r;
  EXPECT_TRUE(r.empty());
  r.add(10, 20);
  r.add(30, 40);
  EXPECT_EQ(r.bytes(), 20u);
  r.add(20, 30);  // touches both: one range [10, 40)
  EXPECT_EQ(r.bytes(), 30u);
  r.remove(15, 25);  // [10, 15) and [25, 40)
  EXPECT_EQ(r.bytes(), 20u);
  r.remove(0, 12);  // [12, 15) and [25, 40)
  EXPECT_EQ(r.bytes(), 18u);
  r.add(5, 5);  // empty: nothing
  EXPECT_EQ(r.bytes(), 18u);
  r.remove(14, 100);  // [12, 14)
  EXPECT_EQ(r.bytes(), 2u);
  r.add(0, 100);
  EXPECT_EQ(r.bytes(), 100u);
  r.remove(0, 100);
  EXPECT_TRUE(r.empty());
  // A writer's sequential chunks stay one range, and a rewriter's chunks eat it from the front.
  for (std::uint64_t at = 0; at < 64; at += 4) r.add(at, at + 4);
  EXPECT_EQ(r.bytes(), 64u);
  for (std::uint64_t at = 0; at < 64; at += 4) r.remove(at, at + 4);
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace racesim::storage
