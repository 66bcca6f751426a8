// The interpreter: runs a rank's compiled steps in order on its simulated process.
#pragma once

#include "src/scenario/step.h"

namespace racesim::scenario {

// Runs `steps` in order, skipping those whose `on:` selector excludes this rank.
void run_steps(const StepList& steps, RankContext& ctx);
// A rank's (or a spawned helper's) whole program: run_steps, and a StepError that no `try`
// caught fails the run.
void run_rank(const StepList& steps, RankContext& ctx);

}  // namespace racesim::scenario
