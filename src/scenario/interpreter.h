// The interpreter: runs a rank's compiled steps in order on its simulated process.
#pragma once

#include "src/scenario/step.h"

namespace racesim::scenario {

// Runs `steps` in order, skipping those whose `on:` selector excludes this rank.
void run_steps(const StepList& steps, RankContext& ctx);
// Fails the run with a StepError that no `try` caught.
void fail_rank(const StepError& e, RankContext& ctx);
// A rank's (or a spawned helper's) whole program: run_steps, and a StepError that no `try`
// caught fails the run. Inline: a killed rank's stack is unwound frame by frame at teardown, and
// its bottom frames are the process body's and run_steps' (forced_unwind.h).
inline void run_rank(const StepList& steps, RankContext& ctx) {
  try {
    run_steps(steps, ctx);
  } catch (const StepError& e) {
    fail_rank(e, ctx);
  }
}

}  // namespace racesim::scenario
