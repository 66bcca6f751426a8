// The platform section of a scenario: how ranks map to nodes and which storage mounts exist.
//
//   platform:
//     ranks_per_node: 8              # default: every rank on one node
//     storage:
//       cache:                       # a mount's name (metrics: fs.cache.meta_ops, ...)
//         kind: nfs                  # local | nfs | lustre
//         mount: /cache              # paths under it are on this mount
//         meta_latency: 1ms          # and meta_jitter, bandwidth, client_bandwidth, chunk,
//         bandwidth: 1GiB/s          # acregmin, acdirmin, flock (flock | localflock | noflock)
//
// Parsed once per compiled program, with every error at its file:line:column (or the --set
// that supplied the value). The device and network models add their sections here as they land.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/collective/engine.h"
#include "sim/device/device.h"
#include "sim/runtime/dtensor.h"
#include "sim/storage/fs.h"
#include "src/scenario/scenario.h"

namespace racesim::scenario {

struct MountSpec {
  std::string name;
  std::string mount;  // the mount point, without a trailing '/'
  storage::MountConfig config;
};

// The parallel layout of the model: expert parallelism `ep` (the fsdp size is ranks / ep).
struct MeshSpec {
  int ep = 1;
};

struct Platform {
  int ranks_per_node = 0;  // 0: every rank on one node
  std::vector<MountSpec> mounts;
  device::DeviceConfig device;          // platform.device
  collective::Config collective;        // platform.collective (ranks_per_node copied in)
  runtime::ModelConfig model;           // platform.model
  MeshSpec mesh;                        // platform.mesh
  int node_of(int rank) const { return ranks_per_node > 0 ? rank / ranks_per_node : 0; }
  // The mount whose mount point is the longest prefix of `path` (at a '/'), or nullptr.
  const MountSpec* mount_for(const std::string& path) const;
};

std::optional<Platform> parse_platform(const Scenario& sc, Diagnostics& diags);

}  // namespace racesim::scenario
