// A file's write lock and the turns its writers take at it (write_lock.h).
#include "sim/storage/write_lock.h"

#include <cassert>

namespace racesim::storage {

namespace {
// Gives the lock back if the calling process owns it: a process killed while it waits may have
// been handed it already (a hand-over wakes it, the kill comes before it runs), or not.
void give_back(kernel::Simulation& sim, kernel::Mutex& mutex) {
  if (sim.tearing_down()) return;
  if (mutex.owner() == sim.current()) mutex.unlock();
}
}  // namespace

WriteLock::Hold::Hold(WriteLock& lock) : lock_(lock) {
  assert(lock_.sim_.current() != nullptr && "a write lock is taken by a simulated process");
  // Killed while it waits, the process unwinds out of this constructor: no destructor runs.
  struct Unwinding {
    WriteLock& lock;
    bool granted = false;
    ~Unwinding() {
      if (!granted) give_back(lock.sim_, lock.mutex_);
    }
  } unwinding{lock_};
  // No timeout: the holder releases it at the end of its chunk (or when it dies).
  const kernel::WaitStatus s = lock_.mutex_.lock();
  assert(s == kernel::WaitStatus::kOk && "a lock taken without a timeout is granted");
  (void)s;
  unwinding.granted = true;
}

WriteLock::Hold::~Hold() { give_back(lock_.sim_, lock_.mutex_); }

void WriteLock::Hold::between_chunks(double keep, kernel::RandomStream& turns) {
  assert(keep >= 0 && keep <= 1 && "the odds of keeping the lock are a probability");
  assert(lock_.mutex_.owner() == lock_.sim_.current() && "only the holder hands the lock over");
  if (!lock_.mutex_.contended()) return;
  if (lock_.sim_.decide_model(turns.bernoulli(keep))) return;  // kept
  lock_.mutex_.unlock();  // to the longest waiter (or the policy's pick)
  const kernel::WaitStatus s = lock_.mutex_.lock();
  assert(s == kernel::WaitStatus::kOk && "a lock taken without a timeout is granted");
  (void)s;
}

}  // namespace racesim::storage
