// Partial-order reduction for the bounded exhaustive search (exhaustive.h): from one run, the
// schedule alternatives worth running, so two orders of steps that commute (steps of two ranks on
// two marks, or one computing while another sleeps) are not both run.
//
// Dynamic partial-order reduction (Flanagan and Godefroid, POPL 2005), on the run's event log:
// each dispatch (a process running until it blocks, or a callback) has a footprint, the union of
// the footprints of the steps it ran (src/scenario/compile/footprint.h) and its rank. Two
// dispatches of different processes depend on each other when either touches everything, they
// act for the same rank, or their footprints share a key. For every two dependent dispatches at
// the same virtual time, i before j, where a schedule choice picked i: the run that picks j's
// process there instead, or, when j's process had no option there (j's event did not exist yet),
// every other option there. Dispatches at different times are ordered by time, not by the
// schedule: a choice can only reorder events due at one instant, and what moves an event to
// another instant is a dependent step at an earlier one, which is a race of its own.
//
// With a bound on delays the reduction alone would miss schedules within the bound (Coons,
// Musuvathi and McKinley, "Bounded partial-order reduction", OOPSLA 2013): as their BPOR and
// dejafu's preemption bounding do, each alternative is also tried at the most recent context
// switch before its choice, where it may cost fewer delays.
//
// Choices that are not the schedule's (wake, model, fault, draw) are not reduced: the search runs
// every option of each.
#pragma once

#include <cstdint>
#include <vector>

#include "src/run/runner.h"

namespace racesim::search {

struct Alternative {
  std::size_t position = 0;  // a schedule choice's index on the tape
  std::uint64_t option = 0;  // an option it did not take
  bool operator<(const Alternative& o) const {
    return position != o.position ? position < o.position : option < o.option;
  }
  bool operator==(const Alternative& o) const = default;
};

// The schedule alternatives of run `r`, sorted and distinct. REQUIRES: `r` was run with
// record_choices and log_events (its event log names the choices that picked each event, and
// its sites are the program's scenario::Step).
std::vector<Alternative> schedule_alternatives(const run::RunRecord& r);

}  // namespace racesim::search
