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

namespace racesim::kernel::unwind {

// Where an unwind stops: the entry frame of a process's stack. Lives in that frame.
struct Target {
  void* jump[5];        // __builtin_setjmp's buffer
  const void* frame;    // __builtin_frame_address(0) of the frame that called __builtin_setjmp
};

// Runs the cleanups of every frame between the caller and the frame of `target`, then resumes
// there: the frame's __builtin_setjmp(target.jump) returns 1. Never returns.
// REQUIRES: the frame of `target` is live on the current stack, above the caller, and called
// __builtin_setjmp(target.jump) and set target.frame.
[[noreturn]] void unwind_to(Target& target);

}  // namespace racesim::kernel::unwind
