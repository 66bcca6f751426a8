// The cluster family: the run's devices (one per rank), the collective engine with one comm
// queue per rank, and the steps that use them (`collective`, `record`).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/collective/carried_values.h"
#include "sim/collective/comm_queue.h"
#include "sim/collective/engine.h"
#include "sim/device/device.h"
#include "sim/runtime/dtensor.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/language/platform.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

// The run's devices (one per rank), its collective engine and the ranks' comm queues, each
// asking the run's fault seam. Created on first use (run.model<ClusterRuntime>()).
class ClusterRuntime final : public ModelState {
 public:
  explicit ClusterRuntime(RunState& run);
  collective::Engine& engine() { return *engine_; }
  device::Device& device(int rank);
  collective::CommQueue& queue(int rank);
  // The communicator "world", or the group of `rank` along a dimension of the mesh
  // [ep, fsdp] ("ep", "fsdp"); a 1-D group over every rank is world itself, as DeviceMesh
  // reuses the default process group. O(1) once the group is known; the first call for a group
  // costs O(m log m) for its m members (the engine sorts them) and fills every member's slot.
  collective::Communicator& comm(const std::string& name, int rank);
  // The values collectives carry (`value:` in a collective step).
  collective::CarriedValues& carried() { return carried_; }
  int world() const { return world_; }
  const Platform& platform() const { return platform_; }
  // collective.count, collective.bytes_moved, collective.wait_s (the longest wait of a rank),
  // device.peak_bytes (the largest peak of a rank).
  void metrics(std::map<std::string, double>& out) const override;
  // Where each rank's collectives stand (ranks in a collective only).
  void explain(std::vector<std::string>& lines) const override;
  // Collectives whose members issued different calls: the first, and how many more.
  std::string deadlock_cause() const override;
  // A group restart: communicators formed anew (a new engine, every sequence number from 1),
  // devices fresh; the collectives' counts and the devices' peak so far are kept.
  void group_restarted() override;

 private:
  void start_engine();
  RunState& run_;
  kernel::Simulation& sim_;
  const Platform& platform_;
  int world_;
  kernel::FaultSeam* faults_;
  std::unique_ptr<collective::Engine> engine_;
  // Earlier groups' engines, queues and devices (group_restarted), and what they counted.
  struct Generation {
    std::unique_ptr<collective::Engine> engine;
    std::vector<std::unique_ptr<collective::CommQueue>> queues;
    std::vector<std::unique_ptr<device::Device>> devices;
  };
  std::vector<Generation> graveyard_;
  collective::Stats retired_;
  double retired_wait_s_ = 0, retired_peak_ = 0;
  bool any_device_ = false;
  collective::CarriedValues carried_;
  std::vector<std::unique_ptr<device::Device>> devices_;        // by rank, created on first use
  std::vector<std::unique_ptr<collective::CommQueue>> queues_;  // by rank, created on first use
  collective::Communicator* world_comm_ = nullptr;
  std::vector<collective::Communicator*> by_rank_[2];  // ep, fsdp groups per rank
};

// Declares ClusterRuntime's collective metrics (0 in a run that records none), for every
// primitive that uses it (PrimitiveInfo::declares); device.peak_bytes is declared by the steps
// that use a device.
void declare_cluster_metrics(Compiler& c);

}  // namespace racesim::scenario
