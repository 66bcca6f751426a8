// A draw from a distribution, by a step or by a fault's argument: what the stream gives, unless
// the run's policy decides draws (a kDraw choice on the tape, sim/kernel/tape.h: option 0 the stream's value, 1 to
// 3 the distribution's low end, median and high end, Distribution::representative). The stream is
// drawn from either way, so the draws after it do not move. A constant is no choice; an
// expression is none itself, but each draw inside it is one.
#pragma once

#include "sim/kernel/time.h"
#include "src/scenario/compile/step.h"
#include "src/scenario/language/distribution.h"

namespace racesim::scenario {

// The draw when the run's policy decides draws (draw.cc): out of line, so the steps that draw
// (every compute and sleep) stay as small as they were without the tape.
double decided_draw(const Distribution& d, kernel::RandomStream& rng, int rank, kernel::Simulation& sim,
                    const double* locals);

// `rng` is the stream the draw comes from, `rank` the rank it is drawn for, `locals` its local
// variables (for an expression that reads one).
inline double draw(const Distribution& d, kernel::RandomStream& rng, int rank, kernel::Simulation& sim,
                   const double* locals = nullptr) {
  if (!sim.draws_decided() || d.is_constant()) return d.sample(rng, rank, nullptr, locals);
  return decided_draw(d, rng, rank, sim, locals);
}

inline double draw(const Distribution& d, RankContext& ctx) {
  return draw(d, ctx.rng, ctx.rank, ctx.sim, ctx.locals.data());
}

// The same, as a duration.
inline kernel::Time draw_time(const Distribution& d, RankContext& ctx) { return kernel::to_time(draw(d, ctx)); }

}  // namespace racesim::scenario
