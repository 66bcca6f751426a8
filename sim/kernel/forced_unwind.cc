// Forced unwinding to a process's entry frame (see forced_unwind.h): the unwinder's callbacks.
#include "sim/kernel/forced_unwind.h"

#include <cstdint>

namespace racesim::kernel::unwind {

_Unwind_Reason_Code stop_at_target(int, _Unwind_Action actions, _Unwind_Exception_Class, _Unwind_Exception*,
                                   _Unwind_Context* context, void* arg) {
  auto* target = static_cast<Target*>(arg);
  if ((actions & _UA_END_OF_STACK) != 0 ||
      _Unwind_GetIP(context) == reinterpret_cast<std::uintptr_t>(target->return_ip)) {
    __builtin_longjmp(target->jump, 1);
  }
  return _URC_NO_REASON;
}

void no_cleanup(_Unwind_Reason_Code, _Unwind_Exception*) {}

}  // namespace racesim::kernel::unwind
