// AddressSanitizer fiber annotations. ASan must be told when execution moves to another stack,
// or an exception unwinding a fiber leaves stale redzones behind (it reports "ignoring requested
// __asan_handle_no_return") and a later frame trips over them. The kernel makes every switch
// between processes and the thread's main context itself, so it annotates each of them. Two
// short visits Boost.Context makes on its own are left alone: the jump into a new fiber and
// straight back when it is created, and the release of an ended fiber's stack, which runs on
// the next context's stack before that context's switch finishes. No-ops without ASan.
#pragma once

#include <cstddef>

// RACESIM_ASAN: this translation unit is built with AddressSanitizer (GCC says so with
// __SANITIZE_ADDRESS__, clang 14 only through __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define RACESIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RACESIM_ASAN 1
#endif
#endif

#if defined(RACESIM_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace racesim::kernel::asan {

struct StackBounds {
  const void* bottom = nullptr;  // lowest address
  std::size_t size = 0;
};

inline void start_switch([[maybe_unused]] void** fake_stack_save,
                         [[maybe_unused]] StackBounds to) {
#if defined(RACESIM_ASAN)
  __sanitizer_start_switch_fiber(fake_stack_save, to.bottom, to.size);
#endif
}

inline void finish_switch([[maybe_unused]] void* fake_stack_save) {
#if defined(RACESIM_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack_save, nullptr, nullptr);
#endif
}

// Clears the shadow of stack memory that a pool hands out anew (a stack given back, a freshly
// mapped slab): frames of whatever used it before (a fiber unwound by an exception or abandoned
// at teardown, another thread's unmapped pool) may leave redzones behind, which the next fiber
// there would trip over as a false stack-buffer-overflow.
inline void forget_stack([[maybe_unused]] StackBounds stack) {
#if defined(RACESIM_ASAN)
  __asan_unpoison_memory_region(stack.bottom, stack.size);
#endif
}

// The frames from here up to an unwind's target are left without returning (forced_unwind.h):
// clears their redzones, as ASan does for a thrown exception.
inline void handle_no_return() {
#if defined(RACESIM_ASAN)
  __asan_handle_no_return();
#endif
}

// The calling thread's own stack (for switches back to the main context).
StackBounds thread_stack();

}  // namespace racesim::kernel::asan
