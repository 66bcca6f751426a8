// Text (see text.h).
#include "src/scenario/compile/text.h"

#include "src/scenario/language/expr.h"

namespace racesim::scenario {

std::string Text::resolve(int rank) const {
  std::string out;
  for (const Part& p : parts_) {
    if (!p.expr) {
      out += p.text;
    } else {
      // Checked for every rank when compiled: never divides by zero, never draws.
      out += format_for_name(p.expr->eval(rank, nullptr).value_or(0.0), p.expr->unit());
    }
  }
  return out;
}

const std::string& Text::resolve(int rank, std::string& scratch) const {
  if (is_literal() && !parts_.empty()) return parts_[0].text;
  scratch = resolve(rank);
  return scratch;
}

}  // namespace racesim::scenario
