// Forced unwinding to a process's entry frame (see forced_unwind.h).
#include "sim/kernel/forced_unwind.h"

#include <unwind.h>

#include <cstdint>
#include <cstring>

#include "sim/kernel/asan.h"

namespace racesim::kernel::unwind {
namespace {

// Called by the unwinder before each frame's cleanups: at the target's frame (its CFA lies above
// the frame address the target recorded) the unwind is over, and execution jumps there.
_Unwind_Reason_Code stop(int, _Unwind_Action actions, _Unwind_Exception_Class, _Unwind_Exception*, _Unwind_Context* context,
                         void* arg) {
  auto* target = static_cast<Target*>(arg);
  if ((actions & _UA_END_OF_STACK) != 0 ||
      _Unwind_GetCFA(context) > reinterpret_cast<std::uintptr_t>(target->frame)) {
    __builtin_longjmp(target->jump, 1);
  }
  return _URC_NO_REASON;
}

void no_cleanup(_Unwind_Reason_Code, _Unwind_Exception*) {}

}  // namespace

void unwind_to(Target& target) {
  // The frames below go without returning: their redzones must not outlive them (what ASan's
  // interceptor of __cxa_throw does for a thrown exception).
  asan::handle_no_return();
  // One per thread: a process is unwound to its end before another runs.
  static thread_local _Unwind_Exception exception;
  std::memset(&exception, 0, sizeof exception);
  std::memcpy(&exception.exception_class, "RSIMKILL", sizeof exception.exception_class);
  exception.exception_cleanup = no_cleanup;
  _Unwind_ForcedUnwind(&exception, stop, &target);
  // _Unwind_ForcedUnwind returns only when it cannot unwind (no unwind tables): there is no
  // other way out of a killed process's stack.
  __builtin_trap();
}

}  // namespace racesim::kernel::unwind
