// The context switch every process hand-off makes: Boost.Context's jump_fcontext for x86-64
// System V (ELF), replaced by one that leaves the return-address predictor in step.
//
// Boost's version (1.74, jump_x86_64_sysv_elf_gas.S) ends with `jmp *%r8` to the resumed
// context's return address. The `call jump_fcontext` that entered it pushed an entry on the
// processor's return stack buffer (RSB) and nothing pops it, so after every switch the resumed
// process's returns are predicted from entries one off: each `ret` on its way back up
// (switch_to, suspend_current, sleep_until, the step that slept) mispredicts. This version
// returns with `ret` instead. It pops that entry, which predicts the target exactly: every
// process suspends at the same call site (Simulation::switch_to), so the address the suspending
// process pushed is the address the resumed one returns to. The returns after it are then
// predicted from the suspending process's own call chain, right whenever both processes blocked
// through the same code (a rank polling and a rank transferring both return through
// sleep_until, for example).
//
// Everything else is Boost's, so a context saved here is resumed by Boost's ontop_fcontext and
// make_fcontext's fresh contexts start here unchanged: the same 64-byte record below the stack
// pointer (MXCSR and the x87 control word at 0 and 4, r12-r15, rbx, rbp at 8 to 0x30, the
// return address at 0x38), the same registers in and out (rdi: the context to resume, rsi: the
// data passed; rax/rdx: the transfer_t of the context that switched here and that data).
//
// No call-frame information, as in Boost's: nothing unwinds across a switch (an exception stays
// on the stack of the process that threw it).
//
// Linked in place of Boost's: the symbol is global and the kernel library, which uses it, comes
// before Boost.Context on every link line, so the archive member of Boost that defines it is
// never pulled in (defining it twice would fail the link, loudly).
// tests/sim/kernel/boost_linked_in.sh checks that each binary runs this one.
#if defined(__x86_64__) && defined(__ELF__)

asm(R"(
    .text
    .p2align 4
    .globl jump_fcontext
    .type jump_fcontext, @function
    .globl racesim_jump_fcontext
    .type racesim_jump_fcontext, @function
jump_fcontext:
racesim_jump_fcontext:
    leaq  -0x38(%rsp), %rsp
    stmxcsr  (%rsp)
    fnstcw   0x4(%rsp)
    movq  %r12, 0x8(%rsp)
    movq  %r13, 0x10(%rsp)
    movq  %r14, 0x18(%rsp)
    movq  %r15, 0x20(%rsp)
    movq  %rbx, 0x28(%rsp)
    movq  %rbp, 0x30(%rsp)
    movq  %rsp, %rax
    movq  %rdi, %rsp
    ldmxcsr  (%rsp)
    fldcw    0x4(%rsp)
    movq  0x8(%rsp), %r12
    movq  0x10(%rsp), %r13
    movq  0x18(%rsp), %r14
    movq  0x20(%rsp), %r15
    movq  0x28(%rsp), %rbx
    movq  0x30(%rsp), %rbp
    leaq  0x38(%rsp), %rsp
    movq  %rsi, %rdx
    movq  %rax, %rdi
    ret
    .size jump_fcontext, .-jump_fcontext
    .size racesim_jump_fcontext, .-racesim_jump_fcontext
)");

#endif
