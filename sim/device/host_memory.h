// A node's host memory, shared by its ranks: one capacity for pageable and pinned (page-locked)
// allocations, with the peak of each. Pinning costs time (the pages are locked one by one, as
// cudaHostAlloc and tensor.pin_memory() do); a copy between the device and a pinned buffer runs
// at the device's link rate, one from or to pageable memory at most at the host's pageable rate
// (the driver stages it through a pinned bounce buffer of its own). What async checkpoint saves
// hold: the staging buffers a device-to-host copy fills while the training goes on.
#pragma once

#include <cstdint>
#include <string>

#include "sim/device/memory_pool.h"
#include "sim/host/cpu_scheduler.h"
#include "sim/kernel/time.h"

namespace racesim::device {

struct HostConfig {
  std::uint64_t memory = 2ull << 40;  // bytes per node
  double pin_bandwidth = 10e9;        // bytes/s page-locked by a pinned allocation
  double pageable_bandwidth = 10e9;   // bytes/s at most for a copy from or to pageable memory
  host::CpuConfig cpu;                // the node's cores (off unless cores are set)
  // With cores: compute steps sleep (as a live run has them: a scaled sleep) rather than run
  // on the cores, which then run the other host work only (storage copies, compiles, analysis).
  bool compute_sleeps = false;
};

class HostMemory {
 public:
  // `node` names it in errors: "host memory on node 0". REQUIRES: config's rates > 0.
  HostMemory(int node, const HostConfig& config);

  // Allocates `bytes`, pinned or pageable; beyond the node's capacity, the error "out of host
  // memory on node 0: WHAT needs ..." and nothing changes. Returns a handle for free().
  kernel::Result<std::uint64_t> alloc(std::uint64_t bytes, bool pinned, const std::string& what);
  // Frees what `handle` holds (`pinned` as it was allocated); a stale handle is ignored.
  void free(std::uint64_t handle, bool pinned);
  // How long pinning `bytes` takes.
  kernel::Time pin_time(std::uint64_t bytes) const;
  // How long a copy of `bytes` between the device (its link at `link_bandwidth` bytes/s) and a
  // buffer takes: the link's rate for pinned memory, at most the pageable rate otherwise.
  kernel::Time copy_time(std::uint64_t bytes, bool pinned, double link_bandwidth) const;

  std::uint64_t used_bytes() const { return memory_.used_bytes(); }
  std::uint64_t peak_bytes() const { return memory_.peak_bytes(); }
  std::uint64_t pinned_bytes() const { return pinned_; }
  std::uint64_t pinned_peak_bytes() const { return pinned_peak_; }

 private:
  HostConfig config_;
  MemoryPool memory_;
  std::uint64_t pinned_ = 0, pinned_peak_ = 0;
};

}  // namespace racesim::device
