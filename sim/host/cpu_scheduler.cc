// A node's CPU cores under a CFS-like scheduler (see cpu_scheduler.h).
#include "sim/host/cpu_scheduler.h"

#include <algorithm>
#include <cassert>

namespace racesim::host {

CpuConfig CpuConfig::with_defaults() const {
  CpuConfig c = *this;
  // kernel/sched/fair.c, SCHED_TUNABLESCALING_LOG: factor = 1 + ilog2(min(ncpus, 8)).
  int factor = 1;
  for (int n = std::min(cores, 8); n > 1; n /= 2) ++factor;
  if (c.latency == 0) c.latency = 6 * kernel::kMillisecond * factor;
  if (c.min_granularity == 0) c.min_granularity = 750 * kernel::kMicrosecond * factor;
  if (c.wakeup_granularity == 0) c.wakeup_granularity = kernel::kMillisecond * factor;
  return c;
}

CpuScheduler::CpuScheduler(kernel::Simulation& sim, std::string name, const CpuConfig& config)
    : kernel::NamedWaitable(sim, "cpus", std::move(name)), sim_(sim), config_(config.with_defaults()),
      queue_(this, "run"), cores_(static_cast<std::size_t>(config.cores)) {
  assert(config.on() && "a CpuScheduler REQUIRES cores");
}

CpuScheduler::~CpuScheduler() {
  // The run is over: no timer of a core fires again.
  for (Core& c : cores_) sim_.cancel(c.timer);
}

int CpuScheduler::runnable() const {
  int n = static_cast<int>(waiting_.size());
  for (const Core& c : cores_) n += c.task != nullptr ? 1 : 0;
  return n;
}

Time CpuScheduler::slice() const {
  // The period shared by the work of one core's queue, never below the minimum granularity.
  const int per_core = std::max(1, (runnable() + config_.cores - 1) / config_.cores);
  return std::max(config_.latency / per_core, config_.min_granularity);
}

void CpuScheduler::note_runnable() { stats_.most_runnable = std::max(stats_.most_runnable, runnable()); }

void CpuScheduler::charge(Core& c) {
  Task* t = c.task;
  const Time ran = std::min(sim_.now() - c.started, t->remaining);
  t->remaining -= ran;
  t->vruntime += ran;
  stats_.busy += ran;
  c.started = sim_.now();
}

void CpuScheduler::start(int core, Task* t) {
  assert(t->core < 0 && !t->done && "a task starts on one core at a time");
  Core& c = cores_[static_cast<std::size_t>(core)];
  assert(c.task == nullptr && "a core runs one task");
  stats_.waited += sim_.now() - t->runnable_since;
  t->core = core;
  c.task = t;
  c.started = sim_.now();
  const Time run_for = std::min(t->remaining, slice());
  c.timer = sim_.schedule_at(kernel::add_time(sim_.now(), run_for), [this, core] { on_timer(core); });
}

void CpuScheduler::pick_next(int core) {
  if (waiting_.empty()) return;
  // The least virtual runtime; among equals the longest waiting (the run queue's tree puts an
  // equal key after those already in it), and among those that began to wait at one instant
  // (woken together: which CPU took which wake-up first is not modelled) a model choice.
  Time least = waiting_.front()->vruntime;
  for (const Task* t : waiting_) least = std::min(least, t->vruntime);
  Time first = kernel::kTimeMax;
  std::size_t pick = 0, tied = 0;  // the longest waiting of those with the least, and how many began with it
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    const Task* t = waiting_[i];
    if (t->vruntime != least) continue;
    if (t->runnable_since < first) first = t->runnable_since, pick = i, tied = 0;
    tied += t->runnable_since == first ? 1 : 0;
  }
  if (tied > 1 && sim_.choosing()) {
    // Option k: the k-th of them in queue order (0: the first queued).
    std::uint64_t k = sim_.choose(tied);
    for (std::size_t i = pick; i < waiting_.size(); ++i) {
      if (waiting_[i]->vruntime != least || waiting_[i]->runnable_since != first) continue;
      if (k-- == 0) {
        pick = i;
        break;
      }
    }
  }
  Task* t = waiting_[pick];
  waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pick));
  min_vruntime_ = std::max(min_vruntime_, t->vruntime);
  start(core, t);
}

CpuScheduler::Task* CpuScheduler::vacate(int core) {
  Core& c = cores_[static_cast<std::size_t>(core)];
  Task* t = c.task;
  assert(t != nullptr && "vacate REQUIRES a busy core");
  sim_.cancel(c.timer);
  c.timer = {};
  charge(c);
  c.task = nullptr;
  t->core = -1;
  t->runnable_since = sim_.now();
  return t;
}

void CpuScheduler::preempt(int core) {
  ++stats_.preemptions;
  waiting_.push_back(vacate(core));
}

void CpuScheduler::on_timer(int core) {
  assert(cores_[static_cast<std::size_t>(core)].task != nullptr && "a core's timer runs for its task");
  cores_[static_cast<std::size_t>(core)].timer = {};  // it has fired
  Task* t = vacate(core);
  if (t->remaining == 0) {
    t->done = true;
    sim_.wake(t->process);
    pick_next(core);
    return;
  }
  // Its slice ended: it goes on unless work with less virtual runtime waits.
  if (std::none_of(waiting_.begin(), waiting_.end(), [&](const Task* w) { return w->vruntime < t->vruntime; })) {
    start(core, t);
    return;
  }
  ++stats_.preemptions;
  waiting_.push_back(t);
  pick_next(core);
}

void CpuScheduler::forget(Task* t) {
  if (t->done) return;
  if (t->core >= 0) {
    const int core = t->core;
    vacate(core);
    pick_next(core);
    return;
  }
  waiting_.erase(std::find(waiting_.begin(), waiting_.end(), t));
}

void CpuScheduler::run(Time work) {
  assert(work >= 0 && "run REQUIRES work >= 0");
  kernel::Process* self = sim_.current();
  assert(self != nullptr && "run REQUIRES a process");
  if (work == 0) return;
  Task t;
  t.process = self;
  t.remaining = work;
  t.seq = next_seq_++;
  t.runnable_since = sim_.now();
  // min_vruntime follows the least virtual runtime of the runnable work (it never goes back).
  if (runnable() > 0) {
    Time least = kernel::kTimeMax;
    for (const Task* w : waiting_) least = std::min(least, w->vruntime);
    for (const Core& c : cores_) {
      if (c.task != nullptr) least = std::min(least, c.task->vruntime + (sim_.now() - c.started));
    }
    min_vruntime_ = std::max(min_vruntime_, least);
  }
  // Placed no more than half a period behind the least virtual runtime (a sleeper's credit).
  const auto known = vruntime_of_.find(self);
  t.vruntime = std::max(known == vruntime_of_.end() ? min_vruntime_ : known->second,
                        min_vruntime_ > config_.latency / 2 ? min_vruntime_ - config_.latency / 2 : 0);
  struct Forget {  // a process killed while it waits or runs gives its core back
    CpuScheduler& cpu;
    Task& t;
    ~Forget() { cpu.forget(&t); }
  } forget{*this, t};
  // A free core (the first: the cores are alike, so which is no choice), else a wake-up
  // preemption of the running work with the most virtual runtime, else a wait for a slice's end.
  int idle = -1;
  for (int i = 0; i < config_.cores && idle < 0; ++i) {
    if (cores_[static_cast<std::size_t>(i)].task == nullptr) idle = i;
  }
  if (idle >= 0) {
    start(idle, &t);
  } else {
    int victim = 0;
    Time most = -1;
    for (int i = 0; i < config_.cores; ++i) {
      Core& c = cores_[static_cast<std::size_t>(i)];
      const Time v = c.task->vruntime + (sim_.now() - c.started);
      if (v > most) most = v, victim = i;
    }
    if (t.vruntime + config_.wakeup_granularity < most) {
      preempt(victim);
      start(victim, &t);
    } else {
      waiting_.push_back(&t);
    }
  }
  note_runnable();
  // Bounded: each wake is the task's completion (the kernel wakes nothing else here).
  while (!t.done) sim_.wait_on(&queue_, kernel::kTimeMax);
  vruntime_of_[self] = t.vruntime;
}

}  // namespace racesim::host
