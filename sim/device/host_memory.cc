// A node's host memory (see host_memory.h).
#include "sim/device/host_memory.h"

#include <algorithm>
#include <cassert>

namespace racesim::device {

HostMemory::HostMemory(int node, const HostConfig& config)
    : config_(config), memory_("host memory on node " + std::to_string(node), config.memory) {
  assert(config.pin_bandwidth > 0 && config.pageable_bandwidth > 0 && "host rates are positive");
}

kernel::Result<std::uint64_t> HostMemory::alloc(std::uint64_t bytes, bool pinned, const std::string& what) {
  auto h = memory_.alloc(bytes, what);
  if (h && pinned) {
    pinned_ += bytes;
    pinned_peak_ = std::max(pinned_peak_, pinned_);
  }
  assert(pinned_ <= memory_.used_bytes() && "pinned memory is part of the memory in use");
  return h;
}

void HostMemory::free(std::uint64_t handle, bool pinned) {
  const std::uint64_t bytes = memory_.free(handle);
  if (pinned) {
    assert(pinned_ >= bytes && "a pinned allocation's bytes are counted pinned");
    pinned_ -= bytes;
  }
}

kernel::Time HostMemory::pin_time(std::uint64_t bytes) const { return kernel::transfer_time(static_cast<double>(bytes), config_.pin_bandwidth); }

kernel::Time HostMemory::copy_time(std::uint64_t bytes, bool pinned, double link_bandwidth) const {
  assert(link_bandwidth > 0 && "copy_time REQUIRES a positive link rate");
  return kernel::transfer_time(static_cast<double>(bytes),
                               pinned ? link_bandwidth : std::min(link_bandwidth, config_.pageable_bandwidth));
}

}  // namespace racesim::device
