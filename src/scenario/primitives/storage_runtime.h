// The storage family's state in one run: the file systems of the platform's mounts (one per
// shared mount, one per node for a `local` mount), the files ranks have open for writing, and
// the counters every mount reports, from one table (storage_runtime.cc) that gives both the
// metrics and the names a compiled program declares.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/storage/fs.h"
#include "src/scenario/execute/live_link.h"
#include "src/scenario/language/platform.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

// The file systems of one run: one per shared mount, and one per node for `local` mounts, each
// asking the run's fault seam for the storage faults; in a live run (run.live()), the real
// directories the live link maps the mounts to. Created on first use (run.model<StorageRuntime>()).
class Compiler;

class StorageRuntime final : public ModelState {
 public:
  explicit StorageRuntime(RunState& run)
      : run_(run), sim_(run.sim()), platform_(run.platform()), faults_(&run.faults()), live_(run.live()),
        fs_(platform_.mounts.size()) {}

  struct Target {
    storage::Files* fs = nullptr;  // nullptr: no mount holds the path
    int client = 0;                     // the rank's node
  };
  Target at(const std::string& path, int rank);

  // A file a rank has open for writing, by (rank, path).
  struct OpenFile {
    storage::Files* fs = nullptr;
    int fd = -1;
    std::uint64_t size = 0;     // the length the writer means to write
    std::uint64_t written = 0;  // what it has written through this descriptor
  };
  std::map<std::pair<int, std::string>, OpenFile>& open_files() { return open_; }

  void release(const kernel::Process* p, int rank) override;
  // fs.MOUNT.NAME for every counter of the table in storage_runtime.cc: the operations and bytes
  // (.meta_ops, .bytes_written, .bytes_read, .disk_full), what the mount holds at the end
  // (.files_at_end, .bytes_at_end, .torn_at_end; a local mount's nodes summed) and, with a
  // metadata server, its queue (.mds_queue_peak, .mds_queue_mean, .mds_wait_max_s, .mds_wait_mean_s);
  // where a file system accounts the CPU time of reads and writes (FsStats::cpu_accounted: under
  // host CPUs, and live), .read_cpu_s and .write_cpu_s.
  void metrics(std::map<std::string, double>& out) const override;
  // Declares the names metrics() records for every mount of the program's platform, from the
  // same table (0 where untouched), once per program however many storage steps ask.
  static void declare_counters(Compiler& c);
  // The files still open for writing, by rank (a writer that never closed).
  void explain(std::vector<std::string>& lines) const override;

 private:
  RunState& run_;
  kernel::Simulation& sim_;
  const Platform& platform_;
  kernel::FaultSeam* faults_;
  LiveLink* live_;
  // Which of mount `m`'s file systems a rank on `node` uses: a local mount is one per node, the
  // others one shared by every node (-1).
  static int instance(const MountSpec& m, int node) { return m.config.kind == storage::MountKind::kLocal ? node : -1; }
  // Where mount `m` (an element of platform_.mounts) is in fs_.
  std::size_t mount_index(const MountSpec& m) const { return static_cast<std::size_t>(&m - platform_.mounts.data()); }
  // The file system of mount `m` for `instance` (as above), or nullptr before at() created it.
  storage::Files* find(const MountSpec& m, int instance) const;
  // By mount (platform_.mounts' order), then instance + 1: a storage step finds its file system
  // in two indexed loads (the cache race looks one up 266,000 times in 20 seeds at 64 ranks).
  std::vector<std::vector<std::unique_ptr<storage::Files>>> fs_;
  std::map<std::pair<int, std::string>, OpenFile> open_;
};

}  // namespace racesim::scenario
