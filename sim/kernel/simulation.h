// Simulation: virtual time, the event queue, processes on fibers, and the run loop.
//
// Contract:
//   - Events are ordered by virtual time; events due at the same time form the due set, from
//     which the schedule policy picks (fifo: insertion order). Every dispatched event is folded
//     into the trace hash, so the same options, program and seed give the same hash.
//   - Processes are fibers run one at a time on the thread that owns the simulation. Blocking
//     calls suspend the fiber and record what it waits for. A stackless process (a Resumable
//     body, process.h) arms its wait and returns instead; the kernel calls it again when the
//     wait ends, with the same events as a fiber's.
//   - run() ends when every non-daemon process has finished (kCompleted; daemons stay suspended
//     and pending callbacks are not run; a simulation that never had a non-daemon process runs
//     until its event queue is empty), when no event is
//     pending but a non-daemon process is still blocked (kDeadlock, with a report), on a limit
//     (kTimeLimit, kEventLimit), on stop() (kStopped), or when a process or callback throws
//     (kError). A limit or stop leaves the state intact: run() may be called again to continue.
//   - The destructor unwinds every unfinished process from its blocking point to its entry frame
//     (a forced unwind, sim/kernel/forced_unwind.h: destructors and rethrowing catch (...) blocks
//     run, typed handlers of ProcessKilled do not), so RAII in process code runs and every stack
//     is returned.
//
// Threading: a Simulation is created, run and destroyed on one OS thread and never starts
// threads. Simulations on different threads share nothing. Several may exist on one thread, but
// only one runs at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/context/fiber.hpp>

#include "sim/kernel/asan.h"
#include "sim/kernel/deadlock.h"
#include "sim/kernel/event_heap.h"
#include "sim/kernel/pacer.h"
#include "sim/kernel/event_log.h"
#include "sim/kernel/policy.h"
#include "sim/kernel/process.h"
#include "sim/kernel/random.h"
#include "sim/kernel/stack_pool.h"
#include "sim/kernel/time.h"
#include "sim/kernel/trace.h"

namespace racesim::kernel {

struct SimulationOptions {
  std::uint64_t seed = 0;
  PolicySpec policy = PolicySpec::fifo();
  TraceLevel trace = TraceLevel::kHash;
  std::size_t stack_bytes = kDefaultStackBytes;
  // Record every choice on the tape (tape.h) so the run can be replayed.
  bool record_choices = false;
  // Keep a stamp per dispatched event (event_log.h), to compare two runs event by event.
  bool log_events = false;
};

struct RunLimits {
  Time time_limit = kTimeMax;  // no event later than this runs
  std::uint64_t event_limit = UINT64_MAX;  // at most this many events are dispatched in total
};

enum class RunOutcome : std::uint8_t {
  kCompleted,
  kDeadlock,
  kTimeLimit,
  kEventLimit,
  kStopped,
  kError,
};
const char* to_string(RunOutcome outcome);

struct RunResult {
  RunOutcome outcome = RunOutcome::kCompleted;
  Time end_time = 0;
  std::uint64_t events = 0;  // dispatched so far in this simulation
  std::string message;       // kError: what failed; kStopped: the reason given
  DeadlockReport deadlock;   // kDeadlock only
  std::uint64_t trace_hash = 0;
};

// Returned by schedule_at/after; lets the caller cancel the callback.
struct EventHandle {
  std::uint32_t slot = UINT32_MAX;
  std::uint32_t generation = 0;
};

enum class JoinStatus : std::uint8_t { kReturned, kKilled, kFailed, kTimeout };

class Simulation {
 public:
  explicit Simulation(SimulationOptions options = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  Time now() const { return now_; }
  std::uint64_t seed() const { return options_.seed; }
  const SimulationOptions& options() const { return options_; }

  // Creates a process that starts at the current time (after events already due now). `fn`
  // is any callable taking no arguments. May be called before run(), from a process, or from
  // a callback.
  template <typename F>
  Process* spawn(std::string name, F&& fn, ProcessOptions options = {});

  // Creates a stackless process running `body` (process.h, Resumable), started as spawn starts
  // a fiber's. Its waits are armed with arm_wait, never with the blocking calls below. REQUIRES:
  // body is not null.
  Process* spawn_stackless(std::string name, std::unique_ptr<Resumable> body, ProcessOptions options = {});

  RunResult run(RunLimits limits = {});
  // Kills every unfinished process and unwinds it now (the destructor does the same). Call it
  // before destroying objects that process code refers to. REQUIRES: not inside a process.
  void shutdown();
  // True while shutdown() (or the destructor) unwinds the processes: what they wait on may
  // already be destroyed, so a primitive's clean-up on ProcessKilled must not touch it.
  bool tearing_down() const { return tearing_down_; }
  // Ties the clock to `pacer` (nullptr: none, the default): each time the clock is about to move
  // forward, pacer->wait_until(t) runs first. For live mode only; the pacer must outlive run().
  void set_pacer(Pacer* pacer) { pacer_ = pacer; }
  // Ends the run once the calling process blocks or ends (or at once from a callback).
  void stop(std::string reason = "stopped");

  // Callbacks run in the kernel, not in a process: they must not block.
  EventHandle schedule_at(Time t, std::function<void()> fn);
  EventHandle schedule_after(Time delay, std::function<void()> fn) {
    return schedule_at(add_time(now_, delay), std::move(fn));
  }
  // True if the callback had not run yet and now never will.
  bool cancel(EventHandle h);

  // ---- From inside a process (REQUIRES: called from a simulated process) ----
  Process* current() const { return current_; }
  // A sleep until kTimeMax (a duration beyond any limit, saturated) ends the run as a timeout at
  // its time limit, never as a deadlock.
  void sleep_for(Time d) { sleep_until(add_time(now_, d)); }
  void sleep_until(Time t);
  // sleep_until, except when the simulation tears down while the caller sleeps: then it returns
  // false instead of unwinding the caller's stack (a forced unwind costs some 2,000 instructions
  // a frame), and the caller must return at once, as must every frame above it, doing nothing
  // else; the process then ends as killed. A kill while the run goes on (a crash fault) unwinds
  // the stack as in sleep_until. True: slept until t.
  bool sleep_until_or_teardown(Time t);
  // Lets every other event due now run first (under fifo); under other policies, a choice point.
  void yield() { sleep_until(now_); }
  // Counts `units` of work the process does without creating events (an interpreter's loop
  // iterations) against the event limit, so that a loop that never blocks is bounded too: once
  // events plus work reach the limit, the run ends with kEventLimit and the caller blocks until
  // the run is torn down. An add and a compare while under the limit.
  // From a stackless process the limit ends the run and spend returns true: its body must then
  // arm a sleep until kTimeMax and return, as a fiber sleeps here.
  bool spend(std::uint64_t units) {
    work_ += units;
    if (events_ + work_ < limits_.event_limit) [[likely]] return false;
    work_limit_reached();
    return true;
  }
  // Waits for `p` to finish (up to `timeout`).
  JoinStatus join(Process* p, Time timeout = kTimeMax);
  // A crash fault: `p` stops at its current or next blocking point, its waits are withdrawn, its
  // stack unwinds, and its joiners are woken (JoinStatus::kKilled). Killing the calling process
  // throws ProcessKilled at once. Callable from processes and callbacks.
  // `cause` is how diagnoses name it ("crash fault 'c'"): a rank others wait for is reported
  // as "killed at 4s by crash fault 'c'".
  void kill(Process* p, std::string cause = "");

  // ---- Randomness and choice points ----
  // The stream named `name` of this run's seed (independent of every other name).
  RandomStream stream(std::string_view name) const { return RandomStream(options_.seed, name); }
  // A nondeterministic decision among n outcomes, through the schedule policy (a kModel choice:
  // recorded, replayable). REQUIRES: n >= 1.
  std::uint64_t choose(std::uint64_t n) { return policy_.choose(n, site()); }
  // Whether choose() could return anything but 0 or records its choice: a model that must do
  // work to list its options (sort them, count them) asks this first, and under fifo does none.
  bool choosing() const { return policy_.decides(ChoiceKind::kModel) || policy_.recording(); }
  // Which of the processes in `queue` a freed lock, semaphore, resource or channel is handed to
  // (a kWake choice; the first, longest waiting, unless the policy decides wake order). Does not
  // remove it. nullptr when the queue is empty.
  Process* choose_waiter(const WaitQueue& queue) {
    if (queue.size() < 2 || (!policy_.decides(ChoiceKind::kWake) && !policy_.recording())) return queue.front();
    return choose_waiter_slow(queue);
  }
  // Whether a fault that may or may not strike is armed, or fires at a site (faults.h): `drawn`,
  // what the fault's stream drew, unless the policy decides faults (a kFault choice: option 1
  // strikes if the draw did not, and does not if it did).
  bool decide_fault(bool drawn) {
    if (!policy_.decides(ChoiceKind::kFault) && !policy_.recording()) return drawn;
    return policy_.decide(ChoiceKind::kFault, nullptr, 2, site()) == 0 ? drawn : !drawn;
  }
  // A yes-or-no decision of a model whose odds the model drew from its own stream (`drawn`): a
  // kModel choice of two options, 0 what was drawn and 1 the other, when the policy decides or
  // records model choices; `drawn` otherwise (under fifo, the seed decides).
  bool decide_model(bool drawn) {
    if (!policy_.decides(ChoiceKind::kModel) && !policy_.recording()) return drawn;
    return policy_.decide(ChoiceKind::kModel, nullptr, 2, site()) == 0 ? drawn : !drawn;
  }
  // Which value a draw takes (kDraw, tape.h): 0 the seed's, 1 to 3 the distribution's low end,
  // median and high end; 0 unless the policy decides draws.
  std::uint64_t decide_draw() {
    if (!decide_draws_) return 0;
    return policy_.decide(ChoiceKind::kDraw, nullptr, kDrawOptions, site());
  }
  // Whether decide_draw() can be anything but 0 or records: a step asks before any other work.
  bool draws_decided() const { return decide_draws_; }
  // The tape so far (empty unless SimulationOptions::record_choices).
  const std::vector<Choice>& tape() const { return policy_.recorded(); }
  // Under a replay policy: whether the run left its tape, and where (policy.h).
  bool replay_diverged() const { return policy_.diverged(); }
  std::string replay_divergence() const { return policy_.divergence(); }
  const SchedulePolicy& policy() const { return policy_; }

  // ---- Event log (SimulationOptions::log_events) ----
  // What the current process is running, for the event log to name (an opaque pointer: the
  // harness passes the step, and reads it back as one). No effect outside a process.
  void set_site(const void* site) {
    if (current_ == nullptr) return;
    current_->site_ = site;
    if (log_events_) [[unlikely]] note_site(site);
  }
  const EventLog& event_log() const { return event_log_; }
  // The sites entered during each dispatch (SiteEntry), in order.
  const std::vector<SiteEntry>& entered_sites() const { return entered_; }
  // With the event log and the tape: for each schedule choice (by tape index) the owners of its
  // options in option order (PolicySpec::sticky's order when set); empty for other choices and
  // for schedule choices the policy did not decide.
  const ChoiceOwners& choice_owners() const { return choice_owners_; }

  // ---- Trace ----
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  // A record for a full trace only (not hashed: a run's hash does not depend on it), attributed
  // to the current process: slices naming what a step does, a failure's mark.
  void trace_timeline(char phase, std::string_view category, std::string_view name,
                      std::string_view args_json = {}) {
    if (trace_.full()) trace_.timeline(now_, current_ ? current_->id() : -1, phase, category, name, args_json);
  }
  // Emits a model record attributed to the current process (or none from a callback).
  void trace_record(char phase, std::string_view category, std::string_view name,
                    std::string_view args_json = {}, double value = 0) {
    if (trace_.on()) {
      trace_.record(now_, current_ ? current_->id() : -1, phase, category, name, args_json, value);
    }
  }
  // Arguments for the record just emitted (trace_record or trace_timeline), in a full trace
  // only and not hashed (Trace::annotate_last): `make_args()` gives a JSON object's text and is
  // called only when the trace is full, so the arguments cost nothing otherwise.
  template <typename F>
  void trace_annotate(F&& make_args) {
    if (trace_.full()) trace_.annotate_last(make_args());
  }
  void write_chrome_trace(std::ostream& out) const;

  // ---- Blocking protocol for primitives ----
  // Blocks the current process in `queue` (may be null) until wake(), the absolute `deadline`
  // (kTimeMax: none) or a kill. `slot` is primitive data reachable through Process::wait_slot().
  // Returns kOk/kClosed (as given to wake) or kTimeout; throws ProcessKilled when killed.
  WaitStatus wait_on(WaitQueue* queue, Time deadline, void* slot = nullptr);
  // Resumes blocked process `p` at the current time with `status`; unlinks it from its queue.
  // REQUIRES: p->state() == kBlocked.
  void wake(Process* p, WaitStatus status = WaitStatus::kOk);
  // Wakes every process in `queue`, longest waiter first, and leaves it empty: the same events
  // as wake() on each in turn, in one pass (O(1) per waiter, no heap operation). For releases
  // of every waiter at once: a barrier, an event, a latch, a collective's rendezvous.
  void wake_all(WaitQueue& queue, WaitStatus status = WaitStatus::kOk);
  Time deadline_after(Time timeout) const { return add_time(now_, timeout); }
  // The stackless form of wait_on (REQUIRES: called from a stackless process's Resumable::resume,
  // which then returns true): the same wait, armed; the body is resumed with its status. Throws
  // ProcessKilled, as wait_on does, when the process was killed.
  void arm_wait(WaitQueue* queue, Time deadline, void* slot = nullptr);
  // arm_wait for a sleep until `t` (sleep_until's stackless form).
  void arm_sleep_until(Time t) { arm_wait(nullptr, std::max(t, now_)); }

  // ---- Introspection ----
  const std::vector<std::unique_ptr<Process>>& processes() const { return processes_; }
  std::uint64_t events_dispatched() const { return events_; }
  std::size_t events_pending() const {
    return heap_.size() - batches_in_heap_ + batched_events_ + (holding_ ? 1 : 0) + (due_.size() - due_head_);
  }
  // Events the due set has room for (its memory): bounded by the most events due at once.
  std::size_t due_capacity() const { return due_.capacity(); }
  // Processes not finished, non-daemon only.
  std::size_t live_processes() const { return live_nondaemon_; }
  // A report of every blocked process (also usable outside a deadlock, e.g. at a time limit).
  DeadlockReport diagnose() const;

 private:
  // kBatch is a heap entry standing for a run of events of one time (see push_event): `arg`
  // is its index in batches_, `proc` the first event's process (what prefetch_next reads).
  enum class EventKind : std::uint8_t { kStart, kResume, kTimer, kCallback, kBatch };
  struct Event {
    Event() = default;
    // (A constructor, not an aggregate: emplace_back builds an event in place on clang 14 too.)
    Event(Time t, std::uint64_t s, Process* p, std::uint32_t a, EventKind k) : time(t), seq(s), proc(p), arg(a), kind(k) {}
    Time time;
    std::uint64_t seq;
    Process* proc;       // kStart/kResume/kTimer (kBatch: its first event's)
    std::uint32_t arg;   // wait token, callback slot, or batch index
    EventKind kind;
    // No padding left to the compiler: it copies an event's 29 bytes of fields as two 16-byte
    // moves 13 bytes apart, and a move at 13 cannot be forwarded from a store at 16.
    std::uint8_t unused[3] = {};
  };
  static_assert(sizeof(Event) == 32);
  struct Callback {
    std::function<void()> fn;
    OwnerId owner = -1;
    std::uint32_t generation = 0;
    bool live = false;
  };

  Process* new_process(std::string name, ProcessOptions options);
  // Counts a new process (fiber or stackless) as live and schedules its start.
  void on_created(Process* p);
  // The two halves of every wait, shared by wait_on (a fiber) and arm_wait (stackless): the
  // first records it (state, token, queue, timer, a full trace's opening record); the second
  // runs once the process is resumed (its stale timer, a full trace's closing record).
  // begin_wait returns whether the wait has a timer (also kept in the process, for a stackless
  // one: a fiber keeps it in a register across the switch), which end_wait is given.
  [[gnu::always_inline]] inline bool begin_wait(Process* self, WaitQueue* queue, Time deadline, void* slot);
  [[gnu::always_inline]] inline void end_wait(Process* self, bool timed);
  // Runs stackless process `p` (dispatched now: current_ is p) until it arms a wait or ends;
  // `start`: its start event, else the end of a wait.
  [[gnu::noinline]] void run_stackless(Process* p, bool start);
  // Called in a handler of the exception process `p`'s body threw (not ProcessKilled): fails the
  // run, naming the process and what the exception says.
  void body_threw(const Process* p);
  // A process's fiber: `from` is the context that started it. Runs the body through
  // invoke(fn, &return_ip), which must first store its own return address there (where a forced
  // unwind stops, forced_unwind.h), then finishes the process and returns the context to run
  // next; Boost.Context then releases this fiber's stack.
  boost::context::fiber fiber_main(Process* p, boost::context::fiber&& from,
                                   void (*invoke)(void*, const void**), void* fn) noexcept;
  // The process body's entry: records its return address, then runs the body from its own
  // frame. The body is moved there from Boost's fiber record at the top of the stack, which is
  // hundreds of bytes above where the process blocks: a loop in the body that reads its captures
  // after every resume would find them in a line no prefetch fetched (perf: 11 to 16% of
  // BM_BarrierSteady/1000 on that read); here they are next to the frames prefetch_resume
  // fetches.
  template <typename Body>
  [[gnu::noinline]] static void invoke_body(void* body, const void** return_ip) {
    *return_ip = __builtin_return_address(0);
    Body local(std::move(*static_cast<Body*>(body)));
    local();
  }
  // The running process `self` was killed: unwinds its stack (ProcessKilled; at teardown a
  // forced unwind to fiber_main). Never returns. Inlined into its callers in simulation.cc (one
  // frame fewer for the unwinder to walk, forced_unwind.h).
  [[noreturn, gnu::always_inline]] void killed(Process* self);
  void finish_process(Process* p, ExitKind exit);
  // Dispatches events until one resumes a process; returns it, or nullptr when the run ends
  // (result_ says why). Runs on whichever stack calls it: the dispatch stack when a process
  // blocks (advance_on_dispatch_stack), the main context's in drive(), the ending process's in
  // fiber_main.
  Process* advance();
  ChoiceSite site() const { return {current_ ? current_->id() : -1, now_}; }
  Process* choose_waiter_slow(const WaitQueue& queue);
  // Takes the next event to dispatch, or returns nullptr when none is left before the limits
  // (result_ says why if the run ends). The event lives in held_, taken_ or due_: it is valid
  // until the next push, and is read a field at a time (advance()).
  const Event* pop_due();
  // Once the last due event is taken, the due set starts again at the front, so events that
  // the step adds at the same instant (a barrier's release) do not pile up behind taken ones.
  void release_due_if_empty() {
    if (due_head_ == due_.size()) {
      due_.clear();
      due_head_ = 0;
    }
  }
  [[gnu::noinline]] void run_callback(std::uint32_t slot);
  // A wait's slice in a full trace: what it waits on, and until when (a sleep, or a timed wait).
  [[gnu::noinline]] void trace_wait_begin(const Process* self, const WaitQueue* queue, const char* role,
                                         Time deadline);
  void push_event(Time t, EventKind kind, Process* p, std::uint32_t arg);
  // A wait with a deadline ended before it: its timer is stale (see stale_timers_).
  void note_stale_timer() {
    if (++stale_timers_ >= kDropStaleFrom && 2 * stale_timers_ > events_pending()) drop_stale_timers();
  }
  [[gnu::noinline]] void drop_stale_timers();
  // Whether timer `e` still ends its process's wait (else it is stale: skipped when due).
  static bool timer_is_live(const Event& e) { return timer_is_live(e.proc, e.arg); }
  static bool timer_is_live(const Process* p, std::uint32_t token) {
    return p->state_ == ProcessState::kBlocked && p->token_ == token;
  }
  // Whether the held event runs before everything in the heap. REQUIRES: no due event.
  bool held_is_next() const { return holding_ && (heap_.empty() || held_.time < heap_.top().time); }
  // Ends the run at its time limit: the next event is past it.
  void end_at_time_limit() {
    if (now_ < limits_.time_limit) now_ = limits_.time_limit;
    end_run(RunOutcome::kTimeLimit);
  }
  // Opens a batch for time `t` (the second consecutive push of it, the event numbered `seq` of
  // process `p`) into open_batch_.
  void start_batch(Time t, std::uint64_t seq, Process* p);
  // Blocks the running process `self`: dispatches (on the dispatch stack above
  // kPrefetchFromProcesses live processes) until an event resumes a process, then switches to
  // it (or returns at once if that is `self`).
  void suspend_current(Process* self);
  // advance() on dispatch_stack_ (call_on_stack.h); on the caller's stack if there is none.
  Process* advance_on_dispatch_stack();
  // Switches from the calling context (a process, or the thread's main context), whose fiber is
  // saved in `self` once suspended, to `next` (nullptr: the main context); returns when the
  // caller is resumed. REQUIRES: next is not the caller.
  void switch_to(boost::context::fiber& self, Process* next);
  asan::StackBounds stack_of(const Process* p) const {
    return p ? asan::StackBounds{p->stack_lo_, p->stack_size_} : main_stack_;
  }
  void prefetch_next() const;
  // Dispatch prefetches the next event's process only above this many live processes.
  static constexpr std::size_t kPrefetchFromProcesses = 256;
  static void prefetch_resume(const Process* q);
  void fail(std::string message);
  void end_run(RunOutcome outcome, std::string message = {});
  [[gnu::noinline]] void work_limit_reached();
  void unwind_all();
  // Runs the event loop from the thread's main context until the run ends (run, unwind_all).
  void drive(RunLimits limits);

  SimulationOptions options_;
  Pacer* pacer_ = nullptr;
  SchedulePolicy policy_;
  // Fixed for the run, read on every dispatch: whether the policy decides the due set's order
  // (or records it), and whether each event is stamped (options_.log_events).
  bool pick_due_ = false;
  bool log_events_ = false;
  bool decide_draws_ = false;  // the policy decides draws, or records
  bool sticky_ = false;        // PolicySpec::sticky
  OwnerId last_owner_ = -1;    // the process dispatched last (read with sticky_)
  // With sticky_: moves the due event of last_owner_ (of the n due, owners in owners_scratch_)
  // to the front, the rest in their order. Out of line: pop_due stays small.
  [[gnu::noinline]] void last_owner_first(std::size_t n);
  Trace trace_;
  const StackPool* pool_;  // the creating thread's (a simulation runs on that thread only)
  Time now_ = 0;
  Time last_dispatch_ = 0;  // the time of the last event that did something
  std::uint64_t seq_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t work_ = 0;  // spend()
  EventHeap<Event> heap_;  // future events (by time; pop_due orders ties by seq)
  // Future events pushed one after another with one time (the members of a collective sleeping
  // its cost, the waiters a mass wake-up sends to the same deadline) share one batch, a single
  // heap entry, instead of a heap push and pop each: the second opens it (taking the first along
  // while that is still held, below), and it takes pushes until one of another time comes.
  // Batches are reused.
  static constexpr std::uint32_t kNoBatch = UINT32_MAX;
  std::vector<std::vector<Event>> batches_;
  std::vector<std::uint32_t> free_batches_;
  Time last_push_time_ = -1;          // the time of the latest future push (-1: none)
  std::uint32_t open_batch_ = kNoBatch;  // the batch that takes pushes of last_push_time_
  std::size_t batches_in_heap_ = 0, batched_events_ = 0;
  // The latest future event not batched, held out of the heap until the next pop (a process
  // that blocks pushes one timer, and the loop then pops the earliest): when it is the earliest
  // (a short sleep) it never enters the heap; otherwise it takes the top's place in one sift
  // down instead of a push and a pop. A second push first moves it into the heap.
  Event held_{};
  bool holding_ = false;
  Event taken_{};  // the event pop_due took from the heap (or, under a random policy, the due set)
  // Timers of waits that ended before their deadline (a collective's exec timeout, a lock's)
  // stay where they are and are skipped when due; with thousands of ranks each leaving one per
  // collective, they would outnumber the live events many times over (device guards at 4,096
  // ranks: 80 collectives' worth, 330,000 entries, 10 MB of heap walked by every push and pop).
  // Once they are at least kDropStaleFrom and half of the future events, drop_stale_timers()
  // removes them all: O(1) amortised per timer, and nothing that runs changes (a stale timer
  // never dispatches). Its time still counts for the time limit (stale_latest_).
  static constexpr std::size_t kDropStaleFrom = 1024;
  std::size_t stale_timers_ = 0;   // counted when a wait with a deadline ends otherwise
  Time stale_latest_ = -1;         // the latest time among dropped stale timers (-1: none)
  std::vector<Event> due_;   // events at now_, in insertion order from due_head_
  std::size_t due_head_ = 0;
  std::vector<OwnerId> owners_scratch_;
  EventLog event_log_;  // with options_.log_events
  std::vector<SiteEntry> entered_;
  ChoiceOwners choice_owners_;
  std::int32_t pick_ = -1;  // the tape index of the schedule choice that picked the event being popped
  // With the event log: the schedule choice just recorded picked the event being popped, and
  // (n > 0) its n options' owners are in owners_scratch_.
  [[gnu::noinline, gnu::cold]] void note_pick(std::size_t n);
  // With the event log: the current dispatch entered `site` (entered_sites). Out of line, so
  // set_site, inlined into every step's interpreter loop, stays a store and a test.
  [[gnu::noinline, gnu::cold]] void note_site(const void* site);
  void stamp(const Process* p, std::uint8_t kind, OwnerId owner = -1) {
    event_log_.push_back({trace_.hash(), now_, p ? p->id() : -1, kind, p ? p->site_ : nullptr, pick_, owner});
  }
  std::vector<Callback> callbacks_;
  std::vector<std::uint32_t> free_callbacks_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::size_t live_nondaemon_ = 0;
  std::size_t nondaemon_spawned_ = 0;
  std::size_t live_total_ = 0;
  Process* current_ = nullptr;
  // The thread's context while a process runs (run() waits there), and where the context that
  // just switched away is to be saved: a context learns who resumed it only once it runs, from
  // the value resume() returns, and stores it there.
  boost::context::fiber main_fiber_;
  boost::context::fiber* resumer_slot_ = nullptr;
  asan::StackBounds main_stack_;
  // Where advance() runs when a process blocks, so that its frames stay in the caches instead
  // of being cold lines on every blocked stack (call_on_stack.h). From the thread's pool, of the
  // default stack size (callbacks run there); mapped by drive() (null before, or if the system
  // refused it); the destructor returns it.
  boost::context::stack_context dispatch_stack_{};
  RunLimits limits_;
  RunResult result_;
  bool running_ = false;
  bool ending_ = false;        // result_ decided; advance() returns nullptr
  bool tearing_down_ = false;  // unwinding: callbacks are dropped, failures ignored
};

template <typename F>
Process* Simulation::spawn(std::string name, F&& fn, ProcessOptions options) {
  using Body = std::decay_t<F>;
  static_assert(std::is_invocable_v<Body&>, "a process body takes no arguments");
  const std::size_t stack = options.stack_bytes ? options.stack_bytes : options_.stack_bytes;
  Process* p = new_process(std::move(name), std::move(options));
  p->fiber_ = boost::context::fiber(
      std::allocator_arg, PooledStack(stack),
      [this, p, body = Body(std::forward<F>(fn))](boost::context::fiber&& from) mutable {
        return fiber_main(p, std::move(from), &invoke_body<Body>, &body);
      });
  const auto& sc = StackPool::for_this_thread().last_allocated();
  p->stack_lo_ = static_cast<const char*>(sc.sp) - sc.size;
  p->stack_size_ = sc.size;
  on_created(p);
  return p;
}

}  // namespace racesim::kernel
