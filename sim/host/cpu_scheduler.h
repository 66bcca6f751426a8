// A node's CPU cores, shared by the host work of its processes (a compute step, a compile, a
// copy into or out of the page cache, a local file system's metadata call) under a scheduler
// with the properties that decide the races racesim replays, after Linux's CFS
// (kernel/sched/fair.c before 6.6) or EEVDF (since), as `policy` says:
//
// - Fair sharing. Each piece of work accrues virtual runtime as it runs; a free core always runs
//   the runnable work with the least. With n runnable on c cores, each gets c/n of a core over
//   time (processor sharing): n equal jobs of W finish at n/c * W. (EEVDF picks among the
//   eligible by deadline: below.)
// - A time slice (CFS). Work that runs while others wait is descheduled when its slice ends: the slice
//   is the period `latency` (sched_latency_ns) divided among the runnable work per core, never
//   below `min_granularity` (sched_min_granularity_ns). A writer can be descheduled between two
//   chunks of a write for a whole slice of another process.
// - Back-to-back work keeps its core. A process whose work ends and that runs again at the
//   same instant (a writer's next chunk) goes on on its core in what is left of its slice, as a
//   process making write(2) after write(2) never leaves its run queue; the core picks other
//   work only when it does not.
// - Wake-up preemption (CFS). Work that becomes runnable while every core is busy takes the
//   core of the running work with the most virtual runtime (per core: its queue's core's) at
//   once only when it has `wakeup_granularity` (sched_wakeup_granularity_ns) less; otherwise it
//   waits for a slice to end (the wake-up latency). A process that ran little lately is placed
//   at most latency/2 behind the least virtual runtime (GENTLE_FAIR_SLEEPERS), so it does not
//   starve the others after a long sleep, and a process that slept after a short run (a poll)
//   preempts at once.
// - EEVDF (`policy` kEevdf: Linux 6.6 and later; fair.c as 6.18 has it) replaces the period,
//   the wake-up granularity and the sleeper's credit:
//   - Each task asks for `base_slice` at a time (sysctl_sched_base_slice). A queue's V is the
//     mean virtual runtime of its runnable work; a task is eligible while its virtual runtime
//     is at most V (its lag, V - v, at least 0); its virtual deadline is its virtual runtime
//     when it asked plus the slice. A core that picks runs the eligible task with the earliest
//     deadline (pick_eevdf).
//   - The tick. A used slice is noticed at the scheduler's tick (every `tick`, at multiples of
//     it: 1/CONFIG_HZ): the task asks again (deadline = virtual runtime + slice) and the core
//     picks. So a slice of 1.4 ms runs until the tick after it, and two spinners on one CPU of
//     a 250 Hz kernel take turns every 4 ms (this project's VM: 3.98 ms).
//   - Run to parity. Picked, a task is protected up to the deadline it was picked with: a
//     wake-up does not preempt it before, while it is eligible (RUN_TO_PARITY). Unprotected or
//     not eligible, it gives its core at once to a woken task that is then the eligible one
//     with the earliest deadline; otherwise the woken task waits for a tick.
//   - Lag. A task that stops keeps its lag (within max(2 slices, a tick) either way) and wakes
//     placed that far behind V (PLACE_LAG, scaled by (n+1)/n for the n it joins), its deadline
//     a slice on. A negative lag is paid off while it sleeps as far as the queue's V moves on,
//     never past 0 (DELAY_DEQUEUE, DELAY_ZERO); on another queue, or an empty one, it is 0.
//     Work new to the cores starts at V with half a slice (PLACE_DEADLINE_INITIAL). A task that
//     changes queue keeps its lag, and its deadline's distance.
//   - Not modelled: preemption waiting for the running task to reach user space (a kernel
//     built PREEMPT_NONE; here a wake-up preempts at once), the buddies, a task's own slice
//     (sched_attr), lag scaled by a sleep's length.
//   Measured on this project's VM (Linux 6.18, perf sched): a reader woken from its poll beside
//   busy writers ran 21 us after its wake-up at the median, and 8.1% of its wake-ups waited over
//   1 ms (the model of that campaign under EEVDF: 8.0%; under CFS 3.4%); the reader that then
//   read the pointer and began to load ran 1.8-4.6 ms before a tick preempted it. No cost of a
//   switch is charged (live, a wake-up's switch takes 20 us at the median, 0.39 ms at p90).
// - Run queues (`per_core`). Off: one run queue for the node's cores, fair among all its work.
//   On, as Linux: one per core, each fair among its own work, so with more work than cores one
//   core's work can get far more time than another's (3 on 2 cores: one has a core to itself).
//   Work that becomes runnable takes an idle core (its last one if idle), else queues on its
//   last core; work that has not run on these cores yet queues on a core drawn from the node's
//   stream (where it ran before is not modelled). A core left with nothing pulls waiting work
//   from the busiest core at once (new-idle balancing). Every `balance_interval` / 2 the cores
//   are balanced by load, as Linux's periodic balancing (fair.c's sched_balance_rq): see
//   "Load" below. A task that changes queue keeps its virtual runtime's lead over the queue's
//   least (Linux renormalises it on migration).
// - Load (per_core). Each process has Linux's per-entity load tracking (kernel/sched/pelt.c):
//   its load, the share of recent time it was runnable, and its utilisation, the share it ran,
//   each an average that halves every `load_half_life` (32 ms: LOAD_AVG_PERIOD). A process new
//   to the cores is taken as made at time 0 with both at 1 (a new task's load starts full) and
//   asleep since. A core's load and utilisation are the sums over its runnable work and, decaying,
//   over the work that last ran on it and sleeps (Linux's blocked load, which stays with the
//   core until its task wakes); a process that has ended leaves them at once (a dead task's
//   averages are taken off its CPU: task_dead_fair), before the next balancing reads them. The
//   balancing classifies each core as Linux's group_classify: overloaded (two or more
//   runnable, utilisation above 1/1.17 or load above 1.17: the domain's
//   imbalance_pct 117), with spare capacity (utilisation below 1/1.17 and load at most 1.17),
//   else fully busy. Only an overloaded core gives work, and only to the least loaded other core
//   when that one is fully busy or overloaded with less load than the busiest and than the
//   average (an overloaded one by 117%): a core whose work is new and light keeps it to itself
//   until its utilisation has grown (about 2.8 half-lives for one task from nothing), however
//   much waits elsewhere. The imbalance is the least of the busiest's excess over the average
//   and the other's shortfall; waiting tasks move while it lasts, each only when its load,
//   halved for every balancing in a row that moved nothing (nr_balance_failed), is at most what
//   is left of it. With equal loads that is: two more moves one at once, one more moves one at
//   the second balancing, so the work that has a core to itself changes every
//   `balance_interval`. Not modelled: active balancing of the running task, cache hotness.
//
// Defaults, as Linux scales them with the number of CPUs (factor 1 + log2(min(cores, 8))):
// latency 6 ms, min_granularity 0.75 ms, wakeup_granularity 1 ms, base_slice 0.7 ms, each times
// the factor (24 ms, 3 ms, 4 ms and 2.8 ms on 8 or more cores); tick 4 ms (HZ=250); balance_interval 64 ms per core (a sched domain's busy
// balancing runs every busy_factor 16 x max_interval 2 ms per CPU, and a move of one task
// waits for a second run); load_half_life 32 ms. Simplified: every process at nice 0, no cost of a context switch or
// a migration, the node one scheduling domain (no SMT siblings, caches or NUMA).
// Among waiting work with equal virtual runtime the longest waiting runs first (Linux's tree
// puts an equal key after the others); among such work that began to wait at the same instant
// (woken together), which runs is a model choice on the run's tape (sim/kernel/tape.h; option
// 0: the first queued), as are which waiting task a balancing moves (option 0: the longest
// waiting of those light enough) and the drawn core of new work (option k: the k-th after the
// drawn one). Which idle core work takes is none (the cores are alike).
//
// Cost: O(R + cores) per scheduling decision for R runnable (the work of one node's processes);
// per_core, two exp2 per change of a task's state and one per runnable task at each balancing,
// with a pass over the processes that have run on the cores (to drop the ended);
// EEVDF, one event per tick that ends a core's protection while work waits on its queue (a task
// alone on its queue runs to its end in one event).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/kernel/random.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"
#include "sim/kernel/time.h"

namespace racesim::host {

using kernel::Time;

// Which of Linux's fair schedulers the cores follow.
enum class CpuPolicy {
  kCfs,    // CFS (before Linux 6.6): a period shared out, a sleeper's credit, wakeup_granularity
  kEevdf,  // EEVDF (Linux 6.6 and later): a base slice, lag, virtual deadlines, the tick
};

struct CpuConfig {
  int cores = 0;  // 0: no model (each process has a core of its own)
  CpuPolicy policy = CpuPolicy::kCfs;
  Time latency = 0;             // CFS: 0: Linux's default for `cores`
  Time min_granularity = 0;     // CFS: 0: Linux's default for `cores`
  Time wakeup_granularity = 0;  // CFS: 0: Linux's default for `cores`
  Time base_slice = 0;          // EEVDF: 0: Linux's default for `cores`
  Time tick = 0;                // EEVDF: 0: Linux's default (4 ms: HZ=250)
  bool per_core = false;         // a run queue per core, balanced (as Linux); false: one shared
  Time balance_interval = 0;     // per_core: 0: Linux's default for `cores`
  Time load_half_life = 0;       // per_core: 0: Linux's 32 ms (LOAD_AVG_PERIOD)
  bool on() const { return cores > 0; }
  // This config with every 0 setting at Linux's default for its core count.
  CpuConfig with_defaults() const;
};

struct CpuStats {
  Time busy = 0;          // core time spent running work, summed over cores
  Time waited = 0;        // time work was runnable but not running, summed over work
  std::uint64_t preemptions = 0;  // work descheduled before it was done (a slice ended, a wake-up)
  std::uint64_t migrations = 0;   // per_core: work moved to another core's queue (a wake-up, a balancing)
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
  int runnable() const;  // running and waiting, on every core

 private:
  // Load tracking (per_core): a load and a utilisation, each in [0, 1] for one task (a sum for
  // a core's sleepers), as of `at`.
  struct Pelt {
    double load = 0;
    double util = 0;
    Time at = 0;
  };
  struct Task {
    kernel::Process* process = nullptr;
    Time remaining = 0;
    Time vruntime = 0;
    Time deadline = 0;  // EEVDF: its virtual deadline
    Time vprot = 0;     // EEVDF: a wake-up does not preempt it before this virtual runtime (its deadline when picked)
    Time lag = 0;       // EEVDF: its lag when it stopped
    Time stopped_v = 0; // EEVDF: its queue's V when it stopped
    Time runnable_since = 0;  // when it last started waiting
    int queue = 0;   // the run queue it belongs to (0 when shared)
    int core = -1;   // the core it runs on, or -1
    bool done = false;
    Pelt pelt;       // per_core: as of its last change of state
  };
  struct Core {
    Task* task = nullptr;
    Time started = 0;
    Time run_began = 0;  // when its task began this run on it (EEVDF: the ticks it has seen)
    Time slice_end = 0;  // when its task's slice ends
    kernel::EventHandle timer;
    // The process whose work just ended on it, for the rest of the instant: its next run at
    // once continues on the core, in the same slice (see run()).
    kernel::Process* kept_for = nullptr;
    kernel::EventHandle keep_timer;
    bool idle() const { return task == nullptr && kept_for == nullptr; }
  };
  struct Queue {
    std::vector<Task*> waiting;  // runnable, not running, in the order they began to wait
    Time min_vruntime = 0;       // follows the least virtual runtime of its work; never decreases
    Pelt blocked;                // per_core: the sum of its sleepers' (their last queue is this)
  };
  struct Known {  // a process's, between its runs
    Time vruntime = 0;
    Time deadline = 0, vprot = 0, lag = 0, stopped_v = 0;  // EEVDF: as in Task
    int queue = 0;  // the run queue it last ran from
    Pelt pelt;      // per_core: as of the end of its last run (also in the queue's blocked)
  };
  // A core's figures at a balancing.
  enum class Kind { kHasSpare, kFullyBusy, kOverloaded };
  struct CoreLoad {
    double load = 0;
    double util = 0;
    Kind kind = Kind::kHasSpare;
  };
  Queue& queue_of(int core) { return queues_[config_.per_core ? static_cast<std::size_t>(core) : 0]; }
  const Queue& queue_of(int core) const { return queues_[config_.per_core ? static_cast<std::size_t>(core) : 0]; }
  bool eevdf() const { return config_.policy == CpuPolicy::kEevdf; }
  // The virtual runtime of `t` now (running: with what it has run since it was last charged).
  Time vruntime_now(const Task* t) const;
  // EEVDF: the sum and count of the virtual runtimes of queue `q`'s runnable work now; V is
  // sum / count.
  struct Avg {
    Time sum = 0;
    Time n = 0;
    Time v(Time empty) const { return n > 0 ? sum / n : empty; }
    bool eligible(Time vruntime) const { return n == 0 || vruntime * n <= sum; }  // lag >= 0
    Avg with(Time vruntime) const { return {sum + vruntime, n + 1}; }  // and a task off the queue
  };
  Avg average(int q) const;
  // EEVDF: the virtual runtime `lag` behind the V of queue `q`'s work `a`, the lag scaled by
  // (n+1)/n for the n it joins (place_entity, PLACE_LAG).
  Time placed(const Avg& a, int q, Time lag) const;
  // The index in `waiting` of the task with the least key among those `allowed`: among equal
  // keys the longest waiting, and among those that began to wait at one instant a model choice
  // (option 0: the first queued) when `choose`; waiting.size() when none is allowed.
  template <class Key, class Allowed>
  std::size_t least(const std::vector<Task*>& waiting, Key key, Allowed allowed, bool choose);
  // EEVDF: the task queue `q` runs next, of its waiting work and `curr` (running on the core
  // that picks, or null): `curr` while it is eligible and protected (with `protect`), else the
  // eligible with the earliest deadline (fair.c's pick_eevdf). REQUIRES: some work to pick.
  Task* pick_eevdf(int q, Task* curr, bool protect, bool choose);
  // EEVDF: `core`'s task's lag kept when it leaves queue `q` (its V then, bounded).
  Time lag_of(const Task* t, const Avg& a, int q) const;
  // Sets `core`'s timer for its task: CFS, the end of its slice; EEVDF, while work waits on its
  // queue, the first tick at which its protection is over, else its work's end.
  void arm(int core);
  // EEVDF: `core`'s task, alone on its queue until now, is timed again: charged, its deadline
  // as the last tick renewed it.
  void rearm(int core);
  // EEVDF: a tick at which `core`'s task's protection is over: a new deadline if its slice is
  // used, and the core runs what pick_eevdf says.
  void on_tick(int core, Task* t);
  // EEVDF: queue `q`'s waiting work was none until now: its running work is timed to the ticks.
  void waiting_began(int q);
  // Work on `core`'s queue, running and waiting (per_core), or on the node's (shared).
  int load(int core) const;
  Time slice(int core) const;
  // Runs `t` on idle `core` until its work is done or its slice ends: a new slice, or with
  // `fresh_slice` false what is left of the core's (a process's next run at the same instant).
  void start(int core, Task* t, bool fresh_slice = true);
  // The end of `core`'s kept instant: it picks its next work.
  void release(int core);
  // Charges the time `core`'s task has run since it started (or last was charged).
  void charge(Core& c);
  void on_timer(int core);
  // `t`'s slice on idle `core` is over: it runs a new one unless work with less virtual runtime
  // waits in the core's queue, which then runs and `t` waits.
  void end_slice(int core, Task* t);
  // Takes `core`'s task off it, charged up to now and marked as waiting from now (its timer
  // cancelled); returns it. REQUIRES: the core runs a task.
  Task* vacate(int core);
  // vacate(), the task back among `core`'s queue's waiting, counted as a preemption.
  void preempt(int core);
  // Gives `core` to its queue's waiting task with the least virtual runtime (per_core: when it
  // has none, to one pulled from the busiest core), or leaves it idle.
  void pick_next(int core);
  // Brings queue `q`'s min_vruntime up to the least virtual runtime of its work.
  void update_min_vruntime(int q);
  // `t` (waiting, taken off its queue) joins queue `to` with its lead over the least kept.
  void migrate(Task* t, int to);
  // per_core: takes a waiting task off `core`'s queue (a model choice; option 0: the longest
  // waiting). REQUIRES: it has one.
  Task* take_waiting(int core);
  // per_core: `p` brought up to now, runnable (or not) and running (or not) since p.at.
  Pelt aged(const Pelt& p, bool runnable, bool running) const;
  void age(Pelt& p, bool runnable, bool running) { p = aged(p, runnable, running); }
  // per_core: `p` (a process's, as of now) joins (sign 1) or leaves (sign -1) queue `q`'s
  // sleepers. REQUIRES: sign is 1 or -1.
  void add_sleeper(int q, const Pelt& p, double sign);
  // per_core: `core`'s load and utilisation now, and its kind (see "Load" above).
  CoreLoad core_load(int core) const;
  // per_core: the periodic balancing by load between `busiest` and `local` (see "Load");
  // returns whether it moved work. REQUIRES: busiest != local, imbalance > 0.
  bool balance_load(int busiest, int local, double imbalance);
  // `t`, runnable on `core`'s queue: runs at once on an idle core, preempts the running work
  // (`victim`, or -1 for none; none when it runs nothing) when it has wakeup_granularity less
  // virtual runtime, or waits.
  void place(Task* t, int core, int victim);
  // per_core: the load and utilisation of every process that has ended leave its last queue's
  // sleepers (Linux takes a dead task's averages off its CPU at once: task_dead_fair), before a
  // balancing reads them.
  void drop_ended();
  // per_core: the periodic balancing, armed while work waits.
  void arm_balance();
  void on_balance();
  // Waits until `t` (the calling process's, placed) is done, then notes where it ran.
  void finish(Task& t, kernel::Process* self);
  // Removes `t` (killed) from its core or the waiting list.
  void forget(Task* t);
  void note_runnable();

  kernel::Simulation& sim_;
  CpuConfig config_;
  kernel::WaitQueue queue_;
  std::vector<Core> cores_;
  std::vector<Queue> queues_;  // one (shared) or one per core
  std::unordered_map<const kernel::Process*, Known> known_;
  kernel::RandomStream rng_;
  kernel::EventHandle balance_timer_;
  bool balance_armed_ = false;
  int balance_failed_ = 0;  // balancings in a row that found an imbalance and moved nothing
  CpuStats stats_;
};

}  // namespace racesim::host
