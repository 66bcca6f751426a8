#include "sim/kernel/sync.h"

#include <algorithm>
#include <cassert>

namespace racesim::kernel {

void NamedWaitable::releasers(const WaitQueue&, const Process&,
                              std::vector<const Process*>& out) const {
  out.insert(out.end(), declared_.begin(), declared_.end());
}

// ---- Event ----

void Event::set() {
  if (set_) return;
  set_ = true;
  sim_.wake_all(waiters_);
}

WaitStatus Event::wait(Time timeout) {
  if (set_) return WaitStatus::kOk;
  return sim_.wait_on(&waiters_, sim_.deadline_after(timeout));
}

// ---- Latch ----

void Latch::count_down(std::size_t n) {
  assert(n <= count_ && "Latch::count_down below zero");
  count_ -= n;
  if (count_ == 0) {
    sim_.wake_all(waiters_);
  }
}

WaitStatus Latch::wait(Time timeout) {
  if (count_ == 0) return WaitStatus::kOk;
  return sim_.wait_on(&waiters_, sim_.deadline_after(timeout));
}

// ---- Barrier ----

Barrier::Barrier(Simulation& sim, std::string name, std::size_t parties)
    : NamedWaitable(sim, "barrier", std::move(name)), parties_(parties) {
  assert(parties >= 1);
}

bool Barrier::count_arrival() {
  if (++arrived_ < parties_) return false;
  arrived_ = 0;
  ++generation_;
  sim_.wake_all(waiters_);
  return true;
}

WaitStatus Barrier::arrive_and_wait(Time timeout) {
  if (count_arrival()) return WaitStatus::kOk;
  const std::uint64_t gen = generation_;
  Simulation& sim = sim_;  // (not through `this` below: at teardown the barrier may be gone)
  WaitStatus s;
  try {
    s = sim.wait_on(&waiters_, sim.deadline_after(timeout));
  } catch (const ProcessKilled&) {
    // A process killed while it waits has not arrived: the barrier must not open without it.
    // Unwound at teardown, nobody waits any more, and the barrier may already be destroyed.
    if (!sim.tearing_down()) wait_ended(WaitStatus::kKilled, gen);
    throw;
  }
  return wait_ended(s, gen);
}

bool Barrier::arrive(Time timeout, std::uint64_t& generation) {
  if (count_arrival()) return false;
  generation = generation_;
  sim_.arm_wait(&waiters_, sim_.deadline_after(timeout));
  return true;
}

WaitStatus Barrier::wait_ended(WaitStatus status, std::uint64_t generation) {
  assert(!sim_.tearing_down() && "at teardown the barrier may be gone");
  if (status == WaitStatus::kTimeout) {
    // A timeout can only happen before the generation completed (completion wakes everyone at
    // the same instant, and a woken process is no longer timed out).
    assert(generation == generation_);
    --arrived_;
  } else if (status == WaitStatus::kKilled && generation == generation_) {
    --arrived_;
  }
  return status;
}

void Barrier::releasers(const WaitQueue&, const Process& waiter,
                        std::vector<const Process*>& out) const {
  NamedWaitable::releasers(waiters_, waiter, out);
  for (const Process* p : participants_) {
    if (p->waiting_in() != &waiters_ && p != &waiter) out.push_back(p);
  }
}

// ---- Mutex ----

WaitStatus Mutex::lock(Time timeout) {
  Process* self = sim_.current();
  assert(self != nullptr && "Mutex::lock: REQUIRES a simulated process");
  assert(owner_ != self && "Mutex is not recursive");
  if (owner_ == nullptr) {
    owner_ = self;
    return WaitStatus::kOk;
  }
  // unlock() hands ownership over before waking us.
  return sim_.wait_on(&waiters_, sim_.deadline_after(timeout));
}

bool Mutex::try_lock() {
  if (owner_ != nullptr) return false;
  owner_ = sim_.current();
  return true;
}

void Mutex::unlock() {
  assert(owner_ == sim_.current() && "Mutex::unlock by a process that does not own it");
  owner_ = sim_.choose_waiter(waiters_);  // a kWake choice (tape.h)
  if (owner_) sim_.wake(owner_);
}

// ---- Semaphore ----

WaitStatus Semaphore::acquire(Time timeout) {
  if (permits_ > 0 && waiters_.empty()) {
    --permits_;
    return WaitStatus::kOk;
  }
  // release() hands the permit over before waking us.
  return sim_.wait_on(&waiters_, sim_.deadline_after(timeout));
}

bool Semaphore::try_acquire() {
  if (permits_ == 0 || !waiters_.empty()) return false;
  --permits_;
  return true;
}

void Semaphore::release(std::size_t n) {
  permits_ += n;
  while (permits_ > 0 && !waiters_.empty()) {
    --permits_;
    sim_.wake(sim_.choose_waiter(waiters_));  // a kWake choice (tape.h)
  }
}

}  // namespace racesim::kernel
