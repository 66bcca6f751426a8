// Blocking primitives in virtual time. Each blocking call takes an optional relative timeout
// (kTimeMax: none) and returns WaitStatus::kTimeout when it expires; a killed process unwinds
// with ProcessKilled instead of returning. Every primitive has a name used in stall diagnosis.
//
// REQUIRES for every blocking call: called from a simulated process of the simulation the
// primitive belongs to. Non-blocking calls (set, count_down, unlock, release) may also be made
// from callbacks.
#pragma once

#include <string>
#include <vector>

#include "sim/kernel/simulation.h"

namespace racesim::kernel {

// Base for primitives whose releasers are not owners but can be declared by the model
// ("this event is set by the writer process").
class NamedWaitable : public Waitable {
 public:
  NamedWaitable(Simulation& sim, std::string kind, std::string name)
      : sim_(sim), kind_(std::move(kind)), name_(std::move(name)) {}
  std::string describe() const override { return kind_ + " '" + name_ + "'"; }
  const std::string& name() const { return name_; }
  // Declares a process that can release waiters here (used in deadlock reports).
  void add_releaser(const Process* p) { declared_.push_back(p); }
  void releasers(const WaitQueue&, const Process& waiter,
                 std::vector<const Process*>& out) const override;

 protected:
  Simulation& sim_;

 private:
  std::string kind_;
  std::string name_;
  std::vector<const Process*> declared_;
};

// A one-shot event: waiters block until set(); once set, wait() returns at once.
class Event final : public NamedWaitable {
 public:
  Event(Simulation& sim, std::string name) : NamedWaitable(sim, "event", std::move(name)) {}
  void set();
  bool is_set() const { return set_; }
  WaitStatus wait(Time timeout = kTimeMax);

 private:
  bool set_ = false;
  WaitQueue waiters_{this, "wait"};
};

// A single-use countdown: wait() blocks until the count reaches zero.
class Latch final : public NamedWaitable {
 public:
  Latch(Simulation& sim, std::string name, std::size_t count)
      : NamedWaitable(sim, "latch", std::move(name)), count_(count) {}
  // REQUIRES: n <= count().
  void count_down(std::size_t n = 1);
  WaitStatus wait(Time timeout = kTimeMax);
  WaitStatus arrive_and_wait(Time timeout = kTimeMax) {
    count_down();
    return wait(timeout);
  }
  std::size_t count() const { return count_; }

 private:
  std::size_t count_;
  WaitQueue waiters_{this, "wait"};
};

// A reusable barrier for `parties` processes. The last arrival releases the others and starts
// a new generation. A waiter that times out withdraws its arrival. If participants are
// declared, deadlock reports name the ones that have not arrived.
class Barrier final : public NamedWaitable {
 public:
  // REQUIRES: parties >= 1.
  Barrier(Simulation& sim, std::string name, std::size_t parties);
  WaitStatus arrive_and_wait(Time timeout = kTimeMax);
  // The stackless form of arrive_and_wait (REQUIRES: a stackless process, Simulation::arm_wait):
  // arrives; false when that released the generation (nothing to wait for), else it arms the
  // wait, sets `generation` for wait_ended, and returns true.
  bool arrive(Time timeout, std::uint64_t& generation);
  // Once the wait that arrive armed ended with `status`, what arrive_and_wait returns. A timeout,
  // and a kill while the run goes on (kKilled), withdraw the arrival. REQUIRES: not at teardown
  // (the barrier may be gone then).
  WaitStatus wait_ended(WaitStatus status, std::uint64_t generation);
  std::size_t parties() const { return parties_; }
  std::size_t arrived() const { return arrived_; }
  std::uint64_t generation() const { return generation_; }
  void set_participants(std::vector<const Process*> participants) {
    participants_ = std::move(participants);
  }
  void releasers(const WaitQueue&, const Process& waiter,
                 std::vector<const Process*>& out) const override;

 private:
  // Counts an arrival; true when it was the last, which released the others.
  bool count_arrival();
  std::size_t parties_;
  std::size_t arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<const Process*> participants_;
  WaitQueue waiters_{this, "arrive"};
};

// A non-recursive mutex with hand-off: unlock() passes ownership to a waiter, the longest waiting
// one unless the schedule policy decides wake order (a kWake choice, tape.h).
class Mutex final : public NamedWaitable {
 public:
  Mutex(Simulation& sim, std::string name) : NamedWaitable(sim, "mutex", std::move(name)) {}
  WaitStatus lock(Time timeout = kTimeMax);
  bool try_lock();
  // REQUIRES: the calling process owns the mutex.
  void unlock();
  const Process* owner() const { return owner_; }
  // Whether a process waits for it.
  bool contended() const { return !waiters_.empty(); }
  void releasers(const WaitQueue&, const Process&,
                 std::vector<const Process*>& out) const override {
    if (owner_) out.push_back(owner_);
  }

 private:
  Process* owner_ = nullptr;
  WaitQueue waiters_{this, "lock"};
};

// A counting semaphore with hand-off (a release never lets a newcomer overtake a waiter; which
// waiter gets a permit is a kWake choice, the longest waiting under fifo).
class Semaphore final : public NamedWaitable {
 public:
  Semaphore(Simulation& sim, std::string name, std::size_t permits)
      : NamedWaitable(sim, "semaphore", std::move(name)), permits_(permits) {}
  WaitStatus acquire(Time timeout = kTimeMax);
  bool try_acquire();
  void release(std::size_t n = 1);
  std::size_t available() const { return permits_; }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  std::size_t permits_;
  WaitQueue waiters_{this, "acquire"};
};

}  // namespace racesim::kernel
