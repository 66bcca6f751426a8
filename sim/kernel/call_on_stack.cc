// The trampoline behind call_on_stack.h: x86-64 assembly with call-frame information (an
// unwinder finds the caller's frame through rbp, which holds the caller's stack pointer), or a
// plain call where the stack is not switched.
#include "sim/kernel/call_on_stack.h"

#if defined(__x86_64__) && !defined(RACESIM_ASAN)

extern "C" void* racesim_call_on_stack(void* arg, void* (*fn)(void*), void* stack_top);

// System V ABI: rdi = arg (passed on to fn as it is), rsi = fn, rdx = stack_top. rbp is callee-
// saved, so fn returns with it intact and it gives back the caller's stack pointer. With rsp at
// stack_top (16-byte aligned) before the call, fn starts with the alignment the ABI promises.
asm(R"(
    .text
    .p2align 4
    .globl racesim_call_on_stack
    .hidden racesim_call_on_stack
    .type racesim_call_on_stack, @function
racesim_call_on_stack:
    .cfi_startproc
    pushq %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    movq %rsp, %rbp
    .cfi_def_cfa_register %rbp
    movq %rdx, %rsp
    callq *%rsi
    movq %rbp, %rsp
    popq %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size racesim_call_on_stack, .-racesim_call_on_stack
)");

namespace racesim::kernel {
void* call_on_stack(void* arg, void* (*fn)(void*), void* stack_top) {
  return racesim_call_on_stack(arg, fn, stack_top);
}
}  // namespace racesim::kernel

#else

namespace racesim::kernel {
void* call_on_stack(void* arg, void* (*fn)(void*), void* /*stack_top*/) { return fn(arg); }
}  // namespace racesim::kernel

#endif
