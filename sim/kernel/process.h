// A simulated process: ordinary sequential code on a fiber of its own (a Boost.Context fiber on a
// pooled stack), or a stackless body the kernel calls at each resume (Resumable); and the
// intrusive wait queue that every blocking primitive is built from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/context/fiber.hpp>

#include "sim/kernel/time.h"

namespace racesim::kernel {

class Simulation;
class Process;
class WaitQueue;
namespace unwind {
struct Target;
}

using ProcessId = std::int32_t;

// Why a blocking call returned. kKilled never reaches model code: the kernel throws
// ProcessKilled instead.
enum class WaitStatus : std::uint8_t { kOk, kTimeout, kClosed, kKilled };

// Thrown inside a process killed during a run (a crash fault) to unwind its stack. Model code
// must let it pass: catch (...) blocks must rethrow. At the end of the simulation the stack is
// unwound by a forced unwind instead (sim/kernel/forced_unwind.h), which runs destructors and
// catch (...) blocks but no catch (const ProcessKilled&).
struct ProcessKilled {};

enum class ProcessState : std::uint8_t {
  kRunnable,  // its start event is pending
  kRunning,
  kBlocked,   // waiting on a queue and/or a timer
  kWaking,    // woken; its resume event is pending
  kDone,
};

// How a finished process ended.
enum class ExitKind : std::uint8_t { kNone, kReturned, kKilled, kFailed };

struct ProcessOptions {
  // A daemon does not keep the run alive and is not reported as deadlocked.
  bool daemon = false;
  // Usable stack bytes; 0 means the simulation's default.
  std::size_t stack_bytes = 0;
  // Chrome trace placement: group (a Chrome process, e.g. "rank 3") and lane (a Chrome thread,
  // e.g. "host"). Empty group means "sim", empty lane means the process name.
  std::string group = {};
  std::string lane = {};
};

// The body of a stackless process (Simulation::spawn_stackless): a state machine with no stack
// of its own, for processes that are many and simple (a rank that computes and meets barriers
// and collectives holds about 1 KiB this way, where a fiber touches a 4 KiB page of stack). The
// kernel calls resume() at the process's start and at the end of each wait it arms, on the
// dispatcher's stack, as it would switch to a fiber: the same events in the same order, so a
// run's trace hash does not depend on which kind its processes are.
class Resumable {
 public:
  virtual ~Resumable() = default;
  // Runs the body from its start (`status` kOk) or from where its last wait was armed (`status`
  // how that wait ended: kOk or kClosed as given to wake, kTimeout; kKilled when the process
  // was killed, while the run goes on or at teardown). Returns true when it armed a wait
  // (Simulation::arm_wait) and must be resumed at its end, false when the process has ended.
  // After kKilled it must return false, and at teardown (Simulation::tearing_down) touch
  // nothing but itself: what it waited on may already be destroyed. It may throw, as a fiber's
  // body may: ProcessKilled ends it as killed, any other exception fails the run.
  virtual bool resume(WaitStatus status) = 0;
};

// Something a process can wait on. Describes itself for stall diagnosis and names, where it
// knows them, the processes that could release a waiter.
class Waitable {
 public:
  virtual ~Waitable() = default;
  // e.g. "mutex 'm1'", "channel 'ring3'".
  virtual std::string describe() const = 0;
  // Appends the processes that could release `waiter` (mutex owner, joined process, declared
  // producers...). Default: unknown.
  virtual void releasers(const WaitQueue& queue, const Process& waiter,
                         std::vector<const Process*>& out) const;
};

// An intrusive FIFO of blocked processes. A process is in at most one queue at a time; the
// kernel unlinks it on timeout or kill, so primitives only ever see live waiters.
class WaitQueue {
 public:
  // `role` is a static string naming the operation that waits here ("lock", "recv"); with ""
  // the owner's description stands alone in reports.
  WaitQueue(const Waitable* owner, const char* role) : owner_(owner), role_(role) {}
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;
  ~WaitQueue();

  bool empty() const { return head_ == nullptr; }
  std::size_t size() const { return size_; }
  Process* front() const { return head_; }
  const Waitable* owner() const { return owner_; }
  const char* role() const { return role_; }

  void push_back(Process* p);
  void remove(Process* p);
  Process* pop_front();
  template <typename F>
  void for_each(F&& f) const;

 private:
  friend class Simulation;  // wake_all empties the queue in one pass
  const Waitable* owner_;
  const char* role_;
  Process* head_ = nullptr;
  Process* tail_ = nullptr;
  std::size_t size_ = 0;
};

class Process final : public Waitable {
 public:
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  ProcessId id() const { return id_; }
  const std::string& name() const { return name_; }
  bool daemon() const { return options_.daemon; }
  ProcessState state() const { return state_; }
  bool finished() const { return state_ == ProcessState::kDone; }
  ExitKind exit_kind() const { return exit_; }
  // True once kill() was called on it (it may still be unwinding).
  bool killed() const { return killed_; }
  // When it finished (REQUIRES: finished()), and why it was killed ("" if not, or not said).
  Time exit_time() const { return exit_time_; }
  const std::string& kill_cause() const { return kill_cause_; }
  // How it ended, for diagnoses: "finished at 10s", "killed at 4s by crash fault 'c'", "failed
  // at 2s"; "running" when not finished.
  std::string exit_description() const;
  const ProcessOptions& options() const { return options_; }
  // What it is blocked on ("lock on mutex 'm1'", "sleep until 40s"), or "" when not blocked.
  std::string wait_description() const;
  // The queue it waits in, or nullptr (running, sleeping, or done).
  const WaitQueue* waiting_in() const { return wq_; }
  // The slot passed to Simulation::wait_on by the wait in progress (for direct hand-over of a
  // value between processes, e.g. a channel send to a blocked receiver).
  void* wait_slot() const { return wait_slot_; }

  // Waitable (joining this process).
  std::string describe() const override { return "process '" + name_ + "'"; }
  void releasers(const WaitQueue&, const Process&,
                 std::vector<const Process*>& out) const override {
    out.push_back(this);
  }

 private:
  friend class Simulation;
  friend class WaitQueue;
  Process(ProcessId id, std::string name, ProcessOptions options)
      : id_(id), name_(std::move(name)), options_(std::move(options)) {}

  // Hot fields first (one cache line, touched on every dispatch); the rest below.
  // Its suspended context while it does not run (empty while it runs, and once it has ended):
  // one pointer, the stack address where its registers were saved.
  boost::context::fiber fiber_;
  const char* resume_frame_ = nullptr;  // near where it blocked: prefetched before resuming it
  std::uint32_t token_ = 0;     // generation of the current wait; stale events carry older ones
  ProcessId id_;
  ProcessState state_ = ProcessState::kRunnable;
  WaitStatus status_ = WaitStatus::kOk;
  ExitKind exit_ = ExitKind::kNone;
  bool killed_ = false;
  bool returns_at_teardown_ = false;  // in Simulation::sleep_until_or_teardown
  bool stackless_ = false;  // runs body_ (a Resumable), never a fiber
  bool timed_ = false;      // its current wait has a timer (read when a stackless wait ends)
  void* wait_slot_ = nullptr;   // primitive-owned data of the current wait (a value to hand over)
  // Wait-queue links.
  WaitQueue* wq_ = nullptr;
  Process* wq_prev_ = nullptr;
  Process* wq_next_ = nullptr;
  // Cold.
  const void* stack_lo_ = nullptr;  // its fiber stack, for sanitizer annotations
  // Its entry frame, where a forced unwind at teardown ends (forced_unwind.h); nullptr before
  // the body starts.
  unwind::Target* unwind_target_ = nullptr;
  std::size_t stack_size_ = 0;
  std::string name_;
  ProcessOptions options_;
  WaitQueue joiners_{this, "join"};
  Time exit_time_ = 0;
  std::string kill_cause_;
  const void* site_ = nullptr;  // Simulation::set_site: what it is running, for the event log
  const char* wait_role_ = "";  // the current wait's role, for a full trace's closing record
  std::unique_ptr<Resumable> body_;  // a stackless process's body (freed when it ends)
};

template <typename F>
void WaitQueue::for_each(F&& f) const {
  for (Process* p = head_; p != nullptr; p = p->wq_next_) f(*p);
}

}  // namespace racesim::kernel
