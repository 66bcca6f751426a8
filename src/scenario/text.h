// A name or path with ${rank} and ${world} substituted per rank ("ready_${rank}"); constant
// ${param}s are substituted when it is compiled (Compiler::text).
#pragma once

#include <string>
#include <vector>

#include "src/scenario/step.h"

namespace racesim::scenario {

class Text {
 public:
  Text() = default;
  explicit Text(std::string literal) { parts_.push_back({false, std::move(literal)}); }
  std::string resolve(const RankContext& ctx) const { return resolve(ctx.rank, ctx.world); }
  std::string resolve(int rank, int world) const;
  bool is_literal() const { return parts_.size() <= 1 && (parts_.empty() || !parts_[0].var); }

 private:
  friend class Compiler;
  struct Part {
    bool var;           // ${rank} or ${world}
    std::string text;   // literal text, or the variable name
  };
  std::vector<Part> parts_;
};

}  // namespace racesim::scenario
