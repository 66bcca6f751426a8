// The fault seam: which active fault a model's query finds (kind, rank, aimed resource), the
// rank a process acts for, argument draws from the fault's own stream, and the straggler's
// compute stretch.
#include "sim/kernel/faults.h"

#include <gtest/gtest.h>

#include "sim/kernel/simulation.h"

namespace racesim::kernel {
namespace {

using namespace time_literals;

ActiveFault fault(const char* name, std::string_view kind, int rank, double value = 2) {
  ActiveFault f(name, kind, rank, RandomStream(7, name));
  f.set_arg("factor", [value](RandomStream&, int) { return value; });
  return f;
}

TEST(FaultSeamTest, AQueryFindsOnlyTheKindAndRankItNames) {
  FaultSeam seam;
  EXPECT_EQ(seam.find("eio", 0), nullptr);  // empty: nothing
  seam.add(fault("a", "eio", 1));
  seam.add(fault("b", "writer_stall", 0));
  EXPECT_EQ(seam.find("eio", 0), nullptr);
  ASSERT_NE(seam.find("eio", 1), nullptr);
  EXPECT_EQ(seam.find("eio", 1)->name(), "a");
  EXPECT_EQ(seam.find("writer_stall", 0)->name(), "b");
  EXPECT_EQ(seam.find("writer_stall", 1), nullptr);
}

TEST(FaultSeamTest, AFaultAimedAtAMountHitsThatMountOnly) {
  FaultSeam seam;
  ActiveFault f = fault("slow", "eio", 0);
  f.aim(ResourceKind::kMount, "shared");
  seam.add(std::move(f));
  EXPECT_NE(seam.find("eio", 0, {{ResourceKind::kMount, "shared"}}), nullptr);
  EXPECT_EQ(seam.find("eio", 0, {{ResourceKind::kMount, "local"}}), nullptr);
  // The same name under another kind of resource is another resource.
  EXPECT_EQ(seam.find("eio", 0, {{ResourceKind::kComm, "shared"}}), nullptr);
  // A fault aimed at nothing hits every resource.
  seam.add(fault("any", "eio", 1));
  EXPECT_NE(seam.find("eio", 1, {{ResourceKind::kMount, "local"}}), nullptr);
  EXPECT_NE(seam.find("eio", 1, {{ResourceKind::kComm, "world"}}), nullptr);
}

TEST(FaultSeamTest, AFaultAimedAtACommunicatorOrALinkMatchesEitherResourceOfTheOperation) {
  ActiveFault f = fault("slow", "slow_link", 0);
  f.aim(ResourceKind::kLink, "inter");
  EXPECT_TRUE(f.hits({{ResourceKind::kComm, "world"}, {ResourceKind::kLink, "inter"}}));
  EXPECT_FALSE(f.hits({{ResourceKind::kComm, "world"}, {ResourceKind::kLink, "intra"}}));
}

TEST(FaultSeamTest, ArgumentsAreDrawnFromTheFaultsOwnStream) {
  ActiveFault a("x", "k", 0, RandomStream(1, "fault/x/0"));
  a.set_arg("u", [](RandomStream& r, int) { return r.uniform01(); });
  RandomStream same(1, "fault/x/0");
  EXPECT_EQ(a.sample("u"), same.uniform01());
  EXPECT_EQ(a.sample("u"), same.uniform01());  // each draw advances it
}

TEST(FaultSeamTest, ProcessesAreBoundToTheRankTheyActFor) {
  Simulation sim;
  FaultSeam seam;
  Process* p = sim.spawn("rank 3", [] {});
  EXPECT_EQ(seam.rank_of(p), -1);
  seam.bind(p, 3);
  EXPECT_EQ(seam.rank_of(p), 3);
  EXPECT_EQ(seam.rank_of(nullptr), -1);
  sim.run();
}

TEST(FaultSeamTest, AStragglerStretchesComputeOfItsRankAndCountsItsHits) {
  FaultSeam seam;
  EXPECT_EQ(seam.compute_time(0, 10_s), 10_s);
  seam.add(fault("slow", kStraggler, 0, 3));
  EXPECT_EQ(seam.compute_time(0, 10_s), 30_s);
  EXPECT_EQ(seam.compute_time(1, 10_s), 10_s);
  EXPECT_EQ(seam.find(kStraggler, 0)->hit_count(), 1u);
  // Saturates instead of overflowing.
  seam.add(fault("huge", kStraggler, 1, 1e30));
  EXPECT_EQ(seam.compute_time(1, 10_s), kTimeMax);
}

}  // namespace
}  // namespace racesim::kernel
