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
// that supplied the value). Sections of the device, collective, mesh and model are built in; a
// family adds its own section by registering it (registry.h: add_section), with no edit here.
#pragma once

#include <any>
#include <cassert>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "src/scenario/file/value.h"

#include "sim/collective/engine.h"
#include "sim/device/device.h"
#include "sim/runtime/dtensor.h"
#include "sim/storage/fs.h"
#include "src/scenario/file/quantity.h"
#include "src/scenario/language/scenario.h"

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

class Registry;

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
  // The mount a path or glob pattern written in a scenario is on, when its text decides it: the
  // text before any `${...}` or wildcard names a mount, and no deeper mount could follow
  // ("/data/${d}" or "/data/*" with /data/fast mounted). nullptr otherwise.
  const MountSpec* mount_of_written(const std::string& path) const;
  // A family's own section (registry.h's add_section), as its parse function returned it.
  // REQUIRES: the family registered `name` with a parse function returning a T.
  template <typename T>
  const T& section(const std::string& name) const {
    const auto it = sections_.find(name);
    assert(it != sections_.end() && std::any_cast<T>(&it->second) != nullptr && "section REQUIRES a registered T");
    return *std::any_cast<T>(&it->second);
  }

  // The same, or nullptr when the platform has no section `name` (a Platform built by hand).
  template <typename T>
  const T* find_section(const std::string& name) const {
    const auto it = sections_.find(name);
    return it == sections_.end() ? nullptr : std::any_cast<T>(&it->second);
  }

 private:
  friend std::optional<Platform> parse_platform(const Scenario&, Diagnostics&, const Registry&);
  std::map<std::string, std::any> sections_;
};

// Reads platform values with located errors (the key's override, or its file position); what a
// family's section parser (registry.h) uses too.
class PlatformReader {
 public:
  PlatformReader(const Scenario& sc, Diagnostics& diags);
  void error(const std::string& key, const Value& node, const std::string& message);
  // A scalar of `unit` from `lo` to `hi` (max_of(unit) when not given: no setting wraps an int).
  std::optional<double> quantity(const std::string& key, const Value& node, Unit unit, double lo,
                                 double hi = -1);
  // One of `options`.
  std::optional<std::string> choice(const std::string& key, const Value& node,
                                    std::initializer_list<const char*> options);
  // Reports every key of map `node` outside `allowed`.
  void keys(const std::string& key, const Value& node, const std::vector<std::string_view>& allowed);
  // Whether `node` is a map with only `allowed` keys (reports what is not).
  bool map(const std::string& key, const Value& node, std::span<const std::string_view> allowed);
  bool map(const std::string& key, const Value& node, std::initializer_list<std::string_view> allowed) {
    return map(key, node, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  // A map of optional fields of known units: each present field is parsed and passed to `set`
  // (a field without `set` is allowed and parsed by the caller).
  struct Field {
    const char* name;
    Unit unit;
    double lo;
    std::function<void(double)> set;
    double hi = -1;  // -1: max_of(unit)
  };
  void fields(const std::string& key, const Value& node, const std::vector<Field>& fields);
  // Errors reported so far (to tell whether a call above reported one).
  std::size_t errors() const { return diags_.count(); }

 private:
  const Scenario& sc_;
  Diagnostics& diags_;
};

// The platform of a scenario at a sweep point: the built-in sections, then every family's own
// (`registry`'s sections). Every error is reported with its location; nullopt on error.
// The keys a mount (platform.storage.NAME) takes.
std::span<const std::string_view> mount_keys();
// Whether a mount of `kind` ("local", "nfs", "lustre") takes the setting `key`: false for a
// setting of other kinds only (acregmin on local), true for the rest (their values are checked
// when the platform is parsed).
bool mount_kind_takes(std::string_view kind, std::string_view key);
std::optional<Platform> parse_platform(const Scenario& sc, Diagnostics& diags, const Registry& registry);

}  // namespace racesim::scenario
