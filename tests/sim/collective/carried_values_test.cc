// Values carried by collectives (sim/collective/carried_values.h): every reduction over the
// members' deposits, the root's value of a broadcast, and the members a result is missing.
#include "sim/collective/carried_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::collective {
namespace {

using ::testing::HasSubstr;

TEST(CarriedValuesTest, EachReductionCombinesEveryMembersValueAndEveryMemberTakesIt) {
  kernel::Simulation sim;
  Engine engine(sim, Config{});
  Communicator& c = engine.communicator("world", {0, 1, 2, 3});
  const double values[] = {3, 0, 5, 2};
  const std::pair<Reduce, double> cases[] = {{Reduce::kSum, 10}, {Reduce::kMin, 0}, {Reduce::kMax, 5},
                                             {Reduce::kOr, 1},   {Reduce::kAnd, 0}, {Reduce::kRoot, 5}};
  std::uint64_t seq = 0;
  for (const auto& [how, want] : cases) {
    ++seq;
    CarriedValues carried;
    for (int r = 0; r < 4; ++r) carried.deposit(c, seq, r, values[r], how, "all_reduce");
    for (int r = 3; r >= 0; --r) {
      const auto got = carried.take(c, seq, r, /*root=*/2);
      ASSERT_TRUE(got) << got.message();
      EXPECT_EQ(*got, want) << to_string(how) << " for rank " << r;
    }
    EXPECT_EQ(carried.pending(), 0u) << "gone once every member took its result";
  }
}

TEST(CarriedValuesTest, AMemberThatCarriedNothingOrReducedOtherwiseIsNamed) {
  kernel::Simulation sim;
  Engine engine(sim, Config{});
  Communicator& c = engine.communicator("world", {0, 1, 2, 3});
  CarriedValues carried;
  carried.deposit(c, 4, 0, 1, Reduce::kOr, "all_reduce");
  carried.deposit(c, 4, 2, 1, Reduce::kOr, "all_reduce");
  const auto missing = carried.take(c, 4, 0, 0);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(), HasSubstr("all_reduce #4 on world carries a value on rank 0 but none on ranks 1,3"));
  CarriedValues other;
  other.deposit(c, 1, 0, 1, Reduce::kOr, "all_reduce");
  other.deposit(c, 1, 1, 1, Reduce::kMax, "all_reduce");
  other.deposit(c, 1, 2, 1, Reduce::kOr, "all_reduce");
  other.deposit(c, 1, 3, 1, Reduce::kOr, "all_reduce");
  const auto mixed = other.take(c, 1, 2, 0);
  ASSERT_FALSE(mixed);
  EXPECT_THAT(mixed.message(), HasSubstr("rank 2 reduces by or, rank 1 otherwise"));
}

}  // namespace
}  // namespace racesim::collective
