// A draw the run's policy decides (see draw.h).
#include "src/scenario/execute/draw.h"

namespace racesim::scenario {

namespace {

// The simulation's draw choices, as a DrawDecider.
class SimulationDraws final : public DrawDecider {
 public:
  explicit SimulationDraws(kernel::Simulation& sim) : sim_(sim) {}
  std::uint64_t decide() override { return sim_.decide_draw(); }

 private:
  kernel::Simulation& sim_;
};

}  // namespace

double decided_draw(const Distribution& d, kernel::RandomStream& rng, int rank, kernel::Simulation& sim,
                    const double* locals) {
  SimulationDraws decider(sim);
  return d.sample_decided(rng, rank, &decider, locals);
}

}  // namespace racesim::scenario
