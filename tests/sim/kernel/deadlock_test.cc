#include "sim/kernel/deadlock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::kernel {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(FindCyclesTest, FindsOneCyclePerComponentStartingAtTheSmallestVertex) {
  // 0 -> 1 -> 2 -> 0, and 3 <-> 4, and 5 -> 0 (not in a cycle).
  std::vector<std::vector<std::int32_t>> adj = {{1}, {2}, {0}, {4}, {3}, {0}};
  EXPECT_THAT(find_cycles(adj), ElementsAre(ElementsAre(0, 1, 2), ElementsAre(3, 4)));
}

TEST(FindCyclesTest, SelfLoopIsACycleAndADagHasNone) {
  EXPECT_THAT(find_cycles({{0}}), ElementsAre(ElementsAre(0)));
  EXPECT_THAT(find_cycles({{1, 2}, {2}, {}}), IsEmpty());
}

TEST(FindCyclesTest, PicksAShortestCycleThroughTheRoot) {
  // 0 -> 1 -> 2 -> 3 -> 0 and a shortcut 1 -> 0.
  std::vector<std::vector<std::int32_t>> adj = {{1}, {2, 0}, {3}, {0}};
  EXPECT_THAT(find_cycles(adj), ElementsAre(ElementsAre(0, 1)));
}

TEST(DeadlockReportTest, FormatsReleasersAndCycles) {
  DeadlockReport r;
  r.blocked.push_back({0, "rank0", false, "recv on channel 'x'", {{1, "rank1", "blocked in y"}}});
  r.blocked.push_back({1, "rank1", true, "y", {}});
  r.cycles.push_back({0, 1});
  EXPECT_EQ(r.to_string(),
            "rank0: recv on channel 'x': waiting for rank1 (blocked in y)\n"
            "rank1 (daemon): y: no known releaser\n"
            "cycle: rank0 -> rank1 -> rank0\n");
}

}  // namespace
}  // namespace racesim::kernel
