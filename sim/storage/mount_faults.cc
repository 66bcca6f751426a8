// The storage fault points of one mount (see mount_faults.h).
#include "sim/storage/mount_faults.h"

#include <algorithm>

#include "sim/storage/faults.h"

namespace racesim::storage {

kernel::ActiveFault* MountFaults::find(std::string_view kind, bool decide_firing) {
  const int rank = seam_->rank_of(sim_.current());
  const std::initializer_list<kernel::FaultTarget> mount = {{kernel::ResourceKind::kMount, mount_}};
  return decide_firing ? seam_->find(kind, rank, mount) : seam_->armed(kind, rank, mount);
}

FsError MountFaults::op_slow() {
  // A latency spike's sites are the operations that start inside its window.
  if (kernel::ActiveFault* f = fault(kLatencySpike, false)) {
    const double from = f->sample("at");
    const double len = f->sample("duration");
    const auto now = static_cast<double>(sim_.now());
    if (now >= from && now - from < len && seam_->fires(*f)) {
      f->bit();
      const double extra = f->sample("extra");
      sim_.sleep_for(kernel::to_time(extra));
    }
  }
  if (kernel::ActiveFault* f = fault(kEio)) {
    // RATE is a per-operation probability: where it could go both ways, a fault choice.
    const double rate = f->sample("rate");
    const bool drawn = f->rng().bernoulli(rate);
    if (rate > 0 && rate < 1 ? sim_.decide_fault(drawn) : drawn) {
      f->bit();
      return FsError::kIo;
    }
  }
  return FsError::kOk;
}

MountFaults::WritePlan MountFaults::plan_write(std::uint64_t bytes) {
  WritePlan plan;
  plan.first = bytes;
  auto part = [bytes](double at) {
    const double b = std::clamp(at, 0.0, 1.0) * static_cast<double>(bytes);
    return b <= 0 ? std::uint64_t{0} : static_cast<std::uint64_t>(b);
  };
  if (kernel::ActiveFault* s = fault(kWriterStall)) {
    plan.first = part(s->sample("at"));
    plan.stall = kernel::to_time(s->sample("duration"));
    s->bit();
  }
  if (kernel::ActiveFault* s = fault(kEnospc)) {
    plan.first = std::min(plan.first, part(s->sample("at")));
    plan.no_space = true;
    s->bit();
  }
  return plan;
}

double MountFaults::slowness() {
  kernel::ActiveFault* f = fault(kSlowStorage);
  if (f == nullptr) return 1;
  f->bit();
  return std::max(0.0, f->sample("factor"));
}

}  // namespace racesim::storage
