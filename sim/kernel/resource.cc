#include "sim/kernel/resource.h"

#include <algorithm>
#include <cassert>

namespace racesim::kernel {

Resource::Resource(Simulation& sim, std::string name, std::size_t servers)
    : NamedWaitable(sim, "resource", std::move(name)),
      servers_(servers),
      created_(sim.now()),
      last_change_(sim.now()) {
  assert(servers >= 1);
}

void Resource::integrate() {
  const Time now = sim_.now();
  const double dt = static_cast<double>(now - last_change_);
  queue_area_ += dt * static_cast<double>(waiters_.size());
  busy_area_ += dt * static_cast<double>(busy_);
  last_change_ = now;
}

WaitStatus Resource::acquire(Time timeout) {
  Process* self = sim_.current();
  assert(self != nullptr && "Resource::acquire: REQUIRES a simulated process");
  const Time start = sim_.now();
  integrate();
  if (busy_ < servers_ && waiters_.empty()) {
    ++busy_;
    ++acquisitions_;
    holders_.push_back(self);
    return WaitStatus::kOk;
  }
  // Count ourselves in the queue for the peak before blocking.
  queue_peak_ = std::max(queue_peak_, waiters_.size() + 1);
  // release() transfers its server to us before waking us; the kernel unlinks us on timeout,
  // so integrate first to account the queue length up to that instant.
  WaitStatus s;
  Simulation& sim = sim_;  // (not through `this` below: at teardown the resource may be gone)
  try {
    s = sim.wait_on(&waiters_, sim.deadline_after(timeout));
  } catch (const ProcessKilled&) {
    if (!sim.tearing_down()) integrate();
    throw;
  }
  if (s == WaitStatus::kTimeout) {
    // The area up to now counted us as queued, which we were.
    integrate();
    ++timeouts_;
    return s;
  }
  const Time waited = sim_.now() - start;
  wait_total_ += waited;
  wait_max_ = std::max(wait_max_, waited);
  return s;
}

void Resource::release() {
  integrate();
  const Process* self = sim_.current();
  auto it = std::find(holders_.begin(), holders_.end(), self);
  if (it != holders_.end()) {
    holders_.erase(it);
  } else {
    assert(!holders_.empty() && "Resource::release with no server held");
    holders_.erase(holders_.begin());
  }
  if (Process* next = sim_.choose_waiter(waiters_)) {  // a kWake choice (tape.h)
    // Hand the server over: busy_ stays the same.
    ++acquisitions_;
    holders_.push_back(next);
    sim_.wake(next);
  } else {
    assert(busy_ > 0);
    --busy_;
  }
}

Resource::Stats Resource::stats() const {
  const Time now = sim_.now();
  const double dt = static_cast<double>(now - last_change_);
  const double qa = queue_area_ + dt * static_cast<double>(waiters_.size());
  const double ba = busy_area_ + dt * static_cast<double>(busy_);
  const double elapsed = static_cast<double>(now - created_);
  Stats s;
  s.servers = servers_;
  s.busy = busy_;
  s.queue_length = waiters_.size();
  s.queue_length_peak = queue_peak_;
  s.queue_length_mean = elapsed > 0 ? qa / elapsed : 0;
  s.utilisation = elapsed > 0 ? ba / (elapsed * static_cast<double>(servers_)) : 0;
  s.acquisitions = acquisitions_;
  s.timeouts = timeouts_;
  s.wait_total = wait_total_;
  s.wait_max = wait_max_;
  return s;
}

void Resource::releasers(const WaitQueue& q, const Process& waiter,
                         std::vector<const Process*>& out) const {
  NamedWaitable::releasers(q, waiter, out);
  out.insert(out.end(), holders_.begin(), holders_.end());
}

}  // namespace racesim::kernel
