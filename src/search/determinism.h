// The determinism guard: runs each (program, seed) twice, on two threads with different
// allocation histories, and checks that they are the same run: the same events (compared one by
// one through the event log, sim/kernel/event_log.h), the same outcome, diagnosis, metrics and
// trace hash. A difference is named where it first shows: the event's index and virtual time,
// what each run dispatched there, and the step each process was in. What `racesim check
// --determinism` runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/run/runner.h"
#include "src/scenario/compile/compiler.h"

namespace racesim::search {

struct DeterminismOptions {
  std::uint64_t seed_start = 0;
  std::uint64_t seeds = 2;  // >= 1
  kernel::PolicySpec policy = kernel::PolicySpec::fifo();
};

struct Divergence {
  std::string program;  // "STRATEGY" or "POINT / STRATEGY"
  std::uint64_t seed = 0;
  std::string what;     // where the runs first differ, and how
};

// The first difference between `a` and `b`, two runs of `program` that should be one (made with
// RunOptions::log_events); "" when they are the same run.
std::string compare_runs(const run::RunRecord& a, const run::RunRecord& b);

// Every (program, seed) of `programs` over the options' seeds, each run twice; the runs that
// differ. `runs` counts the pairs made.
std::vector<Divergence> check_determinism(const std::vector<const scenario::CompiledProgram*>& programs,
                                          const DeterminismOptions& o, std::uint64_t& runs);

}  // namespace racesim::search
