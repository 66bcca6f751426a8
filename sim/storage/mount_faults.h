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

  // fs.write: a write of `bytes` to `path` through `part(n, &done)`, which writes n bytes and
  // says how many landed. Without a fault: one part. A writer_stall: the fraction AT, a pause of
  // DURATION (counted in stats.stalls, marked in the trace), the rest; an enospc fault: the
  // fraction AT, then kNoSpace (stats.enospc_errors). `written` receives the bytes written.
  template <class Part>
  FsError write(std::uint64_t bytes, std::uint64_t* written, FsStats& stats, const std::string& path, Part&& part) {
    if (written) *written = 0;
    const WritePlan plan = plan_write(bytes);
    std::uint64_t done = 0;
    if (const FsError e = part(plan.first, &done); e != FsError::kOk) {
      if (written) *written = done;
      return e;
    }
    if (written) *written = plan.first;
    if (plan.no_space) {
      ++stats.enospc_errors;
      return FsError::kNoSpace;
    }
    if (plan.stall > 0) {
      ++stats.stalls;
      sim_.trace_record('i', "fault", "writer stall " + path);
      sim_.sleep_for(plan.stall);
    }
    if (const FsError e = part(bytes - plan.first, &done); e != FsError::kOk) {
      if (written) *written = plan.first + done;
      return e;
    }
    if (written) *written = bytes;
    return FsError::kOk;
  }

  // The caller's slow_storage factor (1 without one), drawn per metadata operation and transfer.
  double slowness();

 private:
  // The active fault of `kind` for the calling process's rank on this mount that fires at this
  // site (with `decide_firing`; without, armed only: the caller asks FaultSeam::fires), or nullptr.
  kernel::ActiveFault* fault(std::string_view kind, bool decide_firing = true) {
    return seam_ == nullptr || !seam_->has_kind(kind) ? nullptr : find(kind, decide_firing);
  }
  kernel::ActiveFault* find(std::string_view kind, bool decide_firing);
  FsError op_slow();
  // How a write of `bytes` goes: `first` bytes, then a pause of `stall` and the rest, or ENOSPC.
  struct WritePlan {
    std::uint64_t first = 0;
    kernel::Time stall = 0;
    bool no_space = false;
  };
  WritePlan plan_write(std::uint64_t bytes);

  kernel::Simulation& sim_;
  kernel::FaultSeam* seam_ = nullptr;
  std::string mount_;
};

}  // namespace racesim::storage
