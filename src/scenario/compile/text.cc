// Text (see text.h).
#include "src/scenario/compile/text.h"

#include <cassert>

#include "src/scenario/language/expr.h"

namespace racesim::scenario {

namespace {
bool reads_local(const TextPart& p) { return p.local >= 0 || (p.expr && p.expr->uses_locals()); }
}  // namespace

std::string Text::resolve(int rank) const {
  assert(!uses_locals() && "resolve(rank) REQUIRES a text of no local");
  return fixed_prefix(rank);
}

std::string Text::fixed_prefix(int rank) const {
  std::string out;
  for (const Part& p : parts_) {
    if (reads_local(p)) break;
    if (!p.expr) {
      out += p.text;
    } else {
      // Checked for every rank when compiled: never divides by zero, never draws.
      out += format_for_name(p.expr->eval(rank, nullptr).value_or(0.0), p.expr->unit());
    }
  }
  return out;
}

std::string Text::resolve(const RankContext& ctx) const {
  std::string out;
  for (const Part& p : parts_) {
    if (p.local >= 0) {
      out += ctx.text_locals[static_cast<std::size_t>(p.local)];
    } else if (!p.expr) {
      out += p.text;
    } else {
      // An expression of a local may divide by one that is 0 now: the compiler refuses that.
      out += format_for_name(p.expr->eval(ctx.rank, nullptr, nullptr, ctx.locals.data()).value_or(0.0), p.expr->unit());
    }
  }
  return out;
}

bool Text::uses_locals() const {
  for (const Part& p : parts_) {
    if (reads_local(p)) return true;
  }
  return false;
}

const std::string& Text::resolve(const RankContext& ctx, std::string& scratch) const {
  if (is_literal() && !parts_.empty()) return parts_[0].text;
  scratch = resolve(ctx);
  return scratch;
}

}  // namespace racesim::scenario
