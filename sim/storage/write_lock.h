// A file's write lock, as writers of one file on one node meet it: Linux's inode lock
// (`i_rwsem`), which write(2) holds while it copies the caller's bytes into the file
// (generic_file_write_iter, shmem and ext4 alike), so two processes writing one file write one
// chunk at a time, in turns. The turns are irregular: an rwsem lets a writer that releases it and
// asks again at once take it back before the waiter it woke runs (lock stealing,
// kernel/locking/rwsem.c), so a writer sometimes writes several chunks in a row while another
// waits, and a writer that started behind can overtake. That is how an older O_TRUNC writer's
// last bytes land after a newer writer has finished, leaving a permanent mixture.
//
// The model: a mutex per file (kernel::Mutex: hand-over to the longest waiter unless the policy
// decides wake order) held for each chunk a write moves; between two chunks of one write, while
// another writer waits, the writer keeps the lock with odds `keep` (drawn from the mount's
// stream, a kModel choice on the tape: Simulation::decide_model) or hands it over and queues
// again behind the waiters. racesim live --calibrate measures `keep` (two writers of one file,
// the order their write(2)s return in). Reads take no lock (Linux reads a regular file without
// i_rwsem). Simplified: the lock is held for a chunk's whole transfer time; a writer that makes
// its bytes before each write(2) holds the real lock only while it copies them, so for such
// writers the model serializes more than Linux does.
#pragma once

#include <string>

#include "sim/kernel/random.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"

namespace racesim::storage {

class WriteLock {
 public:
  WriteLock(kernel::Simulation& sim, std::string name) : sim_(sim), mutex_(sim, std::move(name)) {}
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;

  // The lock held for one write call of the calling process: taken at construction (waiting
  // for it), released at destruction, also when the process is killed while it waits or
  // writes. At teardown (Simulation::tearing_down) it is left alone: the lock may be gone.
  // REQUIRES: a simulated process; the lock outlives the Hold.
  class Hold {
   public:
    explicit Hold(WriteLock& lock);
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    // Between two chunks of the write: when another writer waits, keeps the lock with odds
    // `keep` (drawn from `turns`, then Simulation::decide_model), else hands it to a waiter and
    // waits for it again. Nothing when no one waits. REQUIRES: 0 <= keep <= 1; the lock is held.
    void between_chunks(double keep, kernel::RandomStream& turns);

   private:
    WriteLock& lock_;
  };

 private:
  kernel::Simulation& sim_;
  kernel::Mutex mutex_;
};

}  // namespace racesim::storage
