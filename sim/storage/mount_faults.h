// The storage fault points of one mount (the kinds of faults.h), where a mount's operations meet
// them. Shared by the model (FileSystem) and the live mount (src/live/real_files.h), so a fault
// plan bites the same way in a simulation and on a real directory. Each point asks the run's
// kernel::FaultSeam for the calling process's rank's active fault of a kind aimed at this mount,
// samples its arguments from that fault's own stream and counts a hit (ActiveFault::bit).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/kernel/faults.h"
#include "sim/kernel/simulation.h"
#include "sim/storage/files.h"

namespace racesim::storage {

class MountFaults {
 public:
  explicit MountFaults(kernel::Simulation& sim) : sim_(sim) {}

  // The run's seam (nullptr: no faults) and the mount's name as faults aim at it ("cache").
  void set(kernel::FaultSeam* seam, std::string mount) {
    seam_ = seam;
    mount_ = std::move(mount);
  }

  // fs.op, at the start of every operation: the caller's latency spike (it sleeps EXTRA when the
  // operation starts in [AT, AT+DURATION)), then its eio fault: kIo when it bites, else kOk.
  // Inline: every operation of every run passes here, almost always with no fault active.
  // REQUIRES: called from a simulated process.
  FsError op() { return seam_ == nullptr || seam_->empty() ? FsError::kOk : op_slow(); }

  // fs.write: how a write of `bytes` goes. `first` bytes, then either a pause of `stall`
  // (writer_stall: after the fraction AT) and the rest, or ENOSPC (`no_space`, enospc: after the
  // fraction AT). Without either fault: first == bytes, no stall, no ENOSPC.
  struct WritePlan {
    std::uint64_t first = 0;
    kernel::Time stall = 0;
    bool no_space = false;
  };
  WritePlan write(std::uint64_t bytes);

  // The caller's slow_storage factor (1 without one), drawn per metadata operation and transfer.
  double slowness();

 private:
  // The active fault of `kind` for the calling process's rank on this mount, or nullptr.
  kernel::ActiveFault* fault(std::string_view kind) {
    return seam_ == nullptr || !seam_->has_kind(kind) ? nullptr : find(kind);
  }
  kernel::ActiveFault* find(std::string_view kind);
  FsError op_slow();

  kernel::Simulation& sim_;
  kernel::FaultSeam* seam_ = nullptr;
  std::string mount_;
};

}  // namespace racesim::storage
