// The clock of a live rank (racesim live): virtual time 0 is a real CLOCK_MONOTONIC instant shared
// by every rank's process, and virtual time t is that instant plus t * scale (scale 0.01: a 40 s
// compile takes 0.4 s). As the worker simulation's pacer (sim/kernel/pacer.h) it holds each step
// of the virtual clock back until the real clock has reached it, and ends the run when `stop`
// says so (another rank failed, or the supervisor ends the run).
//
// Live code: it reads the real clock. Nothing here runs inside a deterministic simulation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "sim/kernel/pacer.h"
#include "sim/kernel/time.h"

namespace racesim::live {

// CLOCK_MONOTONIC in ns.
std::int64_t monotonic_ns();
// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
std::int64_t thread_cpu_ns();

class LiveClock final : public kernel::Pacer {
 public:
  // `start_ns`: the monotonic instant of virtual time 0. `scale` > 0: real seconds per virtual
  // second. `stop`, polled at least every 20 ms of real time while waiting, ends the run when
  // it returns true (may be empty).
  LiveClock(std::int64_t start_ns, double scale, std::function<bool()> stop)
      : start_ns_(start_ns), scale_(scale), stop_(std::move(stop)) {}
  // The virtual time the real clock has reached (0 before the start).
  kernel::Time now() const;
  // The real instant of virtual time `t`.
  std::int64_t real_ns(kernel::Time t) const;
  bool wait_until(kernel::Time t) override;
  const char* stop_reason() const override { return "stopped: the live run ended (a rank failed or the supervisor stopped it)"; }
  double scale() const { return scale_; }
  // How often a live wait polls (a barrier, a mark; a flock's wait, for its timeout and the
  // run's stop): 1 ms of real time, in virtual ns
  // (at least 1).
  kernel::Time poll_interval() const {
    const double v = 1e6 / scale_;
    return v >= static_cast<double>(kernel::kTimeMax) ? kernel::kTimeMax : std::max<kernel::Time>(1, static_cast<kernel::Time>(v));
  }

 private:
  std::int64_t start_ns_;
  double scale_;
  std::function<bool()> stop_;
};

}  // namespace racesim::live
