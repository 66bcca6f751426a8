// Calling a function on another stack (sim/kernel/call_on_stack.h): where it runs, what it
// returns, exceptions, depth; and that the simulation's dispatch runs off a blocking process's
// stack.
#include "sim/kernel/call_on_stack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "sim/kernel/simulation.h"
#include "sim/kernel/stack_pool.h"

namespace racesim::kernel {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Whether `p` lies in the `bytes` below `top`.
bool within(std::uintptr_t p, std::uintptr_t top, std::size_t bytes) {
  return p < top && p >= top - bytes;
}

class CallOnStackTest : public ::testing::Test {
 protected:
  void SetUp() override { stack_ = StackPool::for_this_thread().allocate(kBytes); }
  void TearDown() override { StackPool::for_this_thread().deallocate(stack_); }
  static constexpr std::size_t kBytes = 64 * 1024;
  boost::context::stack_context stack_{};
};

struct Probe {
  int input = 0;
  std::uintptr_t local = 0;  // where a local of the called function was
};

void* record_and_double(void* arg) {
  auto* probe = static_cast<Probe*>(arg);
  volatile int local = probe->input;
  probe->local = address(const_cast<int*>(&local));
  probe->input = local * 2;
  return probe;
}

TEST_F(CallOnStackTest, RunsTheFunctionOnTheGivenStackAndReturnsItsResult) {
  volatile int caller_local = 7;
  Probe probe{.input = 21};
  void* result = call_on_stack(&probe, record_and_double, stack_.sp);
  EXPECT_EQ(result, &probe);
  EXPECT_EQ(probe.input, 42);
  const bool on_given = within(probe.local, address(stack_.sp), kBytes);
  EXPECT_EQ(on_given, kCallOnStackSwitches);
  if (!kCallOnStackSwitches) {
    // A plain call: the callee's frame sits just below the caller's.
    EXPECT_TRUE(within(probe.local, address(const_cast<int*>(&caller_local)), 4096));
  }
  EXPECT_EQ(caller_local, 7);
  // Back on the caller's stack: a second call starts from the same top again.
  Probe again{.input = 1};
  call_on_stack(&again, record_and_double, stack_.sp);
  EXPECT_EQ(again.local, probe.local);
}

void* throw_runtime_error(void* arg) {
  throw std::runtime_error(static_cast<const char*>(arg));
}

// The trampoline's call-frame information lets the unwinder cross back to the caller's stack.
TEST_F(CallOnStackTest, AnExceptionFromTheFunctionReachesTheCaller) {
  volatile int caller_local = 11;
  char message[] = "from the other stack";
  try {
    call_on_stack(message, throw_runtime_error, stack_.sp);
    FAIL() << "call_on_stack returned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "from the other stack");
  }
  EXPECT_EQ(caller_local, 11);
  Probe probe{.input = 5};
  EXPECT_EQ(call_on_stack(&probe, record_and_double, stack_.sp), &probe);
  EXPECT_EQ(probe.input, 10);
}

// Recursion 256 levels deep with 128 bytes of locals each: about 40 KiB of the 64 KiB stack.
int depth_sum(int level) {
  volatile char pad[128];
  pad[0] = static_cast<char>(level);
  if (level == 0) return pad[0];
  return depth_sum(level - 1) + 1 + pad[0] - static_cast<char>(level);
}

void* deep(void* arg) {
  *static_cast<int*>(arg) = depth_sum(*static_cast<int*>(arg));
  return nullptr;
}

TEST_F(CallOnStackTest, TheFunctionHasTheWholeStackBelowTheTop) {
  int levels = 256;
  call_on_stack(&levels, deep, stack_.sp);
  EXPECT_EQ(levels, 256);
}

// A callback runs inside dispatch, which a process's block starts. With more live processes
// than Simulation's prefetch threshold (256), dispatch must not run on the blocking process's
// stack where call_on_stack switches, and does where it does not (the check is then that this
// test sees where dispatch runs at all).
TEST(DispatchStackTest, DispatchRunsOffTheBlockingProcessStack) {
  Simulation sim;
  for (int i = 0; i < 300; ++i) sim.spawn("sleeper", [&] { sim.sleep_for(Time{10}); });
  // Spawned last, it blocks last before the callback is due: dispatch starts from its block.
  std::uintptr_t process_local = 0;
  std::uintptr_t callback_local = 0;
  sim.spawn("probe", [&] {
    volatile int local = 0;
    process_local = address(const_cast<int*>(&local));
    sim.sleep_for(Time{10});
  });
  sim.schedule_at(Time{5}, [&] {
    volatile int local = 0;
    callback_local = address(const_cast<int*>(&local));
  });
  ASSERT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  ASSERT_NE(process_local, 0u);
  ASSERT_NE(callback_local, 0u);
  // On the process's stack, dispatch and the callback sit a few hundred bytes below the body's
  // frame; another stack from the pool is at least a whole stack (64 KiB) away.
  EXPECT_EQ(within(callback_local, process_local, 16 * 1024), !kCallOnStackSwitches);
}

}  // namespace
}  // namespace racesim::kernel
