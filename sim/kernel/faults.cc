// The fault seam (see faults.h).
#include "sim/kernel/faults.h"

#include <cassert>

#include "sim/kernel/simulation.h"

namespace racesim::kernel {

const char* to_string(ResourceKind k) {
  switch (k) {
    case ResourceKind::kMount:
      return "mount";
    case ResourceKind::kComm:
      return "comm";
    case ResourceKind::kLink:
      return "link";
  }
  return "?";
}

bool ActiveFault::hits(std::initializer_list<FaultTarget> resources) const {
  if (aimed_.empty()) return true;
  for (const Aim& a : aimed_) {
    for (const FaultTarget& r : resources) {
      if (a.kind == r.kind && a.name == r.name) return true;
    }
  }
  return false;
}

double ActiveFault::sample(std::string_view arg) {
  for (auto& [name, sampler] : args_) {
    if (name == arg) return sampler(rng_, rank_);
  }
  assert(false && "a fault kind's model asked for an argument it does not declare");
  return 0;
}

ActiveFault& FaultSeam::add(ActiveFault fault) {
  if (!has_kind(fault.kind())) kinds_.push_back(fault.kind());
  active_.push_back(std::move(fault));
  return active_.back();
}

bool ActiveFault::fires(Simulation* sim) {
  if (fires_ >= most_fires_) return false;
  bool on = true;
  if (fire_probability_ < 1) {
    const bool drawn = fire_probability_ > 0 && rng_.uniform01() < fire_probability_;
    on = fire_probability_ > 0 && sim != nullptr ? sim->decide_fault(drawn) : drawn;
  }
  if (on) ++fires_;
  return on;
}

ActiveFault* FaultSeam::armed(std::string_view kind, int rank, std::initializer_list<FaultTarget> resources) {
  if (!has_kind(kind)) return nullptr;
  // Bounded by the number of active faults (a handful per run).
  for (ActiveFault& a : active_) {
    if (a.rank() == rank && a.kind() == kind && a.hits(resources)) return &a;
  }
  return nullptr;
}

const FaultKindSpec& straggler_kind() {
  static const FaultKindSpec k{std::string(kStraggler),
                               "host.compute, device.compute: compute on the rank takes FACTOR times longer",
                               {{"factor", "number", "2", 1, 1e6}}, {}};
  return k;
}

Time FaultSeam::compute_time(int rank, Time d) {
  if (!has_kind(kStraggler)) return d;
  ActiveFault* f = find(kStraggler, rank);
  if (f == nullptr) return d;
  f->bit();
  return scale_time(d, f->sample("factor"));
}

void FaultSeam::bind(const Process* p, int rank) {
  assert(p != nullptr && rank >= 0 && "bind REQUIRES a process and a rank");
  const auto id = static_cast<std::size_t>(p->id());
  if (id >= ranks_.size()) ranks_.resize(id + 1, -1);
  ranks_[id] = rank;
}

int FaultSeam::rank_of(const Process* p) const {
  if (p == nullptr) return -1;
  const auto id = static_cast<std::size_t>(p->id());
  return id < ranks_.size() ? ranks_[id] : -1;
}

}  // namespace racesim::kernel
