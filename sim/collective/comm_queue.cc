// A device's in-order communication engine (see comm_queue.h).
#include "sim/collective/comm_queue.h"

#include <algorithm>

namespace racesim::collective {

CommQueue::CommQueue(kernel::Simulation& sim, Engine& engine, int rank)
    : NamedWaitable(sim, "comm queue", "rank " + std::to_string(rank) + "/comm"),
      engine_(engine),
      rank_(rank) {
  executor_ = sim_.spawn(name(), [this] { loop(); },
                         {.daemon = true, .group = "rank " + std::to_string(rank), .lane = "comm"});
  engine_.set_process(rank, executor_);
}

namespace {
// The heap order of `fronts_`: std::*_heap keep the largest on top, so "larger" is later.
struct Later {
  template <typename F>
  bool operator()(const F& a, const F& b) const {
    return a.ready != b.ready ? a.ready > b.ready : a.order > b.order;
  }
};
}  // namespace

std::uint32_t CommQueue::find_lane(const Communicator* comm) const {
  if (lanes_.size() <= kScannedLanes) {
    for (std::size_t i = 0; i < lane_comms_.size(); ++i) {
      if (lane_comms_[i] == comm) return static_cast<std::uint32_t>(i);
    }
    return kNoLane;
  }
  auto it = lane_index_.find(comm);
  return it == lane_index_.end() ? kNoLane : it->second;
}

std::uint32_t CommQueue::lane(Communicator& comm) {
  const std::uint32_t found = find_lane(&comm);
  if (found != kNoLane) return found;
  const auto i = static_cast<std::uint32_t>(lanes_.size());
  lanes_.push_back({});
  lane_comms_.push_back(&comm);
  if (lanes_.size() == kScannedLanes + 1) {
    for (std::uint32_t j = 0; j < i; ++j) lane_index_.emplace(lane_comms_[j], j);
  }
  if (lanes_.size() > kScannedLanes) lane_index_.emplace(&comm, i);
  return i;
}

void CommQueue::push_front_of(std::uint32_t lane) {
  const Item& h = lanes_[lane].front();
  fronts_.push_back({h.ready, h.order, lane});
  std::push_heap(fronts_.begin(), fronts_.end(), Later{});
}

void CommQueue::enqueue(Communicator& comm, const Call& call, Time ready_after) {
  const std::uint32_t i = lane(comm);
  Lane& l = lanes_[i];
  l.items.push_back({call, kernel::Simulation::saturating_add(sim_.now(), ready_after), next_order_++});
  ++l.enqueued;
  ++pending_;
  if (l.size() == 1) push_front_of(i);
  // It may be waiting for a later deadline than this item's. Once a wake or a timeout ends that
  // wait the kernel takes it out of `idle_`, so two items enqueued at one instant wake it once.
  if (executor_->waiting_in() == &idle_) sim_.wake(executor_);
}

void CommQueue::loop() {
  // Runs until the simulation ends; each pass starts one collective or waits for one to be ready.
  for (;;) {
    if (fronts_.empty() || fronts_.front().ready > sim_.now()) {
      sim_.wait_on(&idle_, fronts_.empty() ? kernel::kTimeMax : fronts_.front().ready);
      continue;
    }
    const std::uint32_t i = fronts_.front().lane;
    std::pop_heap(fronts_.begin(), fronts_.end(), Later{});
    fronts_.pop_back();
    Lane& l = lanes_[i];
    const Item item = l.front();
    l.pop_front();
    if (!l.empty()) push_front_of(i);
    // `l` may move while the collective runs (the host can open a lane): use `i` after it.
    kernel::Status st = failed_.is_ok() ? engine_.run(*lane_comms_[i], rank_, item.call) : kernel::Status::ok();
    if (!st.is_ok() && failed_.is_ok()) failed_ = st;
    ++lanes_[i].completed;
    --pending_;
    completed(i, item);
  }
}

void CommQueue::completed(std::uint32_t lane, const Item& item) {
  Small<kernel::Process*, 4> ready;
  syncers_.for_each([&](kernel::Process& p) {
    for (Syncer& s : syncers_waiting_) {
      if (s.host != &p) continue;
      bool done;
      if (s.lane == kAllLanes) {
        if (item.order < s.target) --s.remaining;
        done = s.remaining == 0;
      } else {
        done = s.lane == lane && lanes_[lane].completed >= s.target;
      }
      if (done) ready.push_back(&p);
      break;
    }
  });
  for (kernel::Process* p : ready) sim_.wake(p);
}

kernel::Status CommQueue::sync(const Communicator* comm, Time timeout) {
  Syncer s{sim_.current(), kAllLanes, next_order_, pending_};
  if (comm != nullptr) {
    s.lane = find_lane(comm);
    if (s.lane == kNoLane) return failed_;  // nothing was ever enqueued on it
    s.target = lanes_[s.lane].enqueued;
  }
  const bool reached = s.lane == kAllLanes ? s.remaining == 0 : lanes_[s.lane].completed >= s.target;
  if (!reached) {
    syncers_waiting_.push_back(s);
    struct Forget {
      Small<Syncer, 1>& v;
      const kernel::Process* p;
      ~Forget() {
        for (auto it = v.begin(); it != v.end(); ++it) {
          if (it->host == p) {
            v.erase(it);
            return;
          }
        }
      }
    } forget{syncers_waiting_, s.host};
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
