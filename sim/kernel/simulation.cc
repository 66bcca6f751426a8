#include "sim/kernel/simulation.h"

#include <algorithm>
#include <cassert>
#include <exception>
#include <iterator>

#include "sim/kernel/call_on_stack.h"
#include "sim/kernel/forced_unwind.h"

namespace racesim::kernel {

namespace {
// A read prefetch the optimiser keeps. GCC's interprocedural analysis takes a function whose
// only effects are __builtin_prefetch calls for a `const` function, and a call to a const void
// function is dead code: prefetch_next() was compiled out of advance() that way, silently
// (BM_Timers/10000 ran at 0.84M events/s instead of 1.44M). An empty volatile asm is an effect
// the compiler must keep; tests/sim/kernel/prefetch_kept.sh checks the optimised advance().
inline void prefetch(const void* p) {
  __builtin_prefetch(p);
  asm volatile("");
}
}  // namespace

const char* to_string(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kCompleted:
      return "completed";
    case RunOutcome::kDeadlock:
      return "deadlock";
    case RunOutcome::kTimeLimit:
      return "time_limit";
    case RunOutcome::kEventLimit:
      return "event_limit";
    case RunOutcome::kStopped:
      return "stopped";
    case RunOutcome::kError:
      return "error";
  }
  return "?";
}

// ---- Waitable / WaitQueue / Process ----

void Waitable::releasers(const WaitQueue&, const Process&, std::vector<const Process*>&) const {}

WaitQueue::~WaitQueue() {
  // Waiters are unlinked by the simulation's teardown before primitives die in well-formed
  // programs; if a primitive dies first, detach its waiters so nothing dangles.
  while (head_ != nullptr) pop_front();
}

void WaitQueue::push_back(Process* p) {
  assert(p->wq_ == nullptr);
  p->wq_ = this;
  p->wq_prev_ = tail_;
  p->wq_next_ = nullptr;
  if (tail_) {
    tail_->wq_next_ = p;
  } else {
    head_ = p;
  }
  tail_ = p;
  ++size_;
}

void WaitQueue::remove(Process* p) {
  assert(p->wq_ == this);
  if (p->wq_prev_) {
    p->wq_prev_->wq_next_ = p->wq_next_;
  } else {
    head_ = p->wq_next_;
  }
  if (p->wq_next_) {
    p->wq_next_->wq_prev_ = p->wq_prev_;
  } else {
    tail_ = p->wq_prev_;
  }
  p->wq_ = nullptr;
  p->wq_prev_ = p->wq_next_ = nullptr;
  --size_;
}

Process* WaitQueue::pop_front() {
  Process* p = head_;
  if (p) remove(p);
  return p;
}

std::string Process::exit_description() const {
  if (state_ != ProcessState::kDone) return "running";
  const std::string at = " at " + format_duration(exit_time_);
  switch (exit_) {
    case ExitKind::kKilled:
      return "killed" + at + (kill_cause_.empty() ? "" : " by " + kill_cause_);
    case ExitKind::kFailed:
      return "failed" + at;
    default:
      return "finished" + at;
  }
}

std::string Process::wait_description() const {
  if (state_ != ProcessState::kBlocked) return "";
  if (wq_ != nullptr) {
    // An empty role: the owner's description says it all ("scatter #5 on fsdp{0,1}").
    if (wq_->role()[0] == '\0') return wq_->owner()->describe();
    return std::string(wq_->role()) + " on " + wq_->owner()->describe();
  }
  return "sleep";
}

// ---- Simulation ----

Simulation::Simulation(SimulationOptions options)
    : options_(std::move(options)),
      policy_(options_.policy, options_.seed, options_.record_choices),
      pick_due_(policy_.decides(ChoiceKind::kSchedule) || policy_.recording()),
      log_events_(options_.log_events),
      decide_draws_(policy_.decides(ChoiceKind::kDraw) || policy_.recording()),
      sticky_(options_.policy.sticky),
      trace_(options_.trace),
      pool_(&StackPool::for_this_thread()) {}

Simulation::~Simulation() {
  shutdown();
  if (dispatch_stack_.sp != nullptr) StackPool::for_this_thread().deallocate(dispatch_stack_);
}

void Simulation::shutdown() {
  assert(current_ == nullptr && "shutdown() and ~Simulation() must not run inside a process");
  unwind_all();
}

Process* Simulation::new_process(std::string name, ProcessOptions options) {
  assert(&StackPool::for_this_thread() == pool_ &&
         "a Simulation is used only on the thread that created it");
  const auto id = static_cast<ProcessId>(processes_.size());
  processes_.push_back(
      std::unique_ptr<Process>(new Process(id, std::move(name), std::move(options))));
  Process* p = processes_.back().get();
  if (tearing_down_) p->killed_ = true;
  policy_.on_spawn(id);
  return p;
}

Process* Simulation::spawn_stackless(std::string name, std::unique_ptr<Resumable> body, ProcessOptions options) {
  assert(body != nullptr && "spawn_stackless REQUIRES a body");
  Process* p = new_process(std::move(name), std::move(options));
  p->stackless_ = true;
  p->body_ = std::move(body);
  on_created(p);
  return p;
}

void Simulation::on_created(Process* p) {
  assert((p->stackless_ ? p->body_ != nullptr : static_cast<bool>(p->fiber_)) && "spawn made no fiber");
  ++live_total_;
  if (!p->daemon()) {
    ++live_nondaemon_;
    ++nondaemon_spawned_;
  }
  push_event(now_, EventKind::kStart, p, 0);
  if (trace_.full()) trace_.timeline(now_, p->id(), 'i', "process", "spawn");
}

void Simulation::push_event(Time t, EventKind kind, Process* p, std::uint32_t arg) {
  if (t < now_) t = now_;
  if (p != nullptr) prefetch(p);  // its hot line, read when the event is dispatched
  const std::uint64_t seq = seq_++;
  // Each path stores the fields where the event goes. An event built on the stack and copied is
  // read back with 16-byte loads from fields just stored one by one, which the store buffer cannot
  // forward: each load waits for the stores to retire (perf put 8% of the cache race's time on
  // that one load in the held path).
  if (t == now_) {
    due_.emplace_back(t, seq, p, arg, kind);
    return;
  }
  // Callbacks are never batched (a batch entry's proc must be a process to prefetch); they
  // leave the open batch open, and pop_due's sort puts them in place among equal times.
  if (kind != EventKind::kCallback) {
    if (t == last_push_time_) {
      if (open_batch_ == kNoBatch) start_batch(t, seq, p);
      batches_[open_batch_].emplace_back(t, seq, p, arg, kind);
      ++batched_events_;
      return;
    }
    last_push_time_ = t;
    open_batch_ = kNoBatch;
  }
  if (holding_) heap_.push(held_);
  held_.time = t;
  held_.seq = seq;
  held_.proc = p;
  held_.arg = arg;
  held_.kind = kind;
  holding_ = true;
}

void Simulation::start_batch(Time t, std::uint64_t seq, Process* p) {
  // The second push of this time: a batch behind one heap entry.
  if (free_batches_.empty()) {
    free_batches_.push_back(static_cast<std::uint32_t>(batches_.size()));
    batches_.emplace_back();
  }
  open_batch_ = free_batches_.back();
  free_batches_.pop_back();
  std::vector<Event>& b = batches_[open_batch_];
  if (holding_ && held_.time == t && held_.kind != EventKind::kCallback) {
    // The first push of this time, still held: it leads the batch, which so holds every event
    // of its time in order (the due set it becomes needs no sort).
    b.push_back(held_);
    ++batched_events_;
    holding_ = false;
  }
  const std::uint64_t first_seq = b.empty() ? seq : b.front().seq;
  Process* const first_proc = b.empty() ? p : b.front().proc;
  heap_.push(Event{t, first_seq, first_proc, open_batch_, EventKind::kBatch});
  ++batches_in_heap_;
}

void Simulation::drop_stale_timers() {
  // Once a timer is stale it stays so (tokens only grow).
  const auto stale = [this](const Event& e) {
    if (e.kind != EventKind::kTimer || timer_is_live(e)) return false;
    stale_latest_ = std::max(stale_latest_, e.time);
    return true;
  };
  heap_.retain([&](Event& e) {
    if (e.kind != EventKind::kBatch) return !stale(e);
    std::vector<Event>& b = batches_[e.arg];
    const std::size_t before = b.size();
    b.erase(std::remove_if(b.begin(), b.end(), stale), b.end());
    batched_events_ -= before - b.size();
    if (b.empty()) {
      --batches_in_heap_;
      free_batches_.push_back(e.arg);
      if (open_batch_ == e.arg) open_batch_ = kNoBatch;
      return false;
    }
    e.seq = b.front().seq;  // the entry stands for its first event
    e.proc = b.front().proc;
    return true;
  });
  if (holding_ && stale(held_)) holding_ = false;
  stale_timers_ = 0;
}

const Simulation::Event* Simulation::pop_due() {
  std::size_t n = due_.size() - due_head_;
  if (n == 0) {
    assert(due_.empty() && due_head_ == 0);  // restarted when its last event was taken
    if (heap_.empty() && !holding_) {
      // Dropped stale timers past the time limit would have ended the run there.
      if (stale_latest_ > limits_.time_limit) end_at_time_limit();
      return nullptr;
    }
    const bool held_first = held_is_next();
    const Time t = held_first ? held_.time : heap_.top().time;
    if (t > limits_.time_limit) {
      end_at_time_limit();
      return nullptr;
    }
    if (pacer_ != nullptr && t > now_ && !pacer_->wait_until(t)) [[unlikely]] {
      end_run(RunOutcome::kStopped, pacer_->stop_reason());
      return nullptr;
    }
    now_ = t;
    if (held_first) {
      holding_ = false;
      return &held_;  // earlier than everything in the heap: alone at its time
    }
    if (holding_) {
      heap_.replace_top_into(held_, taken_);
    } else {
      heap_.pop_into(taken_);
    }
    holding_ = false;
    if (taken_.kind != EventKind::kBatch && (heap_.empty() || heap_.top().time != t)) {
      return &taken_;  // alone at its time (the common case): no due set to fill and empty
    }
    Event e = taken_;
    for (;;) {
      if (e.kind == EventKind::kBatch) {
        std::vector<Event>& b = batches_[e.arg];
        due_.insert(due_.end(), b.begin(), b.end());
        batched_events_ -= b.size();
        --batches_in_heap_;
        b.clear();
        free_batches_.push_back(e.arg);
        if (open_batch_ == e.arg) open_batch_ = kNoBatch;
      } else {
        due_.push_back(e);
      }
      if (heap_.empty() || heap_.top().time != t) break;
      e = heap_.pop();
    }
    n = due_.size();
    // The heap leaves equal times in no particular order; ties run in insertion order. A batch
    // is in order already, so a due set that is one batch (and its first event) needs no sort.
    const auto by_seq = [](const Event& a, const Event& b) { return a.seq < b.seq; };
    if (n > 1 && !std::is_sorted(due_.begin(), due_.end(), by_seq)) {
      std::sort(due_.begin(), due_.end(), by_seq);
    }
  }
  if (n == 1 || !pick_due_ || !policy_.decides(ChoiceKind::kSchedule)) {
    // fifo picks index 0; with recording on, the pick is still noted so a replay lines up.
    if (n > 1 && pick_due_) {
      const Event& e = due_[due_head_];
      policy_.pick(nullptr, n, {e.kind == EventKind::kCallback ? callbacks_[e.arg].owner : e.proc->id(), now_});
      if (log_events_) [[unlikely]] note_pick(0);
    }
    const Event* ev = &due_[due_head_++];
    release_due_if_empty();  // (clear() keeps the memory: ev stays valid)
    return ev;
  }
  owners_scratch_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = due_[due_head_ + i];
    owners_scratch_[i] = e.kind == EventKind::kCallback ? callbacks_[e.arg].owner : e.proc->id();
  }
  if (sticky_) last_owner_first(n);
  const std::size_t i = policy_.pick(owners_scratch_.data(), n, site());
  if (log_events_) [[unlikely]] note_pick(n);
  if (i == 0) {
    // As the path above takes it (the rest keep their order), so a tape recorded where the policy
    // did not decide (fifo, a kind swarm left out) replays to the same due sets.
    const Event* ev = &due_[due_head_++];
    release_due_if_empty();
    return ev;
  }
  taken_ = due_[due_head_ + i];
  // Remove by moving the last due event into the hole: O(1), deterministic.
  due_[due_head_ + i] = due_.back();
  due_.pop_back();
  release_due_if_empty();
  return &taken_;
}

// Out of line and cold: only searches that reduce (src/search/reduction.h) log their picks, and
// keeping pop_due small keeps the kernel's hot paths inlined as they were.
void Simulation::note_pick(std::size_t n) {
  if (!policy_.recording()) return;
  pick_ = static_cast<std::int32_t>(policy_.recorded().size()) - 1;
  if (n > 0) choice_owners_.add(static_cast<std::size_t>(pick_), owners_scratch_.data(), n);
}

void Simulation::note_site(const void* site) {
  if (!event_log_.empty()) entered_.push_back({static_cast<std::uint32_t>(event_log_.size() - 1), site});
}

void Simulation::end_run(RunOutcome outcome, std::string message) {
  if (ending_) return;
  ending_ = true;
  result_.outcome = outcome;
  result_.message = std::move(message);
}

void Simulation::fail(std::string message) {
  if (tearing_down_) return;
  end_run(RunOutcome::kError, std::move(message));
}

void Simulation::work_limit_reached() {
  end_run(RunOutcome::kEventLimit, std::to_string(events_) + " events and " + std::to_string(work_) +
                                       " units of work without events reached the event limit");
  // The run is ending: a fiber sleeps here and is unwound at teardown; a stackless body arms
  // that sleep itself (spend).
  if (current_ != nullptr && current_->stackless_) return;
  sleep_for(kTimeMax);
}

void Simulation::stop(std::string reason) { end_run(RunOutcome::kStopped, std::move(reason)); }

Process* Simulation::advance() {
  current_ = nullptr;
  // Bounded by the event limit, or by the finite number of pending events plus those that
  // callbacks add (a callback that reschedules itself forever is caught by the limits).
  for (;;) {
    if (ending_) return nullptr;
    // Daemons do not keep the run alive: once every non-daemon process has finished, the run
    // is complete (a simulation with no processes at all runs its callbacks to the end).
    if (live_nondaemon_ == 0 && nondaemon_spawned_ > 0 && !tearing_down_) {
      end_run(RunOutcome::kCompleted);
      return nullptr;
    }
    if (events_ >= limits_.event_limit) {
      end_run(RunOutcome::kEventLimit);
      return nullptr;
    }
    pick_ = -1;
    const Event* next = pop_due();
    if (next == nullptr) {
      if (ending_) return nullptr;  // time limit
      // Stale events (the timers of waits that ended early, cancelled callbacks) move the clock
      // without doing anything; the run really ended at its last dispatch.
      now_ = last_dispatch_;
      if (live_nondaemon_ > 0 && !tearing_down_) {
        result_.deadlock = diagnose();
        end_run(RunOutcome::kDeadlock);
      } else {
        end_run(RunOutcome::kCompleted);
      }
      return nullptr;
    }
    // Its fields, each read on its own: push_event stored them so, often a few dozen
    // instructions ago, and a copy of the whole event would read them back in 16-byte loads,
    // which the store buffer cannot forward (each would wait for the stores to retire).
    const EventKind kind = next->kind;
    const std::uint32_t arg = next->arg;
    if (kind == EventKind::kCallback) {
      run_callback(arg);
      continue;
    }
    Process* p = next->proc;
    switch (kind) {
      case EventKind::kStart:
        if (p->state_ != ProcessState::kRunnable) continue;
        break;
      case EventKind::kResume:
        if (p->state_ != ProcessState::kWaking || p->token_ != arg) continue;
        break;
      case EventKind::kTimer:
        if (!timer_is_live(p, arg)) continue;
        if (p->wq_) p->wq_->remove(p);
        p->status_ = WaitStatus::kTimeout;
        break;
      case EventKind::kCallback:
      case EventKind::kBatch:  // pop_due unpacks batches
        break;
    }
    ++events_;
    last_dispatch_ = now_;
    trace_.mix_dispatch(now_, p->id(), static_cast<std::uint8_t>(kind));
    if (log_events_) [[unlikely]] stamp(p, static_cast<std::uint8_t>(kind));
    policy_.on_step(p->id());
    p->state_ = ProcessState::kRunning;
    current_ = p;
    last_owner_ = p->id();
    // With few processes their records and stack tops stay in the caches: fetching them ahead
    // is work for nothing (7% of the cache race's instructions at 8 ranks).
    if (live_total_ > kPrefetchFromProcesses) prefetch_next();
    if (p->stackless_) [[unlikely]] {
      // Run here, as a callback runs, and go on dispatching: nothing to switch to.
      run_stackless(p, kind == EventKind::kStart);
      current_ = nullptr;
      continue;
    }
    return p;
  }
}

const char* event_kind_name(std::uint8_t kind) {
  static constexpr const char* kNames[] = {"start", "resume", "timer", "callback", "batch"};
  return kind < std::size(kNames) ? kNames[kind] : "?";
}

void Simulation::last_owner_first(std::size_t n) {
  if (owners_scratch_[0] == last_owner_) return;
  // The last process's event first (PolicySpec::sticky), the rest in their order.
  for (std::size_t j = 1; j < n; ++j) {
    if (owners_scratch_[j] == last_owner_) {
      std::rotate(due_.begin() + static_cast<std::ptrdiff_t>(due_head_),
                  due_.begin() + static_cast<std::ptrdiff_t>(due_head_ + j),
                  due_.begin() + static_cast<std::ptrdiff_t>(due_head_ + j + 1));
      std::rotate(owners_scratch_.begin(), owners_scratch_.begin() + static_cast<std::ptrdiff_t>(j),
                  owners_scratch_.begin() + static_cast<std::ptrdiff_t>(j + 1));
      return;
    }
  }
}

Process* Simulation::choose_waiter_slow(const WaitQueue& queue) {
  assert(queue.size() >= 2);
  owners_scratch_.clear();
  queue.for_each([this](const Process& p) { owners_scratch_.push_back(p.id()); });
  assert(owners_scratch_.size() == queue.size());
  std::uint64_t i = policy_.decide(ChoiceKind::kWake, owners_scratch_.data(), owners_scratch_.size(), site());
  Process* chosen = queue.front();
  while (i-- > 0) chosen = chosen->wq_next_;
  assert(chosen != nullptr);
  return chosen;
}

// Out of line, to keep advance()'s frame small: the callback dispatch (a std::function and its
// exception handlers) would double it, and where dispatch runs on the blocking process's own
// stack (without call_on_stack.h) every byte of that frame is a cold line when the process
// resumes thousands of events later.
void Simulation::run_callback(std::uint32_t slot) {
  Callback& cb = callbacks_[slot];
  const bool live = cb.live;
  std::function<void()> fn = std::move(cb.fn);
  const OwnerId owner = cb.owner;
  cb.fn = nullptr;
  cb.live = false;
  ++cb.generation;
  free_callbacks_.push_back(slot);
  if (!live || tearing_down_) return;
  ++events_;
  last_dispatch_ = now_;
  trace_.mix_dispatch(now_, -1, static_cast<std::uint8_t>(EventKind::kCallback));
  if (log_events_) [[unlikely]] stamp(nullptr, static_cast<std::uint8_t>(EventKind::kCallback), owner);
  policy_.on_step(owner);
  try {
    fn();
  } catch (const ProcessKilled&) {
    fail("a callback threw ProcessKilled (callbacks must not block)");
  } catch (const std::exception& e) {
    fail(std::string("callback failed: ") + e.what());
  } catch (...) {
    fail("callback failed with a non-standard exception");
  }
}

void Simulation::prefetch_next() const {
  // With thousands of processes, resuming one whose stack top and records are cold costs more
  // than the rest of the dispatch. The next event is usually known now; fetch what resuming its
  // process touches (its frames below where it blocked, and its fiber record) while the current
  // process runs its step. Reading where those frames are needs the next process's record, so
  // that record is fetched one step earlier still: the event after next is the next due event
  // or one of the heap root's four children.
  const Event* next = nullptr;
  if (due_head_ + 1 < due_.size()) {
    // A due set (a barrier's release) is known further ahead: fetch one step earlier, the frames
    // of the event after next (its record came a step ago) and the record of the one after that.
    // The next process's frames were fetched a step ago (or by wake_all, for a set's first two).
    if (const Process* q = due_[due_head_ + 1].proc) prefetch_resume(q);
    if (due_head_ + 2 < due_.size() && due_[due_head_ + 2].proc) prefetch(due_[due_head_ + 2].proc);
    return;
  }
  if (due_head_ < due_.size()) {
    next = &due_[due_head_];
  } else if (held_is_next()) {
    next = &held_;
  } else if (!heap_.empty()) {
    // The root has the earliest time, but among events of that time the earliest seq runs
    // first; such ties are most often among the root's children.
    next = &heap_.top();
    const std::size_t end = heap_.size() < 5 ? heap_.size() : 5;
    for (std::size_t c = 1; c < end; ++c) {
      const Event& e = heap_[c];
      if (e.proc) prefetch(e.proc);
      if (e.time == next->time && e.seq < next->seq) next = &e;
    }
  }
  if (next == nullptr || next->kind == EventKind::kCallback) return;
  prefetch_resume(next->proc);
}

void Simulation::prefetch_resume(const Process* q) {
  // The window is what a resume and the next block use of the process's stack, measured from
  // wait_on's frame f: the body's frame ends about 64 bytes above f, and the context a switch
  // saves sits 96 to 128 bytes below it (measured on every kernel workload and shipped
  // scenario). Dispatch itself runs on the dispatch stack (call_on_stack.h). In builds without the
  // trampoline the frames of advance() and pop_due() reach 450 to 550 bytes below f and the
  // window follows; where a build has it but dispatch ran on a blocked stack anyway (a refused
  // dispatch stack), the window only misses those frames: a hint, not a correctness matter.
  // Earlier measurements (bench/README.md): narrowing [f-1024, f+256) to [f-512, f+128) gave +8
  // to 10% on BM_Ring/10000 and +22% on BM_Barrier/10000; without the prefetch at all,
  // BM_Timers/10000 ran 40% and BM_Ring/10000 38% slower.
  constexpr int kBelow = kCallOnStackSwitches ? 192 : 512;
  if (const char* f = q->resume_frame_) {
    for (int off = -kBelow; off < 128; off += 64) prefetch(f + off);
  }
}

void Simulation::switch_to(boost::context::fiber& self, Process* next) {
  void* fake_stack = nullptr;
  asan::start_switch(&fake_stack, stack_of(next));
  resumer_slot_ = &self;
  boost::context::fiber resumer = std::move(next != nullptr ? next->fiber_ : main_fiber_).resume();
  // Resumed: `resumer` is the context that switched here (empty if it ended), suspended now.
  resumer_slot_->swap(resumer);
  asan::finish_switch(fake_stack);
}

Process* Simulation::advance_on_dispatch_stack() {
  if (!kCallOnStackSwitches || dispatch_stack_.sp == nullptr) return advance();
  return static_cast<Process*>(call_on_stack(
      this, [](void* sim) -> void* { return static_cast<Simulation*>(sim)->advance(); },
      dispatch_stack_.sp));
}

void Simulation::suspend_current(Process* self) {
  // With few processes their stacks stay in the caches, and the trampoline would be work for
  // nothing (as prefetch_next() is below the same count).
  Process* next = live_total_ > kPrefetchFromProcesses ? advance_on_dispatch_stack() : advance();
  if (next == self) return;
  switch_to(self->fiber_, next);
}

// Out of line for the same reason as run_callback: wait_on's frame sits on every blocked stack.
void Simulation::trace_wait_begin(const Process* self, const WaitQueue* queue, const char* role, Time deadline) {
  std::string args = "{";
  if (queue) args += "\"on\":\"" + json_escape(queue->owner()->describe()) + "\"";
  if (!queue || deadline != kTimeMax) {
    if (queue) args += ",";
    args += "\"until\":\"" + (deadline == kTimeMax ? std::string("beyond any limit") : format_duration(deadline)) + "\"";
  }
  trace_.timeline(now_, self->id(), 'B', "wait", role, args + "}");
}

inline bool Simulation::begin_wait(Process* self, WaitQueue* queue, Time deadline, void* slot) {
  assert(self != nullptr && "a wait REQUIRES a simulated process");
  assert(self->state_ == ProcessState::kRunning);
  if (self->killed_) killed(self);
  ++self->token_;
  self->state_ = ProcessState::kBlocked;
  self->status_ = WaitStatus::kOk;
  self->wait_slot_ = slot;
  if (queue) queue->push_back(self);
  // On a queue, kTimeMax is no timeout; a sleep's kTimeMax is a time beyond any limit (a
  // saturated sum or product of durations), which ends the run as a timeout at its limit.
  const bool timed = deadline != kTimeMax || queue == nullptr;
  self->timed_ = timed;
  if (timed) push_event(deadline, EventKind::kTimer, self, self->token_);
  if (trace_.full()) [[unlikely]] {
    // The role is a static string, read now: once resumed, the queue's owner may be gone (a
    // primitive destroyed before the simulation unwinds its waiters).
    self->wait_role_ = queue ? queue->role() : "sleep";
    trace_wait_begin(self, queue, self->wait_role_, deadline);
  }
  return timed;
}

inline void Simulation::end_wait(Process* self, bool timed) {
  // Resumed: advance() set state and current_. The queue must not be touched from here on.
  assert(current_ == self);
  self->wait_slot_ = nullptr;
  if (timed && self->status_ != WaitStatus::kTimeout) note_stale_timer();
  if (trace_.full()) [[unlikely]] trace_.timeline(now_, self->id(), 'E', "wait", self->wait_role_);
}

void Simulation::arm_wait(WaitQueue* queue, Time deadline, void* slot) {
  assert(current_ != nullptr && current_->stackless_ && "arm_wait: REQUIRES a stackless process");
  begin_wait(current_, queue, deadline, slot);
}

void Simulation::body_threw(const Process* p) {
  try {
    throw;
  } catch (const std::exception& e) {
    fail("process '" + p->name() + "' failed: " + e.what());
  } catch (...) {
    fail("process '" + p->name() + "' failed with a non-standard exception");
  }
}

void Simulation::run_stackless(Process* p, bool start) {
  ExitKind exit = ExitKind::kReturned;
  if (start && p->killed_) {
    exit = ExitKind::kKilled;  // killed before it started: the body never runs (as a fiber's)
  } else {
    if (!start) end_wait(p, p->timed_);
    const WaitStatus status = p->killed_ ? WaitStatus::kKilled : start ? WaitStatus::kOk : p->status_;
    try {
      if (p->body_->resume(status)) {
        assert(p->state_ == ProcessState::kBlocked && !p->killed_ &&
               "a stackless body that returns true has armed a wait, and is not killed");
        return;
      }
      if (p->killed_) exit = ExitKind::kKilled;
    } catch (const ProcessKilled&) {
      exit = ExitKind::kKilled;
    } catch (...) {
      exit = ExitKind::kFailed;
      body_threw(p);
    }
  }
  if (p->state_ == ProcessState::kBlocked) {
    // It threw after arming a wait: the wait is withdrawn (its timer, if any, is now stale).
    assert(exit != ExitKind::kReturned && "a stackless body that returns false has ended, no wait armed");
    if (p->wq_) p->wq_->remove(p);
    if (p->timed_) note_stale_timer();
    ++p->token_;
    p->state_ = ProcessState::kRunning;
  }
  p->body_.reset();  // its state goes with it; the record stays for diagnoses
  finish_process(p, exit);
}

WaitStatus Simulation::wait_on(WaitQueue* queue, Time deadline, void* slot) {
  Process* self = current_;
  assert(self != nullptr && !self->stackless_ && "wait_on: REQUIRES a process on a fiber (stackless: arm_wait)");
  const bool timed = begin_wait(self, queue, deadline, slot);
  self->resume_frame_ = static_cast<const char*>(__builtin_frame_address(0));
  suspend_current(self);
  end_wait(self, timed);
  if (self->killed_) {
    if (self->returns_at_teardown_ && tearing_down_) return WaitStatus::kKilled;  // sleep_until_or_teardown
    killed(self);
  }
  return self->status_;
}

void Simulation::wake(Process* p, WaitStatus status) {
  assert(p->state_ == ProcessState::kBlocked);
  if (p->wq_) p->wq_->remove(p);
  p->state_ = ProcessState::kWaking;
  p->status_ = status;
  push_event(now_, EventKind::kResume, p, p->token_);
  // A woken process that is among the next two due events runs soon: start fetching its
  // frames. (Not for bursts, e.g. a barrier release waking thousands: that would only evict.)
  if (due_.size() - due_head_ <= 2) prefetch_resume(p);
}

void Simulation::wake_all(WaitQueue& queue, WaitStatus status) {
  if (queue.size_ <= 2) {
    // Few waiters: wake() also fetches the frames of a process about to run.
    while (Process* p = queue.head_) wake(p, status);
    return;
  }
  // One pass over the list, pushing the events wake() would push, in the same order, without
  // unlinking each waiter from its neighbours first.
  if (due_.capacity() < due_.size() + queue.size_) {
    due_.reserve(std::max(2 * due_.capacity(), due_.size() + queue.size_));
  }
  Process* next = queue.head_;
  while (Process* p = next) {
    next = p->wq_next_;
    if (next != nullptr) prefetch(next);
    assert(p->state_ == ProcessState::kBlocked && p->wq_ == &queue);
    p->wq_ = nullptr;
    p->wq_prev_ = p->wq_next_ = nullptr;
    p->state_ = ProcessState::kWaking;
    p->status_ = status;
    due_.emplace_back(now_, seq_++, p, p->token_, EventKind::kResume);
    if (due_.size() - due_head_ <= 2) prefetch_resume(p);  // runs next, as in wake()
  }
  queue.head_ = queue.tail_ = nullptr;
  queue.size_ = 0;
}

void Simulation::sleep_until(Time t) {
  // A timer wait with no queue; the timeout status is the normal outcome.
  wait_on(nullptr, std::max(t, now_));
}

bool Simulation::sleep_until_or_teardown(Time t) {
  Process* self = current_;
  assert(self != nullptr && "sleep_until_or_teardown: REQUIRES a simulated process");
  self->returns_at_teardown_ = true;
  const WaitStatus st = wait_on(nullptr, std::max(t, now_));
  self->returns_at_teardown_ = false;
  return st != WaitStatus::kKilled;
}

JoinStatus Simulation::join(Process* p, Time timeout) {
  assert(current_ != nullptr && "join: REQUIRES a simulated process");
  assert(p != current_ && "a process cannot join itself");
  if (!p->finished()) {
    if (wait_on(&p->joiners_, deadline_after(timeout)) == WaitStatus::kTimeout) {
      return JoinStatus::kTimeout;
    }
  }
  switch (p->exit_) {
    case ExitKind::kKilled:
      return JoinStatus::kKilled;
    case ExitKind::kFailed:
      return JoinStatus::kFailed;
    default:
      return JoinStatus::kReturned;
  }
}

void Simulation::kill(Process* p, std::string cause) {
  if (p->finished() || p->killed_) return;
  p->killed_ = true;
  p->kill_cause_ = std::move(cause);
  if (trace_.on()) trace_record('i', "process", "kill " + p->name());
  if (p == current_) throw ProcessKilled{};
  if (p->state_ == ProcessState::kBlocked) wake(p, WaitStatus::kKilled);
  // kRunnable: the body never starts. kWaking: wait_on throws when it resumes.
}

inline void Simulation::killed(Process* self) {
  // At teardown the unwind ends in fiber_main, always: no search for a handler (forced_unwind.h).
  if (tearing_down_ && self->unwind_target_ != nullptr) unwind::unwind_to(*self->unwind_target_);
  throw ProcessKilled{};
}

boost::context::fiber Simulation::fiber_main(Process* p, boost::context::fiber&& from,
                                             void (*invoke)(void*, const void**), void* fn) noexcept {
  resumer_slot_->swap(from);  // as in switch_to: save the context that started this one
  asan::finish_switch(nullptr);  // first entry on this stack
  ExitKind exit = ExitKind::kReturned;
  unwind::Target target;
  if (p->killed_) {
    exit = ExitKind::kKilled;
  } else if (__builtin_setjmp(target.jump) != 0) {
    exit = ExitKind::kKilled;  // unwound at teardown by unwind_to
  } else {
    p->unwind_target_ = &target;
    try {
      invoke(fn, &target.return_ip);
      if (p->killed_) exit = ExitKind::kKilled;  // returned from sleep_until_or_teardown
    } catch (const ProcessKilled&) {
      exit = ExitKind::kKilled;
    } catch (...) {
      exit = ExitKind::kFailed;
      body_threw(p);
    }
  }
  p->unwind_target_ = nullptr;
  finish_process(p, exit);
  Process* next = advance();
  asan::start_switch(nullptr, stack_of(next));  // this stack is done for good
  // Nothing resumes this context again: what the next one is handed in its place is empty (Boost
  // releases this stack on the next context's stack before it runs on).
  resumer_slot_ = &p->fiber_;
  return std::move(next != nullptr ? next->fiber_ : main_fiber_);
}

void Simulation::finish_process(Process* p, ExitKind exit) {
  p->state_ = ProcessState::kDone;
  p->exit_ = exit;
  p->exit_time_ = now_;
  --live_total_;
  if (!p->daemon()) --live_nondaemon_;
  if (trace_.full()) {
    const char* how = exit == ExitKind::kReturned ? "exit" : exit == ExitKind::kKilled ? "killed" : "failed";
    trace_.timeline(now_, p->id(), 'i', "process", how);
  }
  wake_all(p->joiners_);
}

EventHandle Simulation::schedule_at(Time t, std::function<void()> fn) {
  std::uint32_t slot;
  if (!free_callbacks_.empty()) {
    slot = free_callbacks_.back();
    free_callbacks_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(callbacks_.size());
    callbacks_.emplace_back();
  }
  Callback& cb = callbacks_[slot];
  cb.fn = std::move(fn);
  cb.owner = current_ ? current_->id() : -1;
  cb.live = true;
  push_event(t, EventKind::kCallback, nullptr, slot);
  return {slot, cb.generation};
}

bool Simulation::cancel(EventHandle h) {
  if (h.slot >= callbacks_.size()) return false;
  Callback& cb = callbacks_[h.slot];
  if (cb.generation != h.generation || !cb.live) return false;
  cb.live = false;
  cb.fn = nullptr;
  return true;
}

void Simulation::drive(RunLimits limits) {
  if (kCallOnStackSwitches && dispatch_stack_.sp == nullptr && !tearing_down_) {
    // Mapped here, not at the first block: a blocking call must not fail half-way. If the
    // system refuses the memory, dispatch stays on the blocking processes' stacks (slower, the
    // same events).
    try {
      dispatch_stack_ = StackPool::for_this_thread().allocate(options_.stack_bytes);
    } catch (const std::bad_alloc&) {  // StackMapError, or the pool's own bookkeeping
    }
  }
  limits_ = limits;
  running_ = true;
  ending_ = false;
  main_stack_ = asan::thread_stack();
  Process* next = advance();
  if (next != nullptr) switch_to(main_fiber_, next);
  running_ = false;
  current_ = nullptr;
}

RunResult Simulation::run(RunLimits limits) {
  assert(current_ == nullptr && !running_ && "run() is not reentrant");
  assert(&StackPool::for_this_thread() == pool_);
  result_ = RunResult{};
  drive(limits);
  result_.end_time = now_;
  result_.events = events_;
  result_.trace_hash = trace_.hash();
  return result_;
}

void Simulation::unwind_all() {
  if (live_total_ == 0) return;
  tearing_down_ = true;
  for (const auto& up : processes_) {
    Process* p = up.get();
    if (p->finished()) continue;
    p->killed_ = true;
    if (p->state_ == ProcessState::kBlocked) wake(p, WaitStatus::kKilled);
  }
  drive(RunLimits{});
  assert(live_total_ == 0 && "a killed process kept running after ProcessKilled");
}

DeadlockReport Simulation::diagnose() const {
  DeadlockReport report;
  std::vector<std::int32_t> index(processes_.size(), -1);
  for (const auto& up : processes_) {
    const Process& p = *up;
    if (p.state_ != ProcessState::kBlocked) continue;
    index[p.id()] = static_cast<std::int32_t>(report.blocked.size());
    BlockedProcess b;
    b.pid = p.id();
    b.name = p.name();
    b.daemon = p.daemon();
    b.waits_for = p.wait_description();
    if (p.wq_ != nullptr) {
      std::vector<const Process*> rel;
      p.wq_->owner()->releasers(*p.wq_, p, rel);
      for (const Process* r : rel) {
        BlockedProcess::Releaser x{r->id(), r->name(), ""};
        switch (r->state_) {
          case ProcessState::kBlocked:
            x.state = "blocked in " + r->wait_description();
            break;
          case ProcessState::kDone:
            x.state = r->exit_description();
            break;
          default:
            x.state = "runnable";
        }
        b.releasers.push_back(std::move(x));
      }
    }
    report.blocked.push_back(std::move(b));
  }
  // Wait-for graph over blocked processes only.
  std::vector<std::vector<std::int32_t>> adj(report.blocked.size());
  for (std::size_t i = 0; i < report.blocked.size(); ++i) {
    for (const auto& r : report.blocked[i].releasers) {
      const std::int32_t j = index[r.pid];
      if (j >= 0) adj[i].push_back(j);
    }
  }
  for (auto& cycle : find_cycles(adj)) {
    for (auto& v : cycle) v = report.blocked[v].pid;
    report.cycles.push_back(std::move(cycle));
  }
  return report;
}

void Simulation::write_chrome_trace(std::ostream& out) const {
  std::vector<TraceLane> lanes;
  lanes.reserve(processes_.size());
  for (const auto& up : processes_) {
    const ProcessOptions& o = up->options();
    lanes.push_back({up->id(), o.group.empty() ? "sim" : o.group,
                     o.lane.empty() ? up->name() : o.lane});
  }
  kernel::write_chrome_trace(out, trace_.records(), lanes, now_);
}

}  // namespace racesim::kernel
