// A node's host memory (sim/device/host_memory.h): one capacity for pinned and pageable buffers,
// the peak of each, the cost of pinning and the rate of a copy from each kind.
#include "sim/device/host_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::device {
namespace {

using ::testing::HasSubstr;
constexpr std::uint64_t kGiB = 1ull << 30;

TEST(HostMemoryTest, PinnedAndPageableShareTheCapacityAndEachHasItsPeak) {
  HostMemory m(3, {.memory = 10 * kGiB, .pin_bandwidth = 1e9, .pageable_bandwidth = 2e9, .cpu = {}});
  auto a = m.alloc(4 * kGiB, true, "staging");
  auto b = m.alloc(4 * kGiB, false, "batch");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(m.used_bytes(), 8 * kGiB);
  EXPECT_EQ(m.pinned_bytes(), 4 * kGiB);
  auto c = m.alloc(3 * kGiB, true, "more");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.message(), "out of host memory on node 3: more needs 3 GiB, 8 GiB of 10 GiB in use");
  EXPECT_EQ(m.pinned_bytes(), 4 * kGiB) << "a refused allocation changes nothing";
  m.free(*a, true);
  m.free(*a, true);  // a stale handle: ignored
  EXPECT_EQ(m.used_bytes(), 4 * kGiB);
  EXPECT_EQ(m.pinned_bytes(), 0u);
  EXPECT_EQ(m.peak_bytes(), 8 * kGiB);
  EXPECT_EQ(m.pinned_peak_bytes(), 4 * kGiB);
  EXPECT_TRUE(m.alloc(6 * kGiB, true, "now fits"));
}

TEST(HostMemoryTest, PinningAndCopiesTakeTheirRates) {
  const HostMemory m(0, {.memory = kGiB, .pin_bandwidth = 1e9, .pageable_bandwidth = 2e9, .cpu = {}});
  EXPECT_EQ(m.pin_time(1'000'000'000), 1'000'000'000);                  // 1 GB at 1 GB/s
  EXPECT_EQ(m.copy_time(1'000'000'000, true, 25e9), 40'000'000);        // the link's rate
  EXPECT_EQ(m.copy_time(1'000'000'000, false, 25e9), 500'000'000);      // capped at 2 GB/s
  EXPECT_EQ(m.copy_time(1'000'000'000, false, 1e9), 1'000'000'000);     // a slower link caps it
}

}  // namespace
}  // namespace racesim::device
