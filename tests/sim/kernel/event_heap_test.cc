#include "sim/kernel/event_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
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
    } else if ((x >> 60) == 13 && (x >> 50) % 64 == 0) {
      // retain: drop the events whose seq is a multiple of 3 (times of every kind of depth).
      // The reference loses one instance of each dropped event's time; the pops that follow
      // check the heap against it.
      for (std::size_t i = 0; i < heap.size(); ++i) {
        if (heap[i].seq % 3 != 0) continue;
        const auto at = std::lower_bound(reference.begin(), reference.end(), heap[i].time);
        ASSERT_TRUE(at != reference.end() && *at == heap[i].time);
        reference.erase(at);
      }
      heap.retain([](const Ev& e) { return e.seq % 3 != 0; });
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

TEST(EventHeapTest, RetainKeepsExactlyTheChosenEventsInOrder) {
  EventHeap<Ev> heap;
  std::uint64_t x = 11;
  std::vector<std::int64_t> reference;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto t = static_cast<std::int64_t>((x >> 33) % 1000);
    heap.push(Ev{t, i, nullptr, 0});
    if (i % 3 != 0) reference.push_back(t);
  }
  heap.retain([](const Ev& e) { return e.seq % 3 != 0; });
  std::sort(reference.begin(), reference.end());
  ASSERT_EQ(heap.size(), reference.size());
  for (std::int64_t t : reference) {
    const Ev e = heap.pop();
    ASSERT_EQ(e.time, t);
    ASSERT_NE(e.seq % 3, 0u);
  }
  EXPECT_TRUE(heap.empty());
}

TEST(EventHeapTest, EventsAtTheLargestTimeAreOrderedAmongTheRest) {
  // The slots past the last event hold the largest time (the sift down's sentinels): events at
  // that time too must come out, after all others, and the heap must work again after clear().
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EventHeap<Ev> heap;
  for (int round = 0; round < 2; ++round) {
    for (std::uint64_t i = 0; i < 40; ++i) {
      heap.push(Ev{i % 4 == 0 ? kMax : static_cast<std::int64_t>(100 - i), i, nullptr, 0});
    }
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    int at_max = 0;
    for (int i = 0; i < 20; ++i) {
      const Ev e = heap.pop();
      ASSERT_GE(e.time, last);
      last = e.time;
      at_max += e.time == kMax;
    }
    EXPECT_EQ(at_max, 0);
    EXPECT_EQ(heap.size(), 20u);
    if (round == 0) {
      heap.clear();
      EXPECT_TRUE(heap.empty());
      continue;
    }
    while (!heap.empty()) {
      const Ev e = heap.pop();
      ASSERT_GE(e.time, last);
      last = e.time;
      at_max += e.time == kMax;
    }
    EXPECT_EQ(at_max, 10);
  }
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
