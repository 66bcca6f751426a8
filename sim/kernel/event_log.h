// The event log: one stamp per dispatched event (the trace hash so far, its time, process, kind
// and the step its process was in), kept when SimulationOptions::log_events is set, so two runs
// that should be equal are compared event by event and the first place they differ is named
// (racesim check --determinism).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/kernel/time.h"

namespace racesim::kernel {

struct EventStamp {
  std::uint64_t hash = 0;      // the trace hash with this dispatch folded in
  Time at = 0;
  std::int32_t process = -1;   // -1: a callback
  std::uint8_t kind = 0;       // the kernel's event kind (start, resume, timer, callback)
  const void* site = nullptr;  // what the process was running (Simulation::set_site), or null
  bool operator==(const EventStamp& o) const {
    return hash == o.hash && at == o.at && process == o.process && kind == o.kind;
  }
};
using EventLog = std::vector<EventStamp>;

// "start", "resume", "timer", "callback": what an EventStamp's kind names.
const char* event_kind_name(std::uint8_t kind);

// The index of the first event at which `a` and `b` differ (hash, time, process or kind; not the
// site, an address), or the shorter length when one is a prefix of the other; nullopt when equal.
inline std::optional<std::size_t> first_divergence(const EventLog& a, const EventLog& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!(a[i] == b[i])) return i;
  }
  if (a.size() != b.size()) return n;
  return std::nullopt;
}

}  // namespace racesim::kernel
