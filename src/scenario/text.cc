// Text (see text.h).
#include "src/scenario/text.h"

namespace racesim::scenario {

std::string Text::resolve(int rank, int world) const {
  std::string out;
  for (const Part& p : parts_) {
    if (!p.var) {
      out += p.text;
    } else if (p.text == "rank") {
      out += std::to_string(rank);
    } else {
      out += std::to_string(world);
    }
  }
  return out;
}

}  // namespace racesim::scenario
