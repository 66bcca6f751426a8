// A node's CPU cores under Linux's CFS or EEVDF scheduler (see cpu_scheduler.h).
#include "sim/host/cpu_scheduler.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace racesim::host {

CpuConfig CpuConfig::with_defaults() const {
  CpuConfig c = *this;
  // kernel/sched/fair.c, SCHED_TUNABLESCALING_LOG: factor = 1 + ilog2(min(ncpus, 8)).
  int factor = 1;
  for (int n = std::min(cores, 8); n > 1; n /= 2) ++factor;
  if (c.latency == 0) c.latency = 6 * kernel::kMillisecond * factor;
  if (c.min_granularity == 0) c.min_granularity = 750 * kernel::kMicrosecond * factor;
  if (c.wakeup_granularity == 0) c.wakeup_granularity = kernel::kMillisecond * factor;
  // kernel/sched/fair.c, sysctl_sched_base_slice: 0.70 ms since 2ae891b82695 (0.75 ms before),
  // scaled as the others.
  if (c.base_slice == 0) c.base_slice = 700 * kernel::kMicrosecond * factor;
  // CONFIG_HZ=250, the default of most distributions' kernels.
  if (c.tick == 0) c.tick = 4 * kernel::kMillisecond;
  // kernel/sched/topology.c: a domain of w CPUs balances at most every 2w ms, times busy_factor
  // 16 while busy; a move that only turns an imbalance of one around waits for a second run.
  if (c.balance_interval == 0) c.balance_interval = 64 * kernel::kMillisecond * std::max(1, cores);
  // kernel/sched/pelt.h: LOAD_AVG_PERIOD, the periods of 1024 us in which a load halves.
  if (c.load_half_life == 0) c.load_half_life = 32 * kernel::kMillisecond;
  return c;
}

namespace {
// A sched domain's imbalance_pct for the CPUs of one cache (kernel/sched/topology.c: 117), as
// a ratio: the margin by which a core counts as overloaded, or busier than another.
constexpr double kImbalanceRatio = 1.17;
// The balancings in a row that moved nothing after which any task's load counts as nothing
// (Linux halves it once per failure, shr_bound).
constexpr int kMostBalanceFailed = 32;
}  // namespace

CpuScheduler::CpuScheduler(kernel::Simulation& sim, std::string name, const CpuConfig& config)
    : kernel::NamedWaitable(sim, "cpus", std::move(name)), sim_(sim), config_(config.with_defaults()),
      queue_(this, "run"), cores_(static_cast<std::size_t>(config.cores)),
      queues_(config.per_core ? static_cast<std::size_t>(config.cores) : 1), rng_(sim.stream("cpus/" + this->name())) {
  assert(config.on() && "a CpuScheduler REQUIRES cores");
  assert(config_.balance_interval >= 2 && "a balance_interval REQUIRES two ticks of at least 1 ns");
  assert(config_.load_half_life > 0 && "a load_half_life REQUIRES a duration");
  assert(config_.base_slice > 0 && config_.tick > 0 && "EEVDF REQUIRES a slice and a tick");
}

CpuScheduler::~CpuScheduler() {
  // The run is over: no timer of a core or of the balancing fires again.
  for (Core& c : cores_) {
    sim_.cancel(c.timer);
    if (c.kept_for != nullptr) sim_.cancel(c.keep_timer);
  }
  if (balance_armed_) sim_.cancel(balance_timer_);
}

int CpuScheduler::runnable() const {
  int n = 0;
  for (const Queue& q : queues_) n += static_cast<int>(q.waiting.size());
  for (const Core& c : cores_) n += c.task != nullptr ? 1 : 0;
  return n;
}

int CpuScheduler::load(int core) const {
  if (!config_.per_core) return runnable();
  const auto at = static_cast<std::size_t>(core);
  return static_cast<int>(queues_[at].waiting.size()) + (cores_[at].idle() ? 0 : 1);
}

Time CpuScheduler::slice(int core) const {
  // The period shared by the work of one core's queue, never below the minimum granularity.
  const int per_core = config_.per_core ? std::max(1, load(core))
                                        : std::max(1, (runnable() + config_.cores - 1) / config_.cores);
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

void CpuScheduler::start(int core, Task* t, bool fresh_slice) {
  assert(t->core < 0 && !t->done && "a task starts on one core at a time");
  Core& c = cores_[static_cast<std::size_t>(core)];
  assert(c.idle() && "a core runs one task");
  assert((!config_.per_core || t->queue == core) && "per core, a task runs on its queue's core");
  assert((eevdf() || fresh_slice || c.slice_end > sim_.now()) && "a slice goes on only while it lasts");
  stats_.waited += sim_.now() - t->runnable_since;
  if (config_.per_core) age(t->pelt, true, false);  // it waited since its last change
  t->core = core;
  c.task = t;
  c.started = sim_.now();
  if (fresh_slice) {
    c.run_began = sim_.now();
    if (eevdf()) {
      t->vprot = t->deadline;  // RUN_TO_PARITY: protected up to the deadline it was picked with
    } else {
      c.slice_end = kernel::add_time(sim_.now(), slice(core));
    }
  }
  arm(core);
}

void CpuScheduler::arm(int core) {
  Core& c = cores_[static_cast<std::size_t>(core)];
  const Task* t = c.task;
  assert(t != nullptr && c.started == sim_.now() && "arm REQUIRES a task charged up to now");
  Time run_for = t->remaining;
  if (!eevdf()) {
    run_for = std::min(run_for, c.slice_end - sim_.now());
  } else if (!queue_of(core).waiting.empty()) {
    // The first tick at or after its protection ends (strictly after now once it has ended: the
    // tick that ended it has passed).
    const Time until = std::max<Time>(0, t->vprot - t->vruntime);
    const Time at = kernel::add_time(sim_.now(), until);
    const Time next = until > 0 && at % config_.tick == 0 ? at : kernel::add_time(at - at % config_.tick, config_.tick);
    run_for = std::min(run_for, next - sim_.now());
  }
  c.timer = sim_.schedule_at(kernel::add_time(sim_.now(), run_for), [this, core] { on_timer(core); });
}

void CpuScheduler::rearm(int core) {
  Core& c = cores_[static_cast<std::size_t>(core)];
  Task* t = c.task;
  assert(eevdf() && t != nullptr && "rearm REQUIRES a running task under EEVDF");
  sim_.cancel(c.timer);
  c.timer = {};
  charge(c);
  // Alone, it was not stopped at the ticks, but each renewed its deadline once its slice was
  // used: as the last tick it ran through did (exact while the slice is at most a tick).
  const Time last_tick = sim_.now() - sim_.now() % config_.tick;
  if (c.run_began < last_tick) {
    const Time v_then = t->vruntime - (sim_.now() - last_tick);
    if (v_then >= t->deadline) t->deadline = v_then + config_.base_slice;
  }
  arm(core);
}

Time CpuScheduler::vruntime_now(const Task* t) const {
  if (t->core < 0) return t->vruntime;
  const Core& c = cores_[static_cast<std::size_t>(t->core)];
  return t->vruntime + std::min(sim_.now() - c.started, t->remaining);
}

CpuScheduler::Avg CpuScheduler::average(int q) const {
  Avg a;
  for (const Task* w : queues_[static_cast<std::size_t>(q)].waiting) {
    a.sum += w->vruntime;
    ++a.n;
  }
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    const Task* t = cores_[i].task;
    if (t == nullptr || (config_.per_core && static_cast<int>(i) != q)) continue;
    a.sum += vruntime_now(t);
    ++a.n;
  }
  return a;
}

Time CpuScheduler::placed(const Avg& a, int q, Time lag) const {
  if (a.n > 0) lag = lag * (a.n + 1) / a.n;
  return a.v(queues_[static_cast<std::size_t>(q)].min_vruntime) - lag;
}

template <class Key, class Allowed>
std::size_t CpuScheduler::least(const std::vector<Task*>& waiting, Key key, Allowed allowed, bool choose) {
  std::size_t pick = waiting.size(), tied = 0;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    const Task* t = waiting[i];
    if (!allowed(t)) continue;
    if (pick == waiting.size() || key(t) < key(waiting[pick]) ||
        (key(t) == key(waiting[pick]) && t->runnable_since < waiting[pick]->runnable_since)) {
      pick = i;
      tied = 1;
    } else if (key(t) == key(waiting[pick]) && t->runnable_since == waiting[pick]->runnable_since) {
      ++tied;
    }
  }
  if (tied > 1 && choose && sim_.choosing()) {
    // Option k: the k-th of them in queue order (0: the first queued).
    std::uint64_t k = sim_.choose(tied);
    const Task* first = waiting[pick];
    for (std::size_t i = pick; i < waiting.size(); ++i) {
      const Task* t = waiting[i];
      if (!allowed(t) || key(t) != key(first) || t->runnable_since != first->runnable_since) continue;
      if (k-- == 0) {
        pick = i;
        break;
      }
    }
  }
  return pick;
}

CpuScheduler::Task* CpuScheduler::pick_eevdf(int q, Task* curr, bool protect, bool choose) {
  const Avg a = average(q);
  const bool curr_eligible = curr != nullptr && a.eligible(vruntime_now(curr));
  if (curr_eligible && protect && vruntime_now(curr) < curr->vprot) return curr;
  std::vector<Task*>& waiting = queues_[static_cast<std::size_t>(q)].waiting;
  const auto deadline = [](const Task* t) { return t->deadline; };
  std::size_t i = least(waiting, deadline, [&a](const Task* t) { return a.eligible(t->vruntime); }, choose);
  Task* best = i < waiting.size() ? waiting[i] : nullptr;
  if (curr_eligible && (best == nullptr || curr->deadline < best->deadline)) return curr;
  if (best != nullptr) return best;
  // None of these is eligible (a shared queue's V counts the work on the other cores too): the
  // one with the least virtual runtime.
  const auto vruntime = [](const Task* t) { return t->vruntime; };
  i = least(waiting, vruntime, [](const Task*) { return true; }, choose);
  if (curr != nullptr && (i == waiting.size() || vruntime_now(curr) <= waiting[i]->vruntime)) return curr;
  assert(i < waiting.size() && "pick_eevdf REQUIRES work to pick");
  return waiting[i];
}

Time CpuScheduler::lag_of(const Task* t, const Avg& a, int q) const {
  // fair.c's update_entity_lag: V - v, within max(2 slices, a tick) either way.
  const Time limit = std::max(2 * config_.base_slice, config_.tick);
  return std::clamp(a.v(queues_[static_cast<std::size_t>(q)].min_vruntime) - t->vruntime, -limit, limit);
}

void CpuScheduler::on_tick(int core, Task* t) {
  assert(eevdf() && t->core < 0 && "on_tick REQUIRES the task taken off its core");
  if (t->vruntime >= t->deadline) t->deadline = t->vruntime + config_.base_slice;  // update_deadline
  const int q = config_.per_core ? core : 0;
  std::vector<Task*>& waiting = queues_[static_cast<std::size_t>(q)].waiting;
  // It competes as the queue's current task (last in the queue: an equal deadline goes to the
  // others), unprotected.
  waiting.push_back(t);
  Task* next = pick_eevdf(q, nullptr, false, true);
  waiting.erase(std::find(waiting.begin(), waiting.end(), next));
  if (next == t) {
    start(core, t, false);  // it goes on, as picked before (its protection stays as it was)
    return;
  }
  ++stats_.preemptions;
  arm_balance();
  start(core, next);
}

void CpuScheduler::waiting_began(int q) {
  if (!eevdf()) return;
  // The running work of the queue was timed to its end, alone: now it is timed to the ticks.
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    if (cores_[i].task != nullptr && (!config_.per_core || static_cast<int>(i) == q)) rearm(static_cast<int>(i));
  }
}

void CpuScheduler::release(int core) {
  Core& c = cores_[static_cast<std::size_t>(core)];
  c.kept_for = nullptr;
  c.keep_timer = {};
  pick_next(core);
}

void CpuScheduler::update_min_vruntime(int q) {
  Queue& queue = queues_[static_cast<std::size_t>(q)];
  Time least = kernel::kTimeMax;
  for (const Task* w : queue.waiting) least = std::min(least, w->vruntime);
  for (std::size_t i = 0; i < cores_.size(); ++i) {
    const Core& c = cores_[i];
    if (c.task == nullptr || (config_.per_core && static_cast<int>(i) != q)) continue;
    least = std::min(least, c.task->vruntime + (sim_.now() - c.started));
  }
  if (least != kernel::kTimeMax) queue.min_vruntime = std::max(queue.min_vruntime, least);
}

void CpuScheduler::migrate(Task* t, int to) {
  assert(t->core < 0 && "only waiting work changes queue");
  if (t->queue == to) return;
  const Queue& from = queues_[static_cast<std::size_t>(t->queue)];
  const Queue& into = queues_[static_cast<std::size_t>(to)];
  if (eevdf()) {
    // Its lag on the queue it leaves, kept on the one it joins (placed as a wake-up is), its
    // deadline and protection as far ahead of it as they were.
    const Time v = placed(average(to), to, lag_of(t, average(t->queue).with(t->vruntime), t->queue));
    t->deadline += v - t->vruntime;
    t->vprot += v - t->vruntime;
    t->vruntime = v;
  } else {
    // Its lead over the least of the queue it leaves, kept over the least of the one it joins.
    const Time lead = t->vruntime > from.min_vruntime ? t->vruntime - from.min_vruntime : 0;
    t->vruntime = kernel::add_time(into.min_vruntime, lead);
  }
  t->queue = to;
  ++stats_.migrations;
}

CpuScheduler::Task* CpuScheduler::take_waiting(int core) {
  std::vector<Task*>& waiting = queue_of(core).waiting;
  assert(!waiting.empty() && "take_waiting REQUIRES waiting work");
  // Option k: the k-th longest waiting (0: the longest; Linux takes the least recently run).
  std::size_t k = 0;
  if (waiting.size() > 1 && sim_.choosing()) k = static_cast<std::size_t>(sim_.choose(waiting.size()));
  Task* t = waiting[k];
  waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(k));
  return t;
}

void CpuScheduler::pick_next(int core) {
  std::vector<Task*>& waiting = queue_of(core).waiting;
  if (waiting.empty()) {
    if (!config_.per_core) return;
    // New-idle balancing: pull from the busiest core with waiting work (the first of equals).
    int busiest = -1;
    for (int i = 0; i < config_.cores; ++i) {
      if (i == core || queue_of(i).waiting.empty()) continue;
      if (busiest < 0 || load(i) > load(busiest)) busiest = i;
    }
    if (busiest < 0) return;
    Task* t = take_waiting(busiest);
    migrate(t, core);
    start(core, t);
    return;
  }
  if (eevdf()) {
    Task* t = pick_eevdf(config_.per_core ? core : 0, nullptr, true, true);
    waiting.erase(std::find(waiting.begin(), waiting.end(), t));
    start(core, t);
    return;
  }
  // The least virtual runtime; among equals the longest waiting (the run queue's tree puts an
  // equal key after those already in it), and among those that began to wait at one instant
  // (woken together: which CPU took which wake-up first is not modelled) a model choice.
  const std::size_t pick =
      least(waiting, [](const Task* w) { return w->vruntime; }, [](const Task*) { return true; }, true);
  Task* t = waiting[pick];
  waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(pick));
  Queue& q = queue_of(core);
  q.min_vruntime = std::max(q.min_vruntime, t->vruntime);
  start(core, t);
}

CpuScheduler::Task* CpuScheduler::vacate(int core) {
  Core& c = cores_[static_cast<std::size_t>(core)];
  Task* t = c.task;
  assert(t != nullptr && "vacate REQUIRES a busy core");
  sim_.cancel(c.timer);
  c.timer = {};
  charge(c);
  if (config_.per_core) age(t->pelt, true, true);  // it ran since its last change
  c.task = nullptr;
  t->core = -1;
  t->runnable_since = sim_.now();
  return t;
}

void CpuScheduler::preempt(int core) {
  ++stats_.preemptions;
  queue_of(core).waiting.push_back(vacate(core));
  arm_balance();
}

void CpuScheduler::on_timer(int core) {
  assert(cores_[static_cast<std::size_t>(core)].task != nullptr && "a core's timer runs for its task");
  cores_[static_cast<std::size_t>(core)].timer = {};  // it has fired
  Task* t = vacate(core);
  if (t->remaining == 0) {
    if (eevdf()) {
      // It stops: its lag is kept, and its queue's V without it (see run()).
      const int q = config_.per_core ? core : 0;
      const Avg without = average(q);
      t->lag = lag_of(t, without.with(t->vruntime), q);
      t->stopped_v = without.v(queues_[static_cast<std::size_t>(q)].min_vruntime);
    }
    t->done = true;
    sim_.wake(t->process);
    // Kept for the process for the rest of the instant: the release runs after it (woken now,
    // it runs first) has run again or done something else.
    Core& c = cores_[static_cast<std::size_t>(core)];
    c.kept_for = t->process;
    c.keep_timer = sim_.schedule_at(sim_.now(), [this, core] { release(core); });
    return;
  }
  if (eevdf()) {
    on_tick(core, t);
  } else {
    end_slice(core, t);
  }
}

void CpuScheduler::end_slice(int core, Task* t) {
  std::vector<Task*>& waiting = queue_of(core).waiting;
  if (std::none_of(waiting.begin(), waiting.end(), [&](const Task* w) { return w->vruntime < t->vruntime; })) {
    start(core, t);
    return;
  }
  ++stats_.preemptions;
  waiting.push_back(t);
  arm_balance();
  pick_next(core);
}

void CpuScheduler::place(Task* t, int core, int victim) {
  if (cores_[static_cast<std::size_t>(core)].idle()) {
    start(core, t);
    return;
  }
  if (eevdf()) {
    // Wake-up preemption (check_preempt_wakeup_fair): when it is what pick_eevdf would run now
    // in place of the victim's task, protection included.
    const int q = config_.per_core ? core : 0;
    std::vector<Task*>& waiting = queues_[static_cast<std::size_t>(q)].waiting;
    const bool was_empty = waiting.empty();
    waiting.push_back(t);
    Task* running = victim >= 0 ? cores_[static_cast<std::size_t>(victim)].task : nullptr;
    if (running != nullptr && pick_eevdf(q, running, true, false) == t) {
      waiting.pop_back();
      preempt(victim);
      start(victim, t);
    } else {
      arm_balance();
    }
    if (was_empty) waiting_began(q);
    return;
  }
  if (victim >= 0 && cores_[static_cast<std::size_t>(victim)].task != nullptr) {
    const Core& c = cores_[static_cast<std::size_t>(victim)];
    if (t->vruntime + config_.wakeup_granularity < c.task->vruntime + (sim_.now() - c.started)) {
      preempt(victim);
      start(victim, t);
      return;
    }
  }
  queue_of(core).waiting.push_back(t);
  arm_balance();
}

void CpuScheduler::arm_balance() {
  if (!config_.per_core || balance_armed_) return;
  // Linux balances on the tick, whatever the work does: at multiples of the period.
  const Time period = config_.balance_interval / 2;
  const Time next = kernel::add_time(sim_.now() - sim_.now() % period, period);
  balance_timer_ = sim_.schedule_at(next, [this] { on_balance(); });
  balance_armed_ = true;
}

CpuScheduler::Pelt CpuScheduler::aged(const Pelt& p, bool runnable, bool running) const {
  assert(sim_.now() >= p.at && "load is aged forwards");
  if (sim_.now() == p.at) return p;
  // Each average moves towards 1 (runnable, running) or 0 by the share of the way that a
  // geometric decay of one half per half-life gives.
  const double keep =
      std::exp2(-static_cast<double>(sim_.now() - p.at) / static_cast<double>(config_.load_half_life));
  Pelt out;
  out.load = runnable ? 1 - (1 - p.load) * keep : p.load * keep;
  out.util = running ? 1 - (1 - p.util) * keep : p.util * keep;
  out.at = sim_.now();
  return out;
}

void CpuScheduler::add_sleeper(int q, const Pelt& p, double sign) {
  assert((sign == 1 || sign == -1) && "add_sleeper REQUIRES a sign of 1 or -1");
  Pelt& sleepers = queues_[static_cast<std::size_t>(q)].blocked;
  age(sleepers, false, false);
  // (Rounding can leave a removal a hair below none: never below none.)
  sleepers.load = std::max(0.0, sleepers.load + sign * p.load);
  sleepers.util = std::max(0.0, sleepers.util + sign * p.util);
}

CpuScheduler::CoreLoad CpuScheduler::core_load(int core) const {
  const auto at = static_cast<std::size_t>(core);
  CoreLoad out;
  const auto add = [&out](const Pelt& p) {
    out.load += p.load;
    out.util += p.util;
  };
  add(aged(queues_[at].blocked, false, false));
  for (const Task* w : queues_[at].waiting) add(aged(w->pelt, true, false));
  if (const Task* running = cores_[at].task) add(aged(running->pelt, true, true));
  // (A core kept for a process whose work ended at this instant counts it as runnable below; its
  // load joins the sleepers' when it resumes, at this instant too.)
  // fair.c's group_classify for a group of one CPU of capacity 1 (its runnable average is
  // the load at nice 0).
  const int n = load(core);
  if (n >= 2 && (out.util * kImbalanceRatio > 1 || out.load > kImbalanceRatio)) {
    out.kind = Kind::kOverloaded;
  } else if (n == 0 || (out.load <= kImbalanceRatio && out.util * kImbalanceRatio < 1)) {
    out.kind = Kind::kHasSpare;
  } else {
    out.kind = Kind::kFullyBusy;
  }
  return out;
}

bool CpuScheduler::balance_load(int busiest, int local, double imbalance) {
  assert(busiest != local && imbalance > 0 && "balance_load REQUIRES two cores and an imbalance");
  std::vector<Task*>& waiting = queue_of(busiest).waiting;
  // A task's load counts half for each balancing in a row that moved nothing (shr_bound).
  const double counted = std::ldexp(1.0, -balance_failed_);
  bool moved = false;
  std::vector<std::size_t> light;
  // Bounded: each pass moves one of the busiest's waiting tasks, or stops.
  while (imbalance > 0) {
    light.clear();
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      // (Equal within rounding counts as light: a load of x moves against an imbalance of x/2.)
      if (aged(waiting[i]->pelt, true, false).load * counted <= imbalance * (1 + 1e-9)) light.push_back(i);
    }
    if (light.empty()) break;
    // Option k: the k-th longest waiting of them (0: the longest; Linux takes the least
    // recently run first).
    std::size_t k = 0;
    if (light.size() > 1 && sim_.choosing()) k = static_cast<std::size_t>(sim_.choose(light.size()));
    Task* t = waiting[light[k]];
    waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(light[k]));
    imbalance -= aged(t->pelt, true, false).load;
    migrate(t, local);
    place(t, local, local);  // Linux checks the moved task's preemption of the running one
    moved = true;
  }
  return moved;
}

void CpuScheduler::drop_ended() {
  // In the order the processes were made, so that the sums' rounding is the same in every run.
  std::vector<const kernel::Process*> ended;
  for (const auto& [p, k] : known_) {
    if (p->finished()) ended.push_back(p);
  }
  std::sort(ended.begin(), ended.end(),
            [](const kernel::Process* a, const kernel::Process* b) { return a->id() < b->id(); });
  for (const kernel::Process* p : ended) {
    const auto it = known_.find(p);
    // Its load and utilisation have decayed as its queue's sleepers' have since it last ran, so
    // taking them off now leaves what taking them off when it ended would have.
    add_sleeper(it->second.queue, aged(it->second.pelt, false, false), -1);
    known_.erase(it);
  }
}

void CpuScheduler::on_balance() {
  balance_armed_ = false;
  balance_timer_ = {};
  drop_ended();
  // The busiest: the overloaded core with the most load and work waiting; the other: the least
  // loaded of the rest (Linux balances each CPU towards itself; the least loaded gains most).
  std::vector<CoreLoad> at(static_cast<std::size_t>(config_.cores));
  double total = 0;
  int busiest = -1;
  for (int i = 0; i < config_.cores; ++i) {
    // A core is idle only while no work waits anywhere (placement and new-idle balancing).
    assert((!cores_[static_cast<std::size_t>(i)].idle() || queue_of(i).waiting.empty()) &&
           "an idle core has nothing waiting");
    const CoreLoad& c = at[static_cast<std::size_t>(i)] = core_load(i);
    total += c.load;
    if (c.kind == Kind::kOverloaded && !queue_of(i).waiting.empty() &&
        (busiest < 0 || c.load > at[static_cast<std::size_t>(busiest)].load)) {
      busiest = i;
    }
  }
  int local = -1;
  for (int i = 0; i < config_.cores && busiest >= 0; ++i) {
    if (i != busiest && (local < 0 || at[static_cast<std::size_t>(i)].load < at[static_cast<std::size_t>(local)].load)) {
      local = i;
    }
  }
  bool imbalanced = false, moved = false;
  if (local >= 0) {
    // fair.c's find_busiest_group and calculate_imbalance between two busy cores: a core with
    // spare capacity takes no work from a busy one; one that is fully busy or overloaded takes
    // load when it has less than the busiest and than the average (overloaded: by 117%).
    const CoreLoad& b = at[static_cast<std::size_t>(busiest)];
    const CoreLoad& l = at[static_cast<std::size_t>(local)];
    assert(l.kind != Kind::kHasSpare || !cores_[static_cast<std::size_t>(local)].idle() ||
           !"an idle core pulls waiting work at once");
    const double average = total / config_.cores;
    imbalanced = l.kind != Kind::kHasSpare && l.load < b.load && l.load < average &&
                 (l.kind != Kind::kOverloaded || b.load > kImbalanceRatio * l.load);
    // With more than two cores the busiest overloaded core can have less than the average (a
    // core with spare capacity and many sleepers has more): nothing moves, a failed balancing.
    const double imbalance = std::min(b.load - average, average - l.load);
    if (imbalanced && imbalance > 0) moved = balance_load(busiest, local, imbalance);
  }
  balance_failed_ = imbalanced && !moved ? std::min(balance_failed_ + 1, kMostBalanceFailed) : 0;
  for (const Queue& q : queues_) {
    if (!q.waiting.empty()) {
      arm_balance();
      break;
    }
  }
}

void CpuScheduler::forget(Task* t) {
  if (t->done) return;
  if (t->core >= 0) {
    const int core = t->core;
    vacate(core);
    pick_next(core);
    return;
  }
  std::vector<Task*>& waiting = queues_[static_cast<std::size_t>(t->queue)].waiting;
  waiting.erase(std::find(waiting.begin(), waiting.end(), t));
}

void CpuScheduler::run(Time work) {
  assert(work >= 0 && "run REQUIRES work >= 0");
  kernel::Process* self = sim_.current();
  assert(self != nullptr && "run REQUIRES a process");
  if (work == 0) return;
  Task t;
  t.process = self;
  t.remaining = work;
  t.runnable_since = sim_.now();
  const auto known = known_.find(self);
  if (config_.per_core) {
    // Its load and utilisation decayed while it slept, and leave its last queue's sleepers. A
    // process new to the cores was made at 0 with both at 1, and slept since.
    if (known != known_.end()) {
      t.pelt = aged(known->second.pelt, false, false);
      add_sleeper(known->second.queue, t.pelt, -1);
    } else {
      t.pelt = aged(Pelt{1, 1, 0}, false, false);
    }
  }
  struct Forget {  // a process killed while it waits or runs gives its core back
    CpuScheduler& cpu;
    Task& t;
    ~Forget() { cpu.forget(&t); }
  } forget{*this, t};
  // Its work ended on a core at this instant: it goes on there, in its slice if any is left
  // (else as a slice's end: unless work with less virtual runtime waits).
  for (int i = 0; i < config_.cores; ++i) {
    Core& c = cores_[static_cast<std::size_t>(i)];
    if (c.kept_for != self) continue;
    assert(known != known_.end() && "a core is kept for a process that ran on it");
    sim_.cancel(c.keep_timer);
    c.kept_for = nullptr;
    c.keep_timer = {};
    t.queue = known->second.queue;
    t.vruntime = known->second.vruntime;
    t.deadline = known->second.deadline;
    t.vprot = known->second.vprot;
    if (eevdf() || c.slice_end > sim_.now()) {
      start(i, &t, false);  // (EEVDF: it never left the core; the ticks see to its slice)
    } else {
      end_slice(i, &t);
    }
    return finish(t, self);
  }
  // Where it goes. Shared: the node's queue. Per core: an idle core (its last one if idle), else
  // its last core's queue (work that has not run here yet: a drawn core's).
  int idle = -1;
  for (int i = 0; i < config_.cores && idle < 0; ++i) {
    if (cores_[static_cast<std::size_t>(i)].idle()) idle = i;
  }
  int core = 0;
  if (config_.per_core) {
    const int last = known != known_.end() ? known->second.queue : -1;
    if (last >= 0 && cores_[static_cast<std::size_t>(last)].idle()) {
      core = last;
    } else if (idle >= 0) {
      core = idle;
    } else if (last >= 0) {
      core = last;
    } else {
      // Where it ran before it ran here is not modelled: a core drawn from the node's stream,
      // option k of a model choice the k-th after it (0: the drawn one).
      const auto n = static_cast<std::uint64_t>(config_.cores);
      std::uint64_t drawn = rng_.uniform_u64(n);
      if (sim_.choosing()) drawn = (drawn + sim_.choose(n)) % n;
      core = static_cast<int>(drawn);
    }
  }
  const int q = config_.per_core ? core : 0;
  // min_vruntime follows the least virtual runtime of the queue's runnable work.
  if (config_.per_core ? load(core) > 0 : runnable() > 0) update_min_vruntime(q);
  const Queue& queue = queues_[static_cast<std::size_t>(q)];
  if (eevdf()) {
    // Placed its lag behind V (place_entity, PLACE_LAG: scaled by (n+1)/n for the n it joins),
    // its deadline a slice after. A negative lag was paid off while it slept, as far as the
    // queue's V moved on (DELAY_DEQUEUE keeps it queued until it is eligible), never past 0
    // (DELAY_ZERO); on another queue, or an empty one, it is 0. New work starts at V with half a
    // slice (PLACE_DEADLINE_INITIAL).
    const Avg a = average(q);
    const Time v = a.v(queue.min_vruntime);
    Time lag = 0;
    if (known != known_.end()) {
      const Known& k = known->second;
      lag = k.lag;
      if (lag < 0) lag = a.n == 0 || k.queue != q ? 0 : std::min<Time>(0, lag + std::max<Time>(0, v - k.stopped_v));
      if (k.queue != q) ++stats_.migrations;
    }
    t.queue = q;
    t.vruntime = placed(a, q, lag);
    t.deadline = t.vruntime + (known != known_.end() ? config_.base_slice : config_.base_slice / 2);
  } else {
    // Placed no more than half a period behind the least virtual runtime (a sleeper's credit),
    // its lead carried over when it last ran from another queue.
    Time own = queue.min_vruntime;
    if (known != known_.end()) {
      t.queue = known->second.queue;
      t.vruntime = known->second.vruntime;
      if (config_.per_core) migrate(&t, q);
      own = t.vruntime;
    }
    t.queue = q;
    t.vruntime =
        std::max(own, queue.min_vruntime > config_.latency / 2 ? queue.min_vruntime - config_.latency / 2 : 0);
  }
  if (config_.per_core) {
    place(&t, core, core);
  } else if (idle >= 0) {
    // A free core (the first: the cores are alike, so which is no choice).
    place(&t, idle, -1);
  } else {
    // A wake-up preemption of the running work with the most virtual runtime, else a wait for a
    // slice's end.
    // (A core kept for another process's next run runs nothing to preempt: queued on the first.)
    int victim = 0;
    Time most = -1;
    for (int i = 0; i < config_.cores; ++i) {
      Core& c = cores_[static_cast<std::size_t>(i)];
      if (c.task == nullptr) continue;
      const Time v = c.task->vruntime + (sim_.now() - c.started);
      if (v > most) most = v, victim = i;
    }
    place(&t, victim, victim);
  }
  finish(t, self);
}

void CpuScheduler::finish(Task& t, kernel::Process* self) {
  note_runnable();
  // Bounded: each wake is the task's completion (the kernel wakes nothing else here).
  while (!t.done) sim_.wait_on(&queue_, kernel::kTimeMax);
  Known& k = known_[self];
  k.vruntime = t.vruntime;
  k.deadline = t.deadline;
  k.vprot = t.vprot;
  k.lag = t.lag;
  k.stopped_v = t.stopped_v;
  k.queue = t.queue;
  if (config_.per_core) {
    // It sleeps from now: its load joins its queue's sleepers'.
    k.pelt = aged(t.pelt, false, false);
    add_sleeper(t.queue, k.pelt, 1);
  }
}

}  // namespace racesim::host
