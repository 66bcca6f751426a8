// A node's CPU cores, shared by the host work of its processes (a compute step, a compile, a
// copy into or out of the page cache) under a scheduler with the properties that decide the
// races racesim replays, after Linux's CFS (kernel/sched/fair.c; EEVDF since 6.6 keeps them):
//
// - Fair sharing. Each piece of work accrues virtual runtime as it runs; a free core always runs
//   the runnable work with the least. With n runnable on c cores, each gets c/n of a core over
//   time (processor sharing): n equal jobs of W finish at n/c * W.
// - A time slice. Work that runs while others wait is descheduled when its slice ends: the slice
//   is the period `latency` (sched_latency_ns) divided among the runnable work per core, never
//   below `min_granularity` (sched_min_granularity_ns). A writer can be descheduled between two
//   chunks of a write for a whole slice of another process.
// - Wake-up preemption. Work that becomes runnable while every core is busy takes the core of
//   the running work with the most virtual runtime at once only when it has `wakeup_granularity`
//   (sched_wakeup_granularity_ns) less; otherwise it waits for a slice to end (the wake-up
//   latency). A process that ran little lately is placed at most latency/2 behind the least
//   virtual runtime (GENTLE_FAIR_SLEEPERS), so it does not starve the others after a long sleep.
//
// Defaults, as Linux scales them with the number of CPUs (factor 1 + log2(min(cores, 8))):
// latency 6 ms, min_granularity 0.75 ms, wakeup_granularity 1 ms, each times the factor (24 ms,
// 3 ms and 4 ms on 8 or more cores). Simplified: one run queue for the node's cores (Linux keeps
// one per core and balances them), every process at nice 0, no cost of a context switch.
// Among waiting work with equal virtual runtime the longest waiting runs first (Linux's tree
// puts an equal key after the others); among such work that began to wait at the same instant
// (woken together), which runs is a model choice on the run's tape (sim/kernel/tape.h; option
// 0: the first queued). Which free core work takes is none (the cores are alike).
//
// Cost: O(R) per scheduling decision for R runnable (R is the work of one node's processes).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"
#include "sim/kernel/time.h"

namespace racesim::host {

using kernel::Time;

struct CpuConfig {
  int cores = 0;  // 0: no model (each process has a core of its own)
  Time latency = 0;             // 0: Linux's default for `cores`
  Time min_granularity = 0;     // 0: Linux's default for `cores`
  Time wakeup_granularity = 0;  // 0: Linux's default for `cores`
  bool on() const { return cores > 0; }
  // This config with every 0 setting at Linux's default for its core count.
  CpuConfig with_defaults() const;
};

struct CpuStats {
  Time busy = 0;          // core time spent running work, summed over cores
  Time waited = 0;        // time work was runnable but not running, summed over work
  std::uint64_t preemptions = 0;  // work descheduled before it was done (a slice ended, a wake-up)
  int most_runnable = 0;  // the most work runnable at once
};

class CpuScheduler final : public kernel::NamedWaitable {
 public:
  // The cores of `name` ("node 0"). REQUIRES: config.on().
  CpuScheduler(kernel::Simulation& sim, std::string name, const CpuConfig& config);
  ~CpuScheduler() override;
  CpuScheduler(const CpuScheduler&) = delete;
  CpuScheduler& operator=(const CpuScheduler&) = delete;

  // Runs `work` of CPU time for the calling process: returns once it has had that much time on
  // a core, sharing the cores as above. A process killed while it waits or runs gives its core
  // back. REQUIRES: called from a simulated process; work >= 0.
  void run(Time work);

  const CpuConfig& config() const { return config_; }
  const CpuStats& stats() const { return stats_; }
  int runnable() const;  // running and waiting

 private:
  struct Task {
    kernel::Process* process = nullptr;
    Time remaining = 0;
    Time vruntime = 0;
    Time runnable_since = 0;  // when it last started waiting
    std::uint64_t seq = 0;
    int core = -1;  // the core it runs on, or -1
    bool done = false;
  };
  struct Core {
    Task* task = nullptr;
    Time started = 0;
    kernel::EventHandle timer;
  };
  Time slice() const;
  void start(int core, Task* t);
  // Charges the time `core`'s task has run since it started (or last was charged).
  void charge(Core& c);
  void on_timer(int core);
  // Takes `core`'s task off it, charged up to now and marked as waiting from now (its timer
  // cancelled); returns it. REQUIRES: the core runs a task.
  Task* vacate(int core);
  // vacate(), the task back among the waiting, counted as a preemption.
  void preempt(int core);
  // Gives `core` to the waiting task with the least virtual runtime, or leaves it idle.
  void pick_next(int core);
  // Removes `t` (killed) from its core or the waiting list.
  void forget(Task* t);
  void note_runnable();

  kernel::Simulation& sim_;
  CpuConfig config_;
  kernel::WaitQueue queue_;
  std::vector<Core> cores_;
  std::vector<Task*> waiting_;  // runnable, not running, in the order they began to wait
  std::unordered_map<const kernel::Process*, Time> vruntime_of_;  // a process's, between its runs
  Time min_vruntime_ = 0;  // never decreases
  std::uint64_t next_seq_ = 0;
  CpuStats stats_;
};

}  // namespace racesim::host
