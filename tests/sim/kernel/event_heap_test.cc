#include "sim/kernel/event_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace racesim::kernel {
namespace {

struct Ev {
  std::int64_t time;
  std::uint64_t seq;
  void* payload;
  std::uint64_t pad;
};

TEST(EventHeapTest, PopsInTimeOrderAgainstASortedReference) {
  // Random pushes, pops (pop and pop_into) and replacements of the top (more pushes than pops,
  // then a drain), with many equal times.
  EventHeap<Ev> heap;
  std::vector<std::int64_t> reference;  // kept sorted
  std::uint64_t x = 7;
  std::uint64_t seq = 0;
  std::int64_t now = 0;
  for (int step = 0; step < 200000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((x >> 60) < 10 || heap.empty()) {
      const std::int64_t t = now + static_cast<std::int64_t>((x >> 33) % 500);
      heap.push(Ev{t, seq++, nullptr, 0});
      reference.insert(std::upper_bound(reference.begin(), reference.end(), t), t);
    } else if ((x >> 60) < 13) {
      // replace_top_into: the top out and a new event in, as a pop then a push.
      Ev e{};
      const std::int64_t t = heap.top().time + static_cast<std::int64_t>((x >> 33) % 500);
      heap.replace_top_into(Ev{t, seq++, nullptr, 0}, e);
      ASSERT_EQ(e.time, reference.front()) << "step " << step;
      reference.erase(reference.begin());
      reference.insert(std::upper_bound(reference.begin(), reference.end(), t), t);
      now = e.time;
    } else {
      ASSERT_EQ(heap.top().time, reference.front());
      Ev e{};
      if ((x >> 59) % 2 == 0) {
        e = heap.pop();
      } else {
        heap.pop_into(e);
      }
      ASSERT_EQ(e.time, reference.front()) << "step " << step;
      reference.erase(reference.begin());
      now = e.time;  // simulations only schedule at or after now
    }
    ASSERT_EQ(heap.size(), reference.size());
  }
  while (!heap.empty()) {
    ASSERT_EQ(heap.pop().time, reference.front());
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(reference.empty());
}

TEST(EventHeapTest, EveryNodesChildrenShareOneAlignedBlock) {
  EventHeap<Ev> heap;
  for (int i = 0; i < 5000; ++i) heap.push(Ev{5000 - i, static_cast<std::uint64_t>(i), nullptr, 0});
  for (std::size_t i = 0; 4 * i + 4 < heap.size(); ++i) {
    const auto first = reinterpret_cast<std::uintptr_t>(&heap[4 * i + 1]);
    EXPECT_EQ(first % (4 * sizeof(Ev)), 0u) << "children of node " << i;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&heap[4 * i + 4]) - first, 3 * sizeof(Ev));
  }
  EXPECT_EQ(heap.top().time, 1);
  heap.clear();
  EXPECT_TRUE(heap.empty());
}

}  // namespace
}  // namespace racesim::kernel
