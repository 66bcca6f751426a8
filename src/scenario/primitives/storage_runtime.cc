// The storage family's state in one run (storage_runtime.h).
#include "src/scenario/primitives/storage_runtime.h"

#include "src/scenario/compile/compiler.h"
#include "src/scenario/primitives/host.h"

#include "sim/kernel/bytes.h"

namespace racesim::scenario {

storage::Files* StorageRuntime::find(const MountSpec& m, int instance) const {
  const auto& of_mount = fs_[mount_index(m)];
  const auto slot = static_cast<std::size_t>(instance + 1);
  return slot < of_mount.size() ? of_mount[slot].get() : nullptr;
}

StorageRuntime::Target StorageRuntime::at(const std::string& path, int rank) {
  const int node = platform_.node_of(rank);
  const MountSpec* m = platform_.mount_for(path);
  if (!m) return {nullptr, node};
  const int i = instance(*m, node);
  auto& of_mount = fs_[mount_index(*m)];
  const auto index = static_cast<std::size_t>(i + 1);
  if (index >= of_mount.size()) of_mount.resize(index + 1);
  std::unique_ptr<storage::Files>& fs = of_mount[index];
  if (!fs) {
    const std::string name = i < 0 ? m->name : m->name + "@node" + std::to_string(i);
    if (live_) {
      fs = live_->mount(*m, name);
    } else {
      auto model = std::make_unique<storage::FileSystem>(sim_, name, m->config, sim_.stream("fs/" + name));
      // Copies through the page cache run on the client's node's cores when the platform has them.
      if (host_cpus_on(platform_)) model->set_cpus([this](int client) { return &node_cpu(run_, client); });
      fs = std::move(model);
    }
    fs->set_faults(faults_, m->name);
  }
  return {fs.get(), node};
}

void StorageRuntime::release(const kernel::Process* p, int rank) {
  // A process of rank `rank` reached only the file systems at() gives its node: one per mount,
  // not every node's (at 4,096 ranks, 512 local file systems).
  const int node = platform_.node_of(rank);
  for (const MountSpec& m : platform_.mounts) {
    if (storage::Files* fs = find(m, instance(m, node))) fs->release(p);
  }
  open_.erase(open_.lower_bound({rank, std::string()}), open_.lower_bound({rank + 1, std::string()}));
}

void StorageRuntime::explain(std::vector<std::string>& lines) const {
  for (const auto& [key, f] : open_) {
    lines.push_back("rank " + std::to_string(key.first) + " has " + key.second + " open for writing (" +
                    kernel::format_bytes(f.written) + " of " + kernel::format_bytes(f.size) + " written)");
  }
}

namespace {

// What one of a mount's file systems reports at the end of a run.
struct FsReport {
  const storage::FsStats& stats;
  storage::FsContents contents;
};

// The counters every mount reports (fs.MOUNT.NAME), summed over a local mount's nodes.
struct FsCounter {
  const char* name;
  double (*value)(const FsReport&);
};
constexpr FsCounter kFsCounters[] = {
    {"meta_ops", [](const FsReport& r) { return static_cast<double>(r.stats.meta_ops); }},
    {"bytes_written", [](const FsReport& r) { return static_cast<double>(r.stats.bytes_written); }},
    {"bytes_read", [](const FsReport& r) { return static_cast<double>(r.stats.bytes_read); }},
    {"disk_full", [](const FsReport& r) { return static_cast<double>(r.stats.disk_full); }},
    {"files_at_end", [](const FsReport& r) { return static_cast<double>(r.contents.files); }},
    {"bytes_at_end", [](const FsReport& r) { return static_cast<double>(r.contents.bytes); }},
    {"torn_at_end", [](const FsReport& r) { return static_cast<double>(r.contents.torn); }},
};

// The CPU time of a mount's reads and writes, where its file system accounts it
// (FsStats::cpu_accounted: under host CPUs, and live).
constexpr FsCounter kCpuCounters[] = {
    {"read_cpu_s", [](const FsReport& r) { return kernel::to_seconds(r.stats.read_cpu); }},
    {"write_cpu_s", [](const FsReport& r) { return kernel::to_seconds(r.stats.write_cpu); }},
};

// Where each read and write is measured one by one (FsStats::costs_recorded: a live run), its
// kind's sums (fs.MOUNT.cost.KIND.FIELD), for a fit of each kind's fixed cost and rate
// (src/live/cost_fit.h); a kind no operation had is left out.
void add_costs(const std::string& prefix, const storage::FsStats& stats, std::map<std::string, double>& out) {
  for (const storage::CostKind& k : storage::kCostKinds) {
    const storage::CostSums& sums = stats.*k.sums;
    if (sums.count == 0) continue;
    for (const storage::CostField& f : storage::kCostFields) {
      out[prefix + "cost." + k.name + "." + f.name] += sums.*f.value;
    }
    if (sums.running > 0) out[prefix + "cost." + k.name + ".running"] += sums.running;
  }
}

// The counters of a mount with a metadata server (a shared mount: one server, one instance).
struct MdsCounter {
  const char* name;
  double (*value)(const storage::MetadataServer&, kernel::Time now);
};
constexpr MdsCounter kMdsCounters[] = {
    {"mds_queue_peak", [](const storage::MetadataServer& m, kernel::Time) { return static_cast<double>(m.stats().queue_peak); }},
    {"mds_queue_mean", [](const storage::MetadataServer& m, kernel::Time now) { return m.queue_mean(now); }},
    {"mds_wait_max_s", [](const storage::MetadataServer& m, kernel::Time) { return kernel::to_seconds(m.stats().wait_max); }},
    {"mds_wait_mean_s",
     [](const storage::MetadataServer& m, kernel::Time) {
       const auto& st = m.stats();
       return st.ops ? kernel::to_seconds(st.wait_total) / static_cast<double>(st.ops) : 0.0;
     }},
};

}  // namespace

void StorageRuntime::metrics(std::map<std::string, double>& out) const {
  for (std::size_t mi = 0; mi < fs_.size(); ++mi) {
    const std::string prefix = "fs." + platform_.mounts[mi].name + ".";
    for (const auto& fs : fs_[mi]) {  // a local mount's nodes in order
      if (!fs) continue;
      const FsReport report{fs->stats(), fs->contents()};
      for (const FsCounter& c : kFsCounters) out[prefix + c.name] += c.value(report);
      // Where the CPU time of reads and writes is accounted (a CPU model's charges, a live run's
      // thread clocks): what the two sides spend on a mount's copies, side by side.
      if (report.stats.cpu_accounted) {
        for (const FsCounter& c : kCpuCounters) out[prefix + c.name] += c.value(report);
      }
      if (report.stats.costs_recorded) add_costs(prefix, report.stats, out);
      if (const storage::MetadataServer* mds = fs->metadata_server()) {
        for (const MdsCounter& c : kMdsCounters) out[prefix + c.name] = c.value(*mds, sim_.now());
      }
    }
  }
}

void StorageRuntime::declare_counters(Compiler& c) {
  const Platform* platform = c.platform();
  if (platform == nullptr || !c.first_time("storage: every mount's counters")) return;
  for (const MountSpec& m : platform->mounts) {
    for (const FsCounter& k : kFsCounters) c.declare_counter("fs." + m.name + "." + k.name);
    if (host_cpus_on(*platform)) {  // the model accounts the CPU of reads and writes (metrics())
      for (const FsCounter& k : kCpuCounters) c.declare_counter("fs." + m.name + "." + k.name);
    }
    if (m.config.metadata.threads > 0) {
      for (const MdsCounter& k : kMdsCounters) c.declare_counter("fs." + m.name + "." + k.name);
    }
  }
}

}  // namespace racesim::scenario
