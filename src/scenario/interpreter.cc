// The interpreter (see interpreter.h).
#include "src/scenario/interpreter.h"

#include "src/scenario/run_state.h"

namespace racesim::scenario {

void run_steps(const StepList& steps, RankContext& ctx) {
  for (const auto& s : steps) {
    if (s->on && !s->on->contains(ctx.rank)) continue;
    s->run(ctx);
  }
}

void run_rank(const StepList& steps, RankContext& ctx) {
  try {
    run_steps(steps, ctx);
  } catch (const StepError& e) {
    ctx.run.fail(e.check, e.diagnosis);
  }
}

}  // namespace racesim::scenario
