// A memory with a capacity (see memory_pool.h).
#include "sim/device/memory_pool.h"

#include <algorithm>
#include <cassert>

#include "sim/kernel/bytes.h"

namespace racesim::device {

kernel::Result<std::uint64_t> MemoryPool::alloc(std::uint64_t bytes, const std::string& what) {
  assert(used_ <= capacity_ && "memory in use never exceeds the capacity");
  if (bytes > capacity_ - used_) {
    return kernel::Result<std::uint64_t>::error("out of " + name_ + ": " + what + " needs " + kernel::format_bytes(bytes) +
                                                ", " + kernel::format_bytes(used_) + " of " +
                                                kernel::format_bytes(capacity_) + " in use");
  }
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(allocations_.size());
    allocations_.emplace_back();
  }
  Allocation& a = allocations_[slot];
  a.bytes = bytes;
  a.live = true;
  used_ += bytes;
  assert(used_ <= capacity_);
  peak_ = std::max(peak_, used_);
  return (static_cast<std::uint64_t>(a.generation) << 32) | slot;
}

std::uint64_t MemoryPool::free(std::uint64_t handle) {
  const auto slot = static_cast<std::uint32_t>(handle);
  const auto generation = static_cast<std::uint32_t>(handle >> 32);
  if (slot >= allocations_.size()) return 0;
  Allocation& a = allocations_[slot];
  if (!a.live || a.generation != generation) return 0;
  assert(used_ >= a.bytes && "a live allocation's bytes are counted in use");
  used_ -= a.bytes;
  a.live = false;
  ++a.generation;
  free_slots_.push_back(slot);
  return a.bytes;
}

}  // namespace racesim::device
