// Unwinding a killed process's stack at the end of a simulation with the unwinder's cleanup phase
// only (the Itanium C++ ABI's forced unwinding, as pthread_cancel does), instead of throwing
// ProcessKilled.
//
// Why: a thrown exception is unwound twice, a search phase that walks every frame for a handler
// and a cleanup phase that walks them again running destructors. At teardown every unfinished
// process is unwound, and the search is wasted: its handler is always the process's entry frame.
// In a 64-rank run of the cache race that stops at its first failed check, unwinding was a fifth
// of the instructions. Forced unwinding walks the frames once.
//
// What runs: every destructor (cleanup) and every catch (...) block between the point of the
// unwind and the entry frame, which must rethrow, as for ProcessKilled. Typed handlers, such as
// catch (const ProcessKilled&), do not run: code that needs to act when killed before the end of
// a run must not depend on one at teardown (the kernel's primitives do nothing there).
#pragma once

#include <unwind.h>

#include <cstring>

#include "sim/kernel/asan.h"

namespace racesim::kernel::unwind {

// Where an unwind stops: the entry frame of a process's stack. Lives in that frame.
struct Target {
  void* jump[5];                    // __builtin_setjmp's buffer
  // The return address of the call the entry frame makes into the process body: the unwinder
  // sees the entry frame at exactly this instruction address (a frame address compared with the
  // unwinder's CFA missed it: the unwind ran on into the entry frame's catch (...)).
  const void* return_ip = nullptr;
};

// The unwinder's stop function for unwind_to: at the frame of the Target `arg` (the frame whose
// instruction address is its return_ip) the unwind is over, and execution jumps there.
_Unwind_Reason_Code stop_at_target(int version, _Unwind_Action actions, _Unwind_Exception_Class exception_class,
                                   _Unwind_Exception* exception, _Unwind_Context* context, void* arg);
// Its exception's cleanup: nothing (the exception object is the thread's own, never freed).
void no_cleanup(_Unwind_Reason_Code, _Unwind_Exception*);

// Runs the cleanups of every frame between the caller and the frame of `target`, then resumes
// there: the frame's __builtin_setjmp(target.jump) returns 1. Never returns.
// REQUIRES: the frame of `target` is live on the current stack, above the caller, called
// __builtin_setjmp(target.jump), and is inside the call whose return address is target.return_ip.
// Always inlined: the unwinder walks every frame from its caller up to the target at about 2,000
// instructions each, and a killed rank's stack is often only five or six frames deep (most are
// still in their first sleep), so a frame of its own and one for Simulation::killed (inlined
// too) would be a third more.
[[noreturn, gnu::always_inline]] inline void unwind_to(Target& target) {
  // The frames below go without returning: their redzones must not outlive them (what ASan's
  // interceptor of __cxa_throw does for a thrown exception).
  asan::handle_no_return();
  // One per thread: a process is unwound to its end before another runs.
  static thread_local _Unwind_Exception exception;
  std::memset(&exception, 0, sizeof exception);
  std::memcpy(&exception.exception_class, "RSIMKILL", sizeof exception.exception_class);
  exception.exception_cleanup = no_cleanup;
  _Unwind_ForcedUnwind(&exception, stop_at_target, &target);
  // _Unwind_ForcedUnwind returns only when it cannot unwind (no unwind tables): there is no
  // other way out of a killed process's stack.
  __builtin_trap();
}

}  // namespace racesim::kernel::unwind
