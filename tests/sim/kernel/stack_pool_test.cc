// The stack pool's allocator for process fibers (sim/kernel/stack_pool.h): stacks start at their
// page-aligned top, with their full usable size, and go back to the pool whole.
#include "sim/kernel/stack_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace racesim::kernel {
namespace {

std::uintptr_t page_offset(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096; }

TEST(PooledStackTest, StacksStartAtTheirPageAlignedTopAndGoBackWhole) {
  StackPool& pool = StackPool::for_this_thread();
  const std::uint64_t in_use = pool.stats().stacks_in_use;
  PooledStack alloc(64 * 1024);
  std::vector<boost::context::stack_context> stacks;
  for (int i = 0; i < 3; ++i) {
    stacks.push_back(alloc.allocate());
    EXPECT_EQ(page_offset(stacks.back().sp), 0u);
    EXPECT_EQ(stacks.back().size, 64u * 1024);
  }
  EXPECT_EQ(pool.stats().stacks_in_use, in_use + 3);
  const void* first_top = stacks.front().sp;
  for (auto it = stacks.rbegin(); it != stacks.rend(); ++it) alloc.deallocate(*it);
  EXPECT_EQ(pool.stats().stacks_in_use, in_use);
  // The next stack handed out is the last freed (the first allocated), whole.
  boost::context::stack_context again = alloc.allocate();
  EXPECT_EQ(again.sp, first_top);
  EXPECT_EQ(again.size, 64u * 1024);
  alloc.deallocate(again);
}

}  // namespace
}  // namespace racesim::kernel
