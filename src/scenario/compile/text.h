// A name or path whose expressions that use the rank are resolved per rank ("ready_${rank}",
// "/ckpt/node${node}/"); constant expressions and params are substituted when it is compiled
// (Compiler::text).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/scenario/compile/step.h"
#include "src/scenario/language/expr.h"

namespace racesim::scenario {

class Expr;

class Text {
 public:
  Text() = default;
  explicit Text(std::string literal) { parts_.push_back({std::move(literal), nullptr}); }
  std::string resolve(const RankContext& ctx) const { return resolve(ctx.rank); }
  // As rank `rank` resolves it (the rank count is a constant when compiled: substituted then).
  std::string resolve(int rank) const;
  // The same text without building a string where it is the same on every rank: the literal
  // itself, else `scratch` holding resolve(rank). For the steps that resolve one text many times
  // (a poll's condition: a copy and a free per check).
  const std::string& resolve(int rank, std::string& scratch) const;
  // True when it is the same on every rank.
  bool is_literal() const { return parts_.size() <= 1 && (parts_.empty() || !parts_[0].expr); }

 private:
  friend class Compiler;
  using Part = TextPart;  // an expression part uses the rank (not random, no text)
  std::vector<Part> parts_;
};

}  // namespace racesim::scenario
