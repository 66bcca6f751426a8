// LiveClock: see live_clock.h.
#include "src/live/live_clock.h"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace racesim::live {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

kernel::Time LiveClock::now() const {
  const double v = static_cast<double>(monotonic_ns() - start_ns_) / scale_;
  if (v <= 0) return 0;
  return v >= static_cast<double>(kernel::kTimeMax) ? kernel::kTimeMax : static_cast<kernel::Time>(v);
}

std::int64_t LiveClock::real_ns(kernel::Time t) const {
  const double r = static_cast<double>(start_ns_) + static_cast<double>(t) * scale_;
  return r >= 9.2e18 ? INT64_MAX : static_cast<std::int64_t>(r);
}

bool LiveClock::wait_until(kernel::Time t) {
  const std::int64_t target = real_ns(t);
  constexpr std::int64_t kSlice = 20'000'000;  // 20 ms: how late a stop is noticed
  // Bounded: each pass sleeps until the target or for a slice, and the target is fixed.
  for (;;) {
    if (stop_ && stop_()) return false;
    const std::int64_t now = monotonic_ns();
    if (now >= target) return true;
    const std::int64_t until = std::min(target, now + kSlice);
    timespec ts{static_cast<time_t>(until / 1'000'000'000), static_cast<long>(until % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
  }
}

}  // namespace racesim::live
