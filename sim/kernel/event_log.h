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
  // The schedule choice that picked this event: its index on the run's tape, -1 when none did
  // (it was alone at its time, or the run does not record choices).
  std::int32_t choice = -1;
  std::int32_t owner = -1;     // a callback's owner (the process that scheduled it), or -1
  bool operator==(const EventStamp& o) const {
    return hash == o.hash && at == o.at && process == o.process && kind == o.kind;
  }
};
using EventLog = std::vector<EventStamp>;

// A step a process entered (Simulation::set_site) while dispatched by event `event` (an index
// into the event log): with the site at dispatch, every step a dispatch ran, so a search can
// tell which dispatches touch the same things (src/search/reduction.h).
struct SiteEntry {
  std::uint32_t event = 0;
  const void* site = nullptr;
};

// For each schedule choice the kernel decided (by tape index), the owners of its options in
// option order; empty for other choices. Flat, one allocation for a run: the owners of choice i
// are owners[i ? end[i - 1] : 0, end[i]), and a choice at or past end.size() has none.
template <typename Owner>
struct ChoiceOwnersOf {
  std::vector<Owner> owners;
  std::vector<std::uint32_t> end;
  std::size_t count(std::size_t i) const { return i < end.size() ? end[i] - (i ? end[i - 1] : 0) : 0; }
  const Owner* of(std::size_t i) const { return owners.data() + (i ? end[i - 1] : 0); }  // REQUIRES: count(i) > 0
  // Appends choice i's owners. REQUIRES: i >= end.size().
  void add(std::size_t i, const Owner* first, std::size_t n) {
    end.resize(i, static_cast<std::uint32_t>(owners.size()));
    owners.insert(owners.end(), first, first + n);
    end.push_back(static_cast<std::uint32_t>(owners.size()));
  }
};

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
