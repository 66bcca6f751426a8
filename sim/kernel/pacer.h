// Pacer: what ties a simulation's clock to a clock outside it. A simulation without one (every
// simulation racesim runs) moves its clock from event to event at once; live mode (src/live/)
// gives a worker's simulation a pacer that holds each step of the clock back until the real clock,
// scaled, has reached it, as SimPy's RealtimeEnvironment(factor) does. The kernel itself never
// reads a clock: the pacer does, outside the simulation library.
#pragma once

#include "sim/kernel/time.h"

namespace racesim::kernel {

class Pacer {
 public:
  virtual ~Pacer() = default;
  // Called by the run loop before the clock moves forward to `t` (virtual ns); returns once the
  // outside has reached `t`. Returning false ends the run at once (RunOutcome::kStopped, with
  // stop_reason() as its message): the outside wants it over (another process's rank failed).
  virtual bool wait_until(Time t) = 0;
  virtual const char* stop_reason() const { return "stopped by its pacer"; }
};

}  // namespace racesim::kernel
