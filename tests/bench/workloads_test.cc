// The benchmark workloads must do what bench/workloads.h says, or the comparison with SimGrid
// compares different things.
#include "bench/workloads.h"

#include <gtest/gtest.h>

namespace racesim::bench {
namespace {

using kernel::kSecond;

TEST(WorkloadsTest, TimersRunEveryLoopAndEndAtTheLongestSum) {
  kernel::Simulation sim;
  const int n = 50;
  const auto r = run_timers(sim, n);
  ASSERT_EQ(r.run.outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(r.items, static_cast<std::uint64_t>(n) * kTimerLoops);
  // The run ends when the process with the longest total sleep ends.
  kernel::Time longest = 0;
  for (int id = 0; id < n; ++id) {
    std::uint64_t x = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ULL + 12345;
    kernel::Time total = 0;
    for (int k = 0; k < kTimerLoops; ++k) total += (1 + (lcg_next(x) >> 33) % 1000) * kSecond;
    longest = std::max(longest, total);
  }
  EXPECT_EQ(r.run.end_time, longest);
  // One start event plus one timer event per loop, per process.
  EXPECT_EQ(r.run.events, static_cast<std::uint64_t>(n) * (kTimerLoops + 1));
}

TEST(WorkloadsTest, RingPassesOneTokenAroundSequentially) {
  kernel::Simulation sim;
  const int n = 20;
  const auto r = run_ring(sim, n);
  ASSERT_EQ(r.run.outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(r.items, static_cast<std::uint64_t>(n) * kRingLaps);
  // One token: every hand-off is preceded by a 1 s sleep, strictly one after another.
  EXPECT_EQ(r.run.end_time, static_cast<kernel::Time>(n) * kRingLaps * kSecond);
}

TEST(WorkloadsTest, BarrierRunsEveryRoundAtTimeZero) {
  kernel::Simulation sim;
  const int n = 30;
  const auto r = run_barrier(sim, n);
  ASSERT_EQ(r.run.outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(r.items, static_cast<std::uint64_t>(n) * kBarrierRounds);
  EXPECT_EQ(r.run.end_time, 0);
  // Start, then one resume per round for all but the releasing arrival.
  EXPECT_EQ(r.run.events, static_cast<std::uint64_t>(n) + (n - 1) * kBarrierRounds);
}

// The stackless variants are the same workloads: the same events, end time and trace hash.
TEST(WorkloadsTest, StacklessTimersAndBarrierAreTheSameRunsAsOnFibers) {
  for (int n : {1, 7, 300}) {
    kernel::Simulation a, b, c, d;
    const auto timers = run_timers(a, n, 9);
    const auto stackless_timers = run_timers_stackless(b, n, 9);
    ASSERT_EQ(stackless_timers.run.outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(stackless_timers.items, timers.items);
    EXPECT_EQ(stackless_timers.run.end_time, timers.run.end_time);
    EXPECT_EQ(stackless_timers.run.events, timers.run.events);
    EXPECT_EQ(stackless_timers.run.trace_hash, timers.run.trace_hash);
    const auto barrier = run_barrier(c, n, 4);
    const auto stackless_barrier = run_barrier_stackless(d, n, 4);
    ASSERT_EQ(stackless_barrier.run.outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(stackless_barrier.run.events, barrier.run.events);
    EXPECT_EQ(stackless_barrier.run.trace_hash, barrier.run.trace_hash);
  }
}

// The steady-state variants run the same workloads with other loop counts: the counts must be
// honoured, or the extra items would not be extra work.
TEST(WorkloadsTest, LoopCountsAreParameters) {
  {
    kernel::Simulation sim;
    const auto r = run_timers(sim, 20, 7);
    ASSERT_EQ(r.run.outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(r.items, 20u * 7);
    EXPECT_EQ(r.run.events, 20u * (7 + 1));
  }
  {
    kernel::Simulation sim;
    const auto r = run_ring(sim, 20, 3);
    ASSERT_EQ(r.run.outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(r.items, 20u * 3);
    EXPECT_EQ(r.run.end_time, 20 * 3 * kSecond);
  }
  {
    kernel::Simulation sim;
    const auto r = run_barrier(sim, 30, 61);
    ASSERT_EQ(r.run.outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(r.items, 30u * 61);
    EXPECT_EQ(r.run.events, 30u + 29u * 61);
  }
}

}  // namespace
}  // namespace racesim::bench
