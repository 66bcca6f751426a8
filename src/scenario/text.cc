// Text (see text.h).
#include "src/scenario/text.h"

namespace racesim::scenario {

std::string Text::resolve(const RankContext& ctx) const {
  std::string out;
  for (const Part& p : parts_) {
    if (!p.var) {
      out += p.text;
    } else if (p.text == "rank") {
      out += std::to_string(ctx.rank);
    } else {
      out += std::to_string(ctx.world);
    }
  }
  return out;
}

}  // namespace racesim::scenario
