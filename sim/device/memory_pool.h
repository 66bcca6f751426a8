// A memory with a capacity: allocations by handle, bytes in use, the peak, and an out-of-memory
// error that names what was asked, what is in use and the capacity. A device's memory
// (device.h) and a node's host memory (host_memory.h) are each one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/kernel/status.h"

namespace racesim::device {

class MemoryPool {
 public:
  // `name` says whose memory it is in errors: "device memory on rank 3".
  MemoryPool(std::string name, std::uint64_t capacity_bytes) : name_(std::move(name)), capacity_(capacity_bytes) {}

  // Allocates `bytes`; beyond the capacity, the error "out of NAME: WHAT needs 4 GiB, 60 GiB of
  // 64 GiB in use" and nothing changes. Returns a handle for free(). O(1).
  kernel::Result<std::uint64_t> alloc(std::uint64_t bytes, const std::string& what);
  // Frees what `handle` holds and returns its bytes; a handle already freed (or never returned)
  // is ignored (0). O(1).
  std::uint64_t free(std::uint64_t handle);

  std::uint64_t capacity_bytes() const { return capacity_; }
  std::uint64_t used_bytes() const { return used_; }  // <= capacity_bytes(), always
  std::uint64_t peak_bytes() const { return peak_; }  // the most in use at once

 private:
  std::string name_;
  std::uint64_t capacity_;
  std::uint64_t used_ = 0, peak_ = 0;
  // Live allocations: a handle is (generation << 32) | slot. A freed slot is reused with the next
  // generation, so a stale handle never frees its successor, and the table stays as large as the
  // most allocations live at once. (A std::map keyed by a running handle cost a cache miss per
  // level at thousands of ranks: 26% of a DTensor run at 4,096 ranks, bench/README.md.)
  struct Allocation {
    std::uint64_t bytes = 0;
    std::uint32_t generation = 1;
    bool live = false;
  };
  std::vector<Allocation> allocations_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace racesim::device
