// A device's communication engine: collectives are enqueued per communicator (one in-order
// stream per communicator, as ProcessGroupNCCL/HCCL keep one stream per group and device) and
// executed one at a time by the device, in the order in which they become ready. A collective
// becomes ready when its input exists: `ready_after` the enqueue (the device work that produces
// it, such as slicing a broadcast tensor).
//
// This is where an order inversion across communicators comes from: two ranks enqueue the same
// collectives in the same program order, but on one rank the input of scatter #k on a
// sub-communicator is ready only after broadcast #k+1 on world was enqueued, so that device
// starts the broadcast first and waits in it for the other rank, whose device started the
// scatter and waits for the first: a cycle, reported as a deadlock (or, with an exec timeout,
// as the timeout of the host's sync). With every collective on one communicator the order is
// the program order on every rank and no cycle can form.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "sim/collective/engine.h"
#include "sim/kernel/sync.h"

namespace racesim::collective {

class CommQueue final : public kernel::NamedWaitable {
 public:
  // Spawns the executor, a daemon named "rank R/comm", registered with the engine for rank R.
  CommQueue(kernel::Simulation& sim, Engine& engine, int rank);
  CommQueue(const CommQueue&) = delete;
  CommQueue& operator=(const CommQueue&) = delete;

  // Enqueues `call` on `comm` for this rank (the host does not wait).
  void enqueue(Communicator& comm, const Call& call, Time ready_after = 0);
  // Blocks the host until every collective enqueued so far on `comm` (nullptr: on every
  // communicator) has completed. Errors: the timeout (naming what the executor is blocked in)
  // or a failed collective.
  kernel::Status sync(const Communicator* comm, Time timeout = kernel::kTimeMax);
  std::uint64_t pending() const { return pending_; }

  void releasers(const kernel::WaitQueue&, const kernel::Process&,
                 std::vector<const kernel::Process*>& out) const override;

 private:
  struct Item {
    Call call;
    Time ready = 0;
    std::uint64_t order = 0;
  };
  struct Lane {
    Communicator* comm = nullptr;
    std::deque<Item> items;
    std::uint64_t enqueued = 0, completed = 0;
  };
  Lane& lane(Communicator& comm);
  void loop();
  bool reached(const std::map<const Communicator*, std::uint64_t>& targets) const;

  Engine& engine_;
  int rank_;
  std::vector<Lane> lanes_;  // in order of first use (deterministic)
  std::uint64_t next_order_ = 0;
  std::uint64_t pending_ = 0;
  kernel::Status failed_ = kernel::Status::ok();
  kernel::Process* executor_ = nullptr;
  kernel::WaitQueue idle_{this, "idle"};
  kernel::WaitQueue syncers_{this, "sync"};
  std::map<const kernel::Process*, std::map<const Communicator*, std::uint64_t>> targets_;
};

}  // namespace racesim::collective
