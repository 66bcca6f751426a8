// A name or path whose expressions that use the rank are resolved per rank ("ready_${rank}",
// "/ckpt/node${node}/"), and those that read a local variable (`let`, a listing's name) when its
// step runs ("/ckpt/${name}", "step${i}"); constant expressions and params are substituted when
// it is compiled (Compiler::text).
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
  // As the rank of `ctx` resolves it now, with its locals' values.
  std::string resolve(const RankContext& ctx) const;
  // As rank `rank` resolves it (the rank count is a constant when compiled: substituted then).
  // REQUIRES: !uses_locals().
  std::string resolve(int rank) const;
  // The same text without building a string where it is the same on every rank: the literal
  // itself, else `scratch` holding resolve(ctx). For the steps that resolve one text many times
  // (a poll's condition: a copy and a free per check).
  const std::string& resolve(const RankContext& ctx, std::string& scratch) const;
  // True when it is the same on every rank and at every moment.
  bool is_literal() const { return parts_.size() <= 1 && (parts_.empty() || (!parts_[0].expr && parts_[0].local < 0)); }
  // True when a part reads a local variable: known only when its step runs.
  bool uses_locals() const;
  // What rank `rank` resolves before the first part that reads a local (the whole text when
  // none does): what a compiled program can check of a path ("/ckpt/" of "/ckpt/${name}").
  std::string fixed_prefix(int rank) const;
  // True when it begins with a text local (a listing's path, "${f}.bak"): a whole path, known
  // only when its step runs.
  bool starts_with_text_local() const { return !parts_.empty() && parts_[0].local >= 0; }

 private:
  friend class Compiler;
  using Part = TextPart;  // an expression part uses the rank (not random, no text)
  std::vector<Part> parts_;
};

}  // namespace racesim::scenario
