// Calling a function on another stack: a one-frame trampoline that points the stack pointer at a
// given stack, calls the function there and returns to the caller's stack. Not a context switch:
// the call nests in the caller's, nothing is saved beyond what a call saves, and a backtrace or
// an exception thrown by the function passes through the trampoline's frame as through any other
// (it carries call-frame information).
//
// Why: the kernel dispatches the next event (Simulation::advance) when a process blocks. On the
// blocking process's own stack, dispatch's frames (450 to 550 bytes) are lines that process must
// fetch again every time it blocks, thousands of events later; on one stack shared by every
// dispatch they stay in the L1 (bench/README.md, "Why the kernel and the models are built this way").
#pragma once

#include "sim/kernel/asan.h"  // RACESIM_ASAN

namespace racesim::kernel {

// Where call_on_stack moves to the given stack: x86-64 without AddressSanitizer (whose stack
// bookkeeping would need every such call annotated). Elsewhere it calls fn(arg) on the
// current stack, which behaves the same and only costs the cache lines above.
#if defined(__x86_64__) && !defined(RACESIM_ASAN)
inline constexpr bool kCallOnStackSwitches = true;
#else
inline constexpr bool kCallOnStackSwitches = false;
#endif

// Calls fn(arg) with the stack pointer at `stack_top` and returns what it returns; an exception
// from fn propagates to the caller as from a plain call.
// REQUIRES: stack_top is 16-byte aligned, is the top of a stack no other code is using, and the
// stack below it is as deep as fn needs (an overflow is caught only by a guard page below it).
void* call_on_stack(void* arg, void* (*fn)(void*), void* stack_top);

}  // namespace racesim::kernel
