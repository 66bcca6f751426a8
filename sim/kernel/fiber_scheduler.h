// The Boost.Fiber scheduling algorithm that simulations own.
//
// Boost.Fiber asks its algorithm which context runs next whenever a fiber suspends or ends
// (`pick_next`). A simulation does not let Boost choose: the kernel's event loop decides which
// process runs next (in the context of the process that is about to block, so one dispatched
// event costs one context switch, or none when a process resumes itself) and resumes that
// context directly (`switch_to`). The algorithm is still Boost's way in for everything else: the
// dispatcher context gets a turn after a fiber ends, so the stack of a finished process is
// returned at once (`exit_to`), and contexts woken outside a simulation are served in order; the
// thread's main context waits in `Simulation::run`.
//
// One instance per OS thread, installed on first use; simulations on different threads share
// nothing.
#pragma once

#include <chrono>
#include <deque>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>

namespace racesim::kernel {

class Process;

class FiberScheduler final : public boost::fibers::algo::algorithm {
 public:
  // The calling thread's scheduler (installs it on first call).
  static FiberScheduler& for_this_thread();

  // Suspends the calling context and runs `next`, by resuming it directly: what Boost's
  // scheduler::suspend() does after asking this algorithm's pick_next(), without those frames
  // (and context::suspend's) on every blocked stack. REQUIRES: next is not the caller, and
  // belongs to this thread's scheduler.
  static void switch_to(boost::fibers::context* next) { next->resume(); }
  // Called by a process's fiber just before it returns: after Boost retires it, the dispatcher
  // releases its stack, then `next` runs.
  void exit_to(boost::fibers::context* next) {
    next_ = next;
    reap_pending_ = true;
  }
  // While set, the fiber Boost announces (awakened) is this process's new fiber.
  Process* spawning = nullptr;

  // boost::fibers::algo::algorithm
  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override;
  // Boost's interface names the wall clock here; this override never reads it and never sleeps
  // the thread (a simulation always knows what runs next, or returns to its caller).
  void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {}
  void notify() noexcept override {}

  FiberScheduler();

 private:
  boost::fibers::context* next_ = nullptr;  // from exit_to: runs once the dispatcher has reaped
  boost::fibers::context* dispatcher_ = nullptr;
  bool dispatcher_ready_ = false;
  bool reap_pending_ = false;
  std::deque<boost::fibers::context*> ready_;  // contexts woken outside a simulation
};

}  // namespace racesim::kernel
