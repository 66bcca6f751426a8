// Mount configurations with round numbers for the storage model's tests.
#pragma once

#include <cstdint>
#include <string>

#include "sim/storage/files.h"

namespace racesim::storage::testing {

inline constexpr std::uint64_t kMiB = 1ull << 20;

// A local mount at `root`: free metadata, a disk of 100 MiB/s (per client and in all), 1 MiB chunks.
inline MountConfig local_mount(std::string root) {
  MountConfig c;
  c.kind = MountKind::kLocal;
  c.root = std::move(root);
  c.meta_latency = 0;
  c.bandwidth = c.client_bandwidth = 100.0 * kMiB;
  c.chunk = kMiB;
  return c;
}

}  // namespace racesim::storage::testing
