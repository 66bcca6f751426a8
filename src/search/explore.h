// The explorer: many runs of one compiled program, each filling its tape (sim/kernel/tape.h) a
// different way, looking for a run that fails. What `racesim explore` runs.
//
// Modes (how run i fills its tape; its seed is seed_start + i, which also fills the named random
// streams: parameter draws, and fault arming where the mode leaves it to the seed):
//   random   every choice but fault arming uniform among its options (`run --policy random`);
//   pct[:D]  PCT of depth D (default 3): random process priorities, D - 1 change points over the
//            steps a fifo probe run took (sim/kernel/policy.h);
//   swarm    each run turns on a random subset of the choice kinds (the others take their first
//            option) and of the fault plan (the rest disarmed), then chooses at random, as swarm
//            testing does (Groce et al., ISSTA 2012): a run that leaves a fault or a kind of
//            choice out explores the others more deeply;
//   exhaustive[:D]  every tape with at most D delays (default 2), depth first, on seed
//            seed_start (exhaustive.h).
//
// Determinism: run i's options depend on i and the mode only, and a search stops at the first
// failing run in index order (or, with `all`, goes through the budget), so a run budget gives the
// same findings and coverage for any number of threads. A time budget stops where the clock says.
#pragma once

#include <cstdint>

#include "src/run/runner.h"
#include "src/scenario/compile/compiler.h"
#include "src/search/search.h"

namespace racesim::search {

// The options of run `i` under `o` (its policy, and for swarm its kinds and disarmed faults).
run::RunOptions run_options(const scenario::CompiledProgram& program, const ExploreOptions& o,
                            std::uint64_t steps_hint, std::uint64_t i);

// Searches `program` within the budget. REQUIRES: o.budget_runs >= 1, o.jobs >= 1.
ExploreResult explore(const scenario::CompiledProgram& program, const ExploreOptions& o);

}  // namespace racesim::search
