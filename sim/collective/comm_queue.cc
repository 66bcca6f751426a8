#include "sim/collective/comm_queue.h"

namespace racesim::collective {

CommQueue::CommQueue(kernel::Simulation& sim, Engine& engine, int rank)
    : NamedWaitable(sim, "comm queue", "rank " + std::to_string(rank) + "/comm"),
      engine_(engine),
      rank_(rank) {
  executor_ = sim_.spawn(name(), [this] { loop(); },
                         {.daemon = true, .group = "rank " + std::to_string(rank), .lane = "comm"});
  engine_.set_process(rank, executor_);
}

CommQueue::Lane& CommQueue::lane(Communicator& comm) {
  for (Lane& l : lanes_) {
    if (l.comm == &comm) return l;
  }
  lanes_.push_back({&comm, {}, 0, 0});
  return lanes_.back();
}

void CommQueue::enqueue(Communicator& comm, const Call& call, Time ready_after) {
  Lane& l = lane(comm);
  l.items.push_back({call, kernel::Simulation::saturating_add(sim_.now(), ready_after), next_order_++});
  ++l.enqueued;
  ++pending_;
  // It may be waiting for a later deadline than this item's. Once a wake or a timeout ends that
  // wait the kernel takes it out of `idle_`, so two items enqueued at one instant wake it once.
  if (executor_->waiting_in() == &idle_) sim_.wake(executor_);
}

void CommQueue::loop() {
  // Runs until the simulation ends; each pass starts one collective or waits for one to be ready.
  for (;;) {
    Lane* best = nullptr;
    for (Lane& l : lanes_) {
      if (l.items.empty()) continue;
      const Item& h = l.items.front();
      if (!best || h.ready < best->items.front().ready ||
          (h.ready == best->items.front().ready && h.order < best->items.front().order)) {
        best = &l;
      }
    }
    if (!best || best->items.front().ready > sim_.now()) {
      sim_.wait_on(&idle_, best ? best->items.front().ready : kernel::kTimeMax);
      continue;
    }
    const Item item = best->items.front();
    best->items.pop_front();
    Communicator* comm = best->comm;
    kernel::Status st = failed_.is_ok() ? engine_.run(*comm, rank_, item.call) : kernel::Status::ok();
    if (!st.is_ok() && failed_.is_ok()) failed_ = st;
    ++lane(*comm).completed;
    --pending_;
    std::vector<kernel::Process*> ready;
    syncers_.for_each([&](kernel::Process& p) {
      if (reached(targets_.at(&p))) ready.push_back(&p);
    });
    for (kernel::Process* p : ready) sim_.wake(p);
  }
}

bool CommQueue::reached(const std::map<const Communicator*, std::uint64_t>& targets) const {
  for (const Lane& l : lanes_) {
    auto it = targets.find(l.comm);
    if (it != targets.end() && l.completed < it->second) return false;
  }
  return true;
}

kernel::Status CommQueue::sync(const Communicator* comm, Time timeout) {
  std::map<const Communicator*, std::uint64_t> targets;
  for (const Lane& l : lanes_) {
    if (!comm || l.comm == comm) targets[l.comm] = l.enqueued;
  }
  if (!reached(targets)) {
    kernel::Process* self = sim_.current();
    targets_[self] = targets;
    struct Forget {
      std::map<const kernel::Process*, std::map<const Communicator*, std::uint64_t>>& m;
      const kernel::Process* p;
      ~Forget() { m.erase(p); }
    } forget{targets_, self};
    if (sim_.wait_on(&syncers_, sim_.deadline_after(timeout)) == kernel::WaitStatus::kTimeout) {
      const std::string doing = engine_.describe_wait(rank_);
      return kernel::Status::error("exec timeout after " + kernel::format_duration(timeout) +
                                   (doing.empty() ? std::string() : " in " + doing));
    }
  }
  return failed_;
}

void CommQueue::releasers(const kernel::WaitQueue& q, const kernel::Process&,
                          std::vector<const kernel::Process*>& out) const {
  if (&q == &syncers_) out.push_back(executor_);
}

}  // namespace racesim::collective
