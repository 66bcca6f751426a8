// A device's in-order communication engine (see comm_queue.h).
#include "sim/collective/comm_queue.h"

#include <algorithm>
#include <cassert>

namespace racesim::collective {

CommQueue::CommQueue(kernel::Simulation& sim, Engine& engine, int rank)
    : NamedWaitable(sim, "comm queue", "rank " + std::to_string(rank) + "/comm"),
      engine_(engine),
      rank_(rank) {}

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
  assert(lane < lanes_.size() && !lanes_[lane].empty() && "only a lane with work has a front");
  const Item& h = lanes_[lane].front();
  fronts_.push_back({h.ready, h.order, lane});
  std::push_heap(fronts_.begin(), fronts_.end(), Later{});
}

void CommQueue::note_host() {
  const kernel::Process* p = sim_.current();
  if (p == host_ || p == nullptr) return;
  host_ = p;
  engine_.set_process(rank_, p);
}

std::uint64_t CommQueue::enqueued(const Communicator& comm) const {
  const std::uint32_t i = find_lane(&comm);
  return i == kNoLane ? 0 : lanes_[i].enqueued;
}

void CommQueue::enqueue(Communicator& comm, const Call& call, Time ready_after) {
  if (host_ == nullptr) note_host();
  const std::uint32_t i = lane(comm);
  Lane& l = lanes_[i];
  l.items.push_back({call, kernel::add_time(sim_.now(), ready_after), next_order_++});
  ++l.enqueued;
  ++pending_;
  // A lane's calls are queued, running (at most one) or completed: none is lost.
  assert(l.completed + l.size() <= l.enqueued && l.enqueued - l.completed - l.size() <= 1);
  if (l.size() == 1) push_front_of(i);
  pump();
}

std::uint32_t CommQueue::choose_among_ready(std::uint32_t first) {
  // Every lane whose front is ready now, in the order fifo starts them (the heap's), then one of
  // them chosen; the others go back.
  Small<Front, 8> ready;
  while (!fronts_.empty() && fronts_.front().ready <= sim_.now()) {
    ready.push_back(fronts_.front());
    std::pop_heap(fronts_.begin(), fronts_.end(), Later{});
    fronts_.pop_back();
  }
  const std::uint64_t k = sim_.choose(ready.size() + 1);  // option 0: `first`, fifo's
  std::uint32_t chosen = first;
  if (k > 0) {
    chosen = ready[k - 1].lane;
    // `first` goes back in place of the chosen one.
    Front back = ready[k - 1];
    for (const Front& f : ready) {
      if (f.lane == back.lane) continue;
      fronts_.push_back(f);
      std::push_heap(fronts_.begin(), fronts_.end(), Later{});
    }
    const Item& h = lanes_[first].front();
    fronts_.push_back({h.ready, h.order, first});
    std::push_heap(fronts_.begin(), fronts_.end(), Later{});
    return chosen;
  }
  for (const Front& f : ready) {
    fronts_.push_back(f);
    std::push_heap(fronts_.begin(), fronts_.end(), Later{});
  }
  return chosen;
}

void CommQueue::pump() {
  // Each pass starts one collective, skips one (after a failure), or arms the pump for the
  // next ready time.
  while (!running_ && !fronts_.empty()) {
    const Time ready = fronts_.front().ready;
    if (ready > sim_.now()) {
      if (ready < pump_at_) {
        sim_.cancel(pump_timer_);
        pump_at_ = ready;
        pump_timer_ = sim_.schedule_at(ready, [this] {
          pump_at_ = kernel::kTimeMax;
          pump();
        });
      }
      return;
    }
    std::uint32_t i = fronts_.front().lane;
    std::pop_heap(fronts_.begin(), fronts_.end(), Later{});
    fronts_.pop_back();
    if (sim_.choosing() && !fronts_.empty() && fronts_.front().ready <= sim_.now()) i = choose_among_ready(i);
    Lane& l = lanes_[i];
    const Item item = l.front();
    l.pop_front();
    if (!l.empty()) push_front_of(i);
    if (failed_) {
      // After a failed collective the device runs nothing more: the rest complete unrun.
      assert(pending_ > 0 && "the queue depth never goes below zero");
      ++lanes_[i].completed;
      --pending_;
      completed(i, item);
      continue;
    }
    assert(lanes_[i].completed < lanes_[i].enqueued);
    running_ = true;
    running_lane_ = i;
    running_item_ = item;
    const kernel::Status st = engine_.start(*lane_comms_[i], rank_, item.call, *this);
    if (!st.is_ok()) collective_done(st);  // found on arrival: nothing will tell it
  }
}

void CommQueue::collective_done(const kernel::Status& st) {
  assert(running_ && "a collective is done only once, and only while one runs");
  assert(pending_ > 0 && "the queue depth never goes below zero");
  running_ = false;
  if (!st.is_ok() && !failed_) {
    failed_ = true;
    failure_ = st;
  }
  ++lanes_[running_lane_].completed;
  --pending_;
  completed(running_lane_, running_item_);
  pump();
}

void CommQueue::completed(std::uint32_t lane, const Item& item) {
  assert(lanes_[lane].completed <= lanes_[lane].enqueued && "a lane completes only what it enqueued");
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

bool CommQueue::add_syncer(const Communicator* comm) {
  note_host();
  Syncer s{sim_.current(), kAllLanes, next_order_, pending_};
  if (comm != nullptr) {
    s.lane = find_lane(comm);
    if (s.lane == kNoLane) return false;  // nothing was ever enqueued on it
    s.target = lanes_[s.lane].enqueued;
  }
  const bool reached = s.lane == kAllLanes ? s.remaining == 0 : lanes_[s.lane].completed >= s.target;
  if (reached) return false;
  syncers_waiting_.push_back(s);
  return true;
}

void CommQueue::forget_syncer(const kernel::Process* p) {
  for (auto it = syncers_waiting_.begin(); it != syncers_waiting_.end(); ++it) {
    if (it->host == p) {
      syncers_waiting_.erase(it);
      return;
    }
  }
}

kernel::Status CommQueue::sync(const Communicator* comm, Time timeout) {
  if (!add_syncer(comm)) return status();
  kernel::WaitStatus w;
  {
    // Its Syncer goes however the wait ends, an unwinding included.
    struct Forget {
      CommQueue& q;
      const kernel::Process* p;
      ~Forget() { q.forget_syncer(p); }
    } forget{*this, sim_.current()};
    w = sim_.wait_on(&syncers_, sim_.deadline_after(timeout));
  }
  return wait_result(w, timeout);
}

bool CommQueue::arm_sync(const Communicator* comm, Time timeout) {
  if (!add_syncer(comm)) return false;
  sim_.arm_wait(&syncers_, sim_.deadline_after(timeout));
  return true;
}

kernel::Status CommQueue::sync_ended(kernel::WaitStatus status, Time timeout) {
  forget_syncer(sim_.current());
  return wait_result(status, timeout);
}

kernel::Status CommQueue::wait_result(kernel::WaitStatus status, Time timeout) const {
  if (status == kernel::WaitStatus::kTimeout) {
    const std::string doing = engine_.describe_wait(rank_);
    return kernel::Status::error("exec timeout after " + kernel::format_duration(timeout) +
                                 (doing.empty() ? std::string() : " in " + doing));
  }
  return this->status();
}

std::string CommQueue::describe() const {
  std::string s = NamedWaitable::describe();
  if (running_) s += " (running " + engine_.current_label(rank_) + ")";
  return s;
}

void CommQueue::releasers(const kernel::WaitQueue& q, const kernel::Process&,
                          std::vector<const kernel::Process*>& out) const {
  if (&q == &syncers_) engine_.missing_members(rank_, out);
}

}  // namespace racesim::collective
