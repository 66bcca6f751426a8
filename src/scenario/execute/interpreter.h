// The interpreter: runs a rank's compiled steps in order on its simulated process.
#pragma once

#include "src/scenario/compile/step.h"

namespace racesim::scenario {

// Runs `steps` in order, skipping those whose `on:` selector excludes this rank.
void run_steps(const StepList& steps, RankContext& ctx);
// run_steps for a program's own steps (ctx.top_level set while each runs); returns at once when
// one of them returned because the simulation tears down (a step returns then only from
// Simulation::sleep_until_or_teardown: every other blocking call unwinds).
void run_program(const StepList& steps, RankContext& ctx);
// Fails the run with a StepError that no `try` caught.
void fail_rank(const StepError& e, RankContext& ctx);
// A rank's (or a spawned helper's) whole program: run_program, and a StepError that no `try`
// caught fails the run. False: the simulation tore down while the program slept in one of its
// own steps; the caller must then return at once. Inline: a killed rank's stack is unwound frame
// by frame at teardown, and its bottom frames are the process body's and run_steps'
// (forced_unwind.h).
inline bool run_rank(const StepList& steps, RankContext& ctx) {
  try {
    run_program(steps, ctx);
  } catch (const StepError& e) {
    fail_rank(e, ctx);
  }
  return !ctx.sim.tearing_down();
}

}  // namespace racesim::scenario
