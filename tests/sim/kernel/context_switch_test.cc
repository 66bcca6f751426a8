// The context switch under every hand-off (sim/kernel/context_switch.cc, which replaces Boost's
// jump_fcontext on x86-64): processes that block at different call depths resume where they
// blocked with their locals intact, and each keeps its own floating-point control state (the
// rounding mode) across switches, as Boost's switch guarantees.
#include <gtest/gtest.h>

#include <cfenv>
#include <cstdint>
#include <vector>

#include "sim/kernel/simulation.h"

namespace racesim::kernel {
namespace {

using namespace time_literals;

// Sleeps at the bottom of `depth` nested calls, then returns a value built from every frame's
// locals on the way up: a return to the wrong place, or a frame overwritten while another
// process ran, changes the result.
std::uint64_t sleep_deep(Simulation& sim, int depth, std::uint64_t salt, Time nap) {
  volatile std::uint64_t here = salt * 31 + static_cast<std::uint64_t>(depth);
  if (depth == 0) {
    sim.sleep_for(nap);
    sim.sleep_for(nap);
    return here;
  }
  const std::uint64_t below = sleep_deep(sim, depth - 1, salt, nap);
  return below * 7 + here;
}

std::uint64_t expected_deep(int depth, std::uint64_t salt) {
  const std::uint64_t here = salt * 31 + static_cast<std::uint64_t>(depth);
  return depth == 0 ? here : expected_deep(depth - 1, salt) * 7 + here;
}

TEST(ContextSwitchTest, ProcessesBlockedAtDifferentDepthsResumeWhereTheyBlocked) {
  // Twelve processes blocked 0 to 11 calls deep, interleaved: each resume returns up a chain
  // that differs from the one the process switching away came down.
  Simulation sim;
  constexpr int kProcesses = 12;
  std::vector<std::uint64_t> got(kProcesses, 0);
  for (int i = 0; i < kProcesses; ++i) {
    sim.spawn("p" + std::to_string(i), [&sim, &got, i] {
      for (int round = 0; round < 5; ++round) {
        const auto salt = static_cast<std::uint64_t>(i * 100 + round);
        const std::uint64_t v = sleep_deep(sim, i, salt, Time{1 + (i * 7 + round * 3) % 5} * 1_ms);
        if (v != expected_deep(i, salt)) return;  // leaves got[i] short of 5
        ++got[static_cast<std::size_t>(i)];
      }
    });
  }
  ASSERT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  for (int i = 0; i < kProcesses; ++i) {
    EXPECT_EQ(got[static_cast<std::size_t>(i)], 5u) << "process " << i;
  }
}

TEST(ContextSwitchTest, EachProcessKeepsItsOwnRoundingModeAcrossSwitches) {
  // Process a rounds upward and b toward zero, each set before it first blocks; the main
  // context keeps round-to-nearest. After every switch each sees its own mode (the switch saves
  // and restores MXCSR and the x87 control word per context).
  const int before = std::fegetround();
  ASSERT_EQ(before, FE_TONEAREST);
  Simulation sim;
  std::vector<int> a_modes, b_modes;
  sim.spawn("a", [&] {
    std::fesetround(FE_UPWARD);
    for (int i = 0; i < 4; ++i) {
      sim.sleep_for(1_ms);
      a_modes.push_back(std::fegetround());
    }
  });
  sim.spawn("b", [&] {
    std::fesetround(FE_TOWARDZERO);
    for (int i = 0; i < 4; ++i) {
      sim.sleep_for(1_ms);
      b_modes.push_back(std::fegetround());
    }
  });
  ASSERT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_EQ(a_modes, std::vector<int>(4, FE_UPWARD));
  EXPECT_EQ(b_modes, std::vector<int>(4, FE_TOWARDZERO));
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  std::fesetround(before);
}

}  // namespace
}  // namespace racesim::kernel
