// Step footprints (footprint.h): which steps of two ranks commute, as partial-order reduction
// reads them. A step not known to touch only named things conflicts with everything.
#include "src/scenario/compile/footprint.h"

#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

// Mounts /a, /a/deep and /b; the program's steps in order.
const std::string kMounts =
    "platform:\n  storage:\n"
    "    a: {kind: local, mount: /a, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s}\n"
    "    deep: {kind: local, mount: /a/deep, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s}\n"
    "    b: {kind: local, mount: /b, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s}\n"
    "params:\n  n: 1\n";

std::vector<Footprint> footprints(const std::string& program) {
  auto f = make(2, program, kMounts);
  std::vector<Footprint> out;
  if (!f.study) return out;
  for (const auto& s : f.study->programs.at(0)->steps) out.push_back(s->touches);
  return out;
}

TEST(FootprintTest, MarksCommuteWhenSetAndConflictWithALook) {
  const auto f = footprints("  - mark: x\n  - mark: x\n  - wait: x\n  - if: {marked: x, then: []}\n  - mark: y\n");
  ASSERT_EQ(f.size(), 5u);
  EXPECT_FALSE(f[0].conflicts(f[1]));  // setting a mark twice is setting it once
  EXPECT_TRUE(f[0].conflicts(f[2]));   // a wait reads it
  EXPECT_TRUE(f[0].conflicts(f[3]));
  EXPECT_FALSE(f[2].conflicts(f[3]));  // two reads commute
  EXPECT_FALSE(f[2].conflicts(f[4]));  // another mark
}

TEST(FootprintTest, StorageStepsTouchTheMountOfEachPath) {
  const auto f = footprints(
      "  - write_file: {path: /a/x, size: 1MiB}\n"
      "  - write_file: {path: /b/x, size: 1MiB}\n"
      "  - mkdir: \"/a/r${rank}\"\n"                          // the mount is known before ${
      "  - mkdir: \"/a/${rank}\"\n"                           // /a/${rank} could be /a/deep
      "  - copy: {from: /a/x, to: /b/y}\n"
      "  - if: {exists: /b/x, then: []}\n"
      "  - if: {glob: \"/a/*.om\", then: []}\n"                // /a/* could be /a/deep/...
      "  - if: {glob: \"/b/*.om\", then: []}\n");
  ASSERT_EQ(f.size(), 8u);
  EXPECT_TRUE(f[6].everything);
  EXPECT_FALSE(f[7].everything);
  EXPECT_TRUE(f[7].conflicts(f[1]));
  EXPECT_FALSE(f[0].everything);
  EXPECT_FALSE(f[0].conflicts(f[1]));  // two mounts
  EXPECT_TRUE(f[0].conflicts(f[2]));
  EXPECT_TRUE(f[3].everything);
  EXPECT_TRUE(f[4].conflicts(f[0]) && f[4].conflicts(f[1]));  // both of a copy's mounts
  EXPECT_TRUE(f[5].conflicts(f[1]));
  EXPECT_FALSE(f[5].conflicts(f[0]));
}

TEST(FootprintTest, LocalStepsTouchNothingSharedAndOthersEverything) {
  const auto f = footprints(
      "  - sleep: 1s\n  - compute: 1s\n  - count: c\n"
      "  - collective: {op: all_reduce, bytes: 1MiB}\n"
      "  - mark: \"m${n}\"\n");
  ASSERT_EQ(f.size(), 5u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(f[static_cast<std::size_t>(i)].everything) << i;
    EXPECT_TRUE(f[static_cast<std::size_t>(i)].touches.empty()) << i;
  }
  EXPECT_FALSE(f[0].conflicts(f[1]));
  EXPECT_TRUE(f[3].everything);          // not listed: conflicts with everything
  EXPECT_TRUE(f[3].conflicts(f[0]));
  EXPECT_TRUE(f[4].everything);          // a name known only when it runs
}

}  // namespace
}  // namespace racesim::scenario
