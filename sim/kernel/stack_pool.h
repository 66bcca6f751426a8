// Fiber stacks from a per-thread pool of mmap'd slabs.
//
// Why: a simulation may hold 100,000 processes, and a sweep runs thousands of simulations per
// thread. Slabs are mapped with MAP_NORESERVE, so a stack costs resident memory only for the
// pages its fiber touches (typically one or two 4 KiB pages for a model process); freed stacks
// go back to a free list and are reused by the next simulation on the same thread, so a sweep
// does not map and fault in fresh memory for every seed.
//
// Each stack has a PROT_NONE guard page below it so an overflow faults instead of corrupting a
// neighbour. Linux limits the number of memory mappings (vm.max_map_count, 65530 by default) and
// each guard splits a mapping, so guards go to the first max_map_count / 4 stacks of a thread
// (16,382 by default) and later stacks have none; stats().guarded_stacks says how many have one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <boost/context/stack_context.hpp>

namespace racesim::kernel {

// What StackPool::allocate throws when the system refuses memory for more stacks (an address-space
// limit, vm.max_map_count, memory exhausted): a std::bad_alloc that says how much it asked for.
class StackMapError : public std::bad_alloc {
 public:
  explicit StackMapError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class StackPool {
 public:
  struct Stats {
    std::uint64_t stacks_created = 0;  // ever mapped
    std::uint64_t stacks_in_use = 0;
    std::uint64_t guarded_stacks = 0;
    std::uint64_t bytes_mapped = 0;  // virtual, including guard pages
  };

  StackPool() = default;
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // The calling thread's pool.
  static StackPool& for_this_thread();

  // A stack of `bytes` usable bytes (rounded up to whole pages). Throws StackMapError if the
  // system refuses the memory; the pool is unchanged then.
  boost::context::stack_context allocate(std::size_t bytes);
  // Gives back a stack allocate() handed out. Never allocates or throws (the free list has room
  // for every stack the pool mapped), so a fiber's exit can call it when memory is short.
  void deallocate(boost::context::stack_context& sc) noexcept;

  const Stats& stats() const { return stats_; }
  // The stack handed out by the latest allocate() (its top and usable size).
  const boost::context::stack_context& last_allocated() const { return last_; }
  // The deepest any stack of this pool has been used, in bytes from its top: a high-water mark
  // for choosing ProcessOptions::stack_bytes. Scans resident pages only (mincore), from the
  // bottom of each stack to the first non-zero word; cost proportional to the pool's size, so
  // call it from diagnostics, not on a hot path.
  std::size_t deepest_use_bytes() const;

 private:
  void grow(std::size_t bytes);

  struct Slab {
    char* base;
    std::size_t len;
    std::size_t stack_bytes;  // usable bytes per stack (each preceded by a guard page)
  };
  std::map<std::size_t, std::vector<void*>> free_;  // usable size -> stack tops
  std::vector<Slab> slabs_;
  Stats stats_;
  boost::context::stack_context last_;
};

// Default usable stack size for simulated processes. Small so that 100,000 processes fit
// (virtual 64 KiB each; resident only what is touched); sanitizers need far more per frame.
#if defined(RACESIM_SANITIZE) || defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kDefaultStackBytes = 512 * 1024;
#else
inline constexpr std::size_t kDefaultStackBytes = 64 * 1024;
#endif

// The StackAllocator concept of Boost.Context over the thread's pool, with stack colouring.
//
// Colouring: a pool's stacks lie a fixed stride apart (64 KiB + a guard page by default), so the
// frames where every process blocks sit at the same offset in their pages and compete for the
// same few sets of each cache (the L1's sets repeat every 4 KiB, this VM's L2's every 64 KiB:
// 16 places for thousands of stacks). Each stack of at least kColourFromBytes therefore starts
// kColourStepBytes times 0 to kColours - 1 below its top, in turn. The usable size shrinks by
// that much (256 bytes at most). Eight colours of 320 bytes gave BM_BarrierSteady +12% but pushed
// the frames of the scenarios' ranks across a page boundary (+4 KB resident per rank); two
// colours keep their page count.
class PooledStack {
 public:
  // Boost.Context puts a fiber's record, and so its first frame, 256-byte aligned below the
  // top: finer steps collapse onto these.
  static constexpr std::size_t kColours = 2;
  static constexpr std::size_t kColourStepBytes = 256;
  static constexpr std::size_t kColourFromBytes = 32 * 1024;

  explicit PooledStack(std::size_t bytes) : bytes_(bytes) {}
  // Stacks from the pool keep their page-aligned top; a coloured one starts below it.
  boost::context::stack_context allocate() {
    boost::context::stack_context sc = StackPool::for_this_thread().allocate(bytes_);
    if (sc.size >= kColourFromBytes) {
      static thread_local std::size_t next_colour = 0;
      const std::size_t colour_bytes = next_colour * kColourStepBytes;
      next_colour = (next_colour + 1) % kColours;
      sc.sp = static_cast<char*>(sc.sp) - colour_bytes;
      sc.size -= colour_bytes;
    }
    return sc;
  }
  // REQUIRES: `sc` came from allocate() (its top, rounded up to a page, is the pool's).
  void deallocate(boost::context::stack_context& sc) noexcept {
    const auto sp = reinterpret_cast<std::uintptr_t>(sc.sp);
    const std::uintptr_t top = (sp + kPageBytes - 1) & ~std::uintptr_t{kPageBytes - 1};
    sc.size += top - sp;
    sc.sp = reinterpret_cast<void*>(top);
    StackPool::for_this_thread().deallocate(sc);
  }

 private:
  // A stack's top from the pool is aligned to the system page, at least this; colours stay
  // below one such page.
  static constexpr std::uintptr_t kPageBytes = 4096;
  static_assert((kColours - 1) * kColourStepBytes < kPageBytes);
  std::size_t bytes_;
};

}  // namespace racesim::kernel
