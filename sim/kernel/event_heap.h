// The future-event queue of a simulation: a 4-ary min-heap on E::time.
//
// Layout: half the depth of a binary heap, and the four children of a node fill one aligned
// block of 4 * sizeof(E) bytes (128 bytes, two cache lines, for the kernel's 32-byte events):
// the root sits at slot 3 of an aligned array, so the children of node i are slots 4i+4..4i+7.
// A pop reads one block per level instead of the three lines an unaligned group straddles.
//
// Order: by time only, with a branchless selection among the children (heap order on random
// times is unpredictable). Equal times leave in no particular order; the caller restores
// insertion order among them (Simulation::pop_due sorts a due set by sequence number).
//
// Sentinels: every slot past the last event, up to the last child slot a node can have, holds
// the largest time. So every node with a child has four children to compare, and a sift down
// compares them in a fixed, unrolled tree of three minimums, with no bound per child. A
// sentinel never wins: on equal times the lower slot wins, and every event sits below every
// sentinel. The last choice is a mask, not a `?:`: GCC compiles a second select on one
// condition as a branch, which mispredicts on every other level of random times (that version
// ran BM_TimersSteady/1000 11% slower). Measured against the bounded loop: om_noflock_poison at
// 4,096 ranks (a heap of about 3,600 timers; its sift down was 35% of the instructions)
// 386M -> 351M instructions, time level; the cache race on `local`, 64 ranks, 20 seeds, 894M
// -> 866M, BM_OmReadWhileWriteLocal +3% at 8 ranks and +2.4% at 64 (3 alternating rounds).
//
// Measured (medians of 5 alternating runs): against the previous heap (a std::vector ordered on
// a 128-bit (time, seq) key), +9% events/s on BM_Timers/10000 and +6% on BM_Timers/1000, where
// the pop was half of all instructions; that heap in turn ran BM_Timers/1000 about 30% faster
// than std::pop_heap on a binary heap (more instructions, far fewer mispredicted branches).
#pragma once

#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

namespace racesim::kernel {

template <typename E>
class EventHeap {
  static_assert(std::is_trivially_copyable_v<E>, "events are moved with memcpy");
  static constexpr std::size_t kPad = 3;
  static constexpr std::size_t kBlock = 4 * sizeof(E);
  static_assert((kBlock & (kBlock - 1)) == 0, "four events must fill a power-of-two block");

 public:
  EventHeap() = default;
  EventHeap(const EventHeap&) = delete;
  EventHeap& operator=(const EventHeap&) = delete;
  ~EventHeap() { release(); }

  bool empty() const { return n_ == 0; }
  std::size_t size() const { return n_; }
  // The earliest event (one of them, on ties). REQUIRES: !empty().
  const E& top() const { return slots_[kPad]; }
  // Node i in heap order (0 is the top; 1..4 its children). REQUIRES: i < size().
  const E& operator[](std::size_t i) const { return slots_[kPad + i]; }

  void push(const E& ev) {
    if (n_ == cap_) grow();
    E* const h = slots_ + kPad;
    std::size_t i = n_++;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (h[parent].time <= ev.time) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = ev;
  }

  // Removes and returns the top. REQUIRES: !empty().
  E pop() {
    E* const h = slots_ + kPad;
    const E top = h[0];
    const E last = take_last();
    if (n_ > 0) sift_down(last);
    return top;
  }

  // pop() that copies the top straight into `out` (no temporary: a compiler's copy of a
  // temporary event can read it back across the two stores that wrote it, which the store buffer
  // cannot forward). REQUIRES: !empty().
  void pop_into(E& out) {
    std::memcpy(static_cast<void*>(&out), slots_ + kPad, sizeof(E));
    const E last = take_last();
    if (n_ > 0) sift_down(last);
  }
  // Copies the top into `out` as pop_into does and adds `ev` in one pass (a pop then a push,
  // without the push's sift up or the pop's move of the last event). REQUIRES: !empty().
  void replace_top_into(const E& ev, E& out) {
    std::memcpy(static_cast<void*>(&out), slots_ + kPad, sizeof(E));
    sift_down(ev);
  }

  void clear() {
    for (std::size_t i = 0; i < n_; ++i) slots_[kPad + i].time = kSentinel;
    n_ = 0;
  }

  // Keeps the events for which keep(e) is true, then restores the heap order: O(size()).
  // `keep` is called once per event and may change its payload, not its time.
  template <typename Keep>
  void retain(Keep&& keep) {
    E* const h = slots_ + kPad;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (keep(h[i])) h[kept++] = h[i];
    }
    for (std::size_t i = kept; i < n_; ++i) h[i].time = kSentinel;
    n_ = kept;
    // Floyd's construction: each parent sifted down, the last one first.
    for (std::size_t i = n_ / 4 + 1; i-- > 0;) {
      if (4 * i + 1 < n_) sift_down(i, E(h[i]));
    }
  }

 private:
  using Time = decltype(E::time);
  static constexpr Time kSentinel = std::numeric_limits<Time>::max();
  // Slots past the capacity that a node's children can reach: a node with a child has its first
  // child below the capacity, so its last one is at most 3 slots past it.
  static constexpr std::size_t kTail = 3;

  // The last event, its slot made a sentinel. REQUIRES: !empty().
  E take_last() {
    E* const slot = slots_ + kPad + --n_;
    const E last = *slot;
    slot->time = kSentinel;
    return last;
  }
  // Places `ev` in the hole at the root, moving the smaller child up level by level.
  void sift_down(const E& ev) { sift_down(0, ev); }
  // The same from the hole at node i. REQUIRES: the subtrees below i are heaps.
  void sift_down(std::size_t i, const E& ev) {
    E* const h = slots_ + kPad;
    const std::size_t n = n_;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      const E* const c = h + first;  // four children, sentinels past the last event
      const Time t0 = c[0].time, t1 = c[1].time, t2 = c[2].time, t3 = c[3].time;
      const bool b1 = t1 < t0, b3 = t3 < t2;
      const std::size_t k01 = b1 ? 1 : 0, k23 = b3 ? 3 : 2;
      const Time t01 = b1 ? t1 : t0, t23 = b3 ? t3 : t2;
      const bool right = t23 < t01;
      const Time best_time = right ? t23 : t01;
      if (best_time >= ev.time) break;
      // A mask, not a ?: GCC turns a second select on `right` into a branch, which mispredicts
      // on every other level of random times.
      const std::size_t mask = std::size_t{0} - static_cast<std::size_t>(right);
      const std::size_t best = first + ((k23 & mask) | (k01 & ~mask));
      h[i] = h[best];
      i = best;
    }
    h[i] = ev;
  }
  void grow() {
    const std::size_t cap = cap_ == 0 ? 256 : 2 * cap_;
    auto* slots = static_cast<E*>(
        ::operator new((kPad + cap + kTail) * sizeof(E), std::align_val_t{kBlock}));
    if (n_ > 0) std::memcpy(static_cast<void*>(slots + kPad), slots_ + kPad, n_ * sizeof(E));
    for (std::size_t i = n_; i < cap + kTail; ++i) slots[kPad + i].time = kSentinel;
    release();
    slots_ = slots;
    cap_ = cap;
  }
  void release() {
    if (slots_ != nullptr) ::operator delete(slots_, std::align_val_t{kBlock});
    slots_ = nullptr;
  }

  E* slots_ = nullptr;
  std::size_t n_ = 0;
  std::size_t cap_ = 0;
};

}  // namespace racesim::kernel
