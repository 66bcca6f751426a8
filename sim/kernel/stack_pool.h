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

// The StackAllocator concept of Boost.Context over the thread's pool: every stack starts at its
// page-aligned top. (Starting alternate stacks 256 bytes lower, so that blocked frames sit at two
// page offsets, made the ring and barrier workloads 1.3 to 1.9 times slower at 10,000 processes
// and gained no scenario anything: bench/README.md, "What was tried and not kept".)
class PooledStack {
 public:
  explicit PooledStack(std::size_t bytes) : bytes_(bytes) {}
  boost::context::stack_context allocate() { return StackPool::for_this_thread().allocate(bytes_); }
  // REQUIRES: `sc` came from allocate().
  void deallocate(boost::context::stack_context& sc) noexcept { StackPool::for_this_thread().deallocate(sc); }

 private:
  std::size_t bytes_;
};

}  // namespace racesim::kernel
