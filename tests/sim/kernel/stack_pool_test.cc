// The stack pool's allocator for process fibers (sim/kernel/stack_pool.h): stack colouring.
#include "sim/kernel/stack_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "sim/kernel/simulation.h"

namespace racesim::kernel {
namespace {

std::uintptr_t page_offset(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096; }

// Consecutive stacks start at every colour in turn, below their page-aligned top, and give back
// exactly what the pool handed out: a freed stack is reused whole.
TEST(PooledStackTest, ConsecutiveStacksStartAtEveryColourAndGoBackWhole) {
  StackPool& pool = StackPool::for_this_thread();
  const std::uint64_t in_use = pool.stats().stacks_in_use;
  PooledStack alloc(64 * 1024);
  std::vector<boost::context::stack_context> stacks;
  std::set<std::uintptr_t> offsets;
  for (std::size_t i = 0; i < PooledStack::kColours; ++i) {
    stacks.push_back(alloc.allocate());
    const boost::context::stack_context& sc = stacks.back();
    offsets.insert(page_offset(sc.sp));
    const std::size_t colour = (4096 - page_offset(sc.sp)) % 4096;
    EXPECT_EQ(colour % PooledStack::kColourStepBytes, 0u);
    EXPECT_EQ(sc.size + colour, 64u * 1024);  // the usable bytes end at the colour
  }
  EXPECT_EQ(offsets.size(), PooledStack::kColours);
  const void* first_top = static_cast<char*>(stacks.front().sp) +
                          (4096 - page_offset(stacks.front().sp)) % 4096;
  for (auto it = stacks.rbegin(); it != stacks.rend(); ++it) alloc.deallocate(*it);
  EXPECT_EQ(pool.stats().stacks_in_use, in_use);
  // The pool's free list holds whole stacks again: the next one handed out is the last freed
  // (the first allocated), with its page-aligned top and full size.
  boost::context::stack_context again = pool.allocate(64 * 1024);
  EXPECT_EQ(again.sp, first_top);
  EXPECT_EQ(again.size, 64u * 1024);
  pool.deallocate(again);
}

TEST(PooledStackTest, SmallStacksAreNotColoured) {
  PooledStack alloc(8 * 1024);
  for (int i = 0; i < 3; ++i) {
    boost::context::stack_context sc = alloc.allocate();
    EXPECT_EQ(page_offset(sc.sp), 0u);
    EXPECT_EQ(sc.size, 8u * 1024);
    alloc.deallocate(sc);
  }
}

// What colouring is for: the frames where processes block do not all sit at one page offset.
TEST(PooledStackTest, ProcessesBlockAtDifferentPageOffsets) {
  Simulation sim;
  std::set<std::uintptr_t> offsets;
  for (std::size_t i = 0; i < PooledStack::kColours; ++i) {
    sim.spawn("p", [&] {
      offsets.insert(page_offset(__builtin_frame_address(0)));
      sim.sleep_for(1);
    });
  }
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_EQ(offsets.size(), PooledStack::kColours);
}

}  // namespace
}  // namespace racesim::kernel
