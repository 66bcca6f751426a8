// Expressions in scenario values and names: what is inside ${...}.
//
//   ${rank}  ${world}  ${node}  ${local_rank}  ${ranks_per_node}  ${PARAM}  ${LOOP_VARIABLE}
//   ${rank // 8}  ${rank * 100ms}  ${start + rank % 8 * 10ms}  ${max(steps - 1, 0)}  ${(a + b) / 2}
//
// Operators, loosest first: one comparison (== != < <= > >=, 1 when it holds, else 0), then + -,
// then * / // (floor division) %, then unary -; parentheses; min(a, b) and max(a, b). Literals are
// numbers ("8", "0.5") and quantities ("100ms", "2GiB"). A comparison joins values of one unit
// (or two plain numbers) and is a number; it does not chain (a < b < c is an error).
// Units follow the quantities: + and - join values of one unit; * scales a value by a number;
// / divides by a number, or a value by one of its unit (giving a number); // and % likewise.
// Anything else (a duration times a duration, a number minus a size) is an error that names both
// units. A name is a loop variable, then a param, then a built-in; a text param or loop value
// may stand alone in a name ("${prefix}/model.om") but takes no arithmetic.
//
// A name may also be a local variable of the program (`let`, a value a collective carried, a
// listing's name in `for_each`): read when the step runs, from the rank's own slots.
//
// An expression that uses neither the rank nor a distribution nor a local is a constant, folded when the
// scenario is compiled. One that uses the rank (rank, node, local_rank) is evaluated per rank;
// one that uses a distribution param draws from it each time it is evaluated, from the rank's
// seeded stream (or, for a param drawn per rank or per run, takes that param's one value:
// distribution.h's DrawScope).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kernel/random.h"
#include "src/scenario/language/distribution.h"
#include "src/scenario/file/quantity.h"

namespace racesim::scenario {

class Expr;

// A piece of a text that depends on the rank ("/ckpt/rank${rank}"): literal text, an
// expression of the rank or of locals (not random, not text), or a text local's slot (a
// listing's name).
struct TextPart {
  std::string text;                  // literal text, when expr is null and local < 0
  std::shared_ptr<const Expr> expr;
  int local = -1;                    // a text local: the rank's text slot
};

// What a name in an expression stands for.
struct Binding {
  enum class Kind : std::uint8_t {
    kNumber, kText, kTextTemplate, kDistribution, kRank, kNode, kLocalRank,
    kLocal,     // a number local (`let`): the rank's number slot `slot`, of unit `unit`
    kLocalText  // a text local (a listing's name): the rank's text slot `slot`
  };
  Kind kind = Kind::kNumber;
  double number = 0;  // kNumber, in base units (ns, bytes)
  Unit unit = Unit::kNumber;
  std::string text;   // kText
  std::vector<TextPart> parts;  // kTextTemplate: a text resolved per rank (a use's "d${rank}")
  Distribution dist;  // kDistribution
  int slot = -1;      // kLocal, kLocalText
};
// Looks a name up; nullopt when it is unknown.
using Lookup = std::function<std::optional<Binding>(std::string_view name)>;
// The names a Lookup knows ("n, t, rank"), for the message about an unknown one: built only then.
using KnownNames = std::function<std::string()>;

class Expr final : public RankFunction {
 public:
  // The longest expression accepted (characters between ${ and }), and how deeply it may nest.
  static constexpr std::size_t kMaxLength = 512;
  static constexpr int kMaxDepth = 16;

  // Parses `source` (the text between ${ and }). `known` gives the names the lookup knows, for
  // the message about an unknown one. `ranks_per_node` defines node and local_rank. On error,
  // the message says what is wrong and what is supported.
  static kernel::Result<std::shared_ptr<const Expr>> parse(std::string_view source, const Lookup& lookup,
                                                           const KnownNames& known, int ranks_per_node);

  const std::string& source() const override { return source_; }
  // A lone text binding ("${prefix}"): its text; nullopt for a number.
  const std::optional<std::string>& text() const { return text_; }
  // A lone text-template binding ("${dir}" bound to "/c/d${rank}"): its parts; empty otherwise.
  const std::vector<TextPart>& text_parts() const { return text_parts_; }
  // Text either way: it may stand only where a name is expected.
  bool is_text() const { return text_.has_value() || !text_parts_.empty(); }
  Unit unit() const { return unit_; }
  bool uses_rank() const override { return uses_rank_; }
  bool random() const override { return random_; }
  bool uses_locals() const override { return uses_locals_; }
  // Whether it divides (/, //, %) by a value that is random or a local: such a value could be 0.
  bool divides_by_random() const { return divides_by_random_; }
  // Its value for `rank`, in base units. REQUIRES: not text(); `locals` given when uses_locals().
  // Draws from `rng` when random().
  // Division by zero gives nullopt (a constant or rank-dependent expression is checked for every
  // rank when compiled).
  std::optional<double> eval(int rank, kernel::RandomStream* rng, DrawDecider* decider = nullptr,
                             const double* locals = nullptr) const override;
  // For an expression that is monotone in the rank (not random; one use of rank, node or
  // local_rank, reached only through + and -, * and / by a value that does not depend on it, //
  // of it by such a value, min, max and unary -): the two ranks among `ranks` at which that
  // variable takes its least and greatest value, where the expression takes its extremes. Over
  // all ranks it takes only values between them, and no value is undefined unless one of them is
  // (a division by a value that does not depend on the rank is 0 at every rank or none). With
  // `whole`, also only when every value is a whole number if both extremes are (no /, every
  // literal whole). nullopt otherwise: the caller evaluates it at every rank.
  // REQUIRES: uses_rank(), ranks >= 1 (nullopt for one that uses locals or draws).
  std::optional<std::pair<int, int>> extreme_ranks(int ranks, bool whole) const;

 private:
  struct Op {
    enum class Kind : std::uint8_t {
      kConst, kRank, kNode, kLocalRank, kDraw, kLocal, kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kNeg, kMin, kMax,
      kEq, kNe, kLt, kLe, kGt, kGe  // comparisons: 1 or 0
    };
    Kind kind;
    double value = 0;     // kConst
    std::size_t dist = 0; // kDraw: index into dists_; kLocal: the slot
  };
  friend class ExprParser;
  std::string source_;
  std::vector<Op> ops_;  // reverse Polish
  std::vector<Distribution> dists_;
  std::optional<std::string> text_;
  std::vector<TextPart> text_parts_;
  Unit unit_ = Unit::kNumber;
  int ranks_per_node_ = 1;
  bool uses_rank_ = false;
  bool random_ = false;
  bool uses_locals_ = false;
  bool divides_by_random_ = false;
};

// The source inside a value that is one expression and nothing else ("${steps * 2}" ->
// "steps * 2"), or nullopt (text around it, two expressions, an unclosed one).
std::optional<std::string> whole_expression(std::string_view s);

// A value as a name shows it: a count or whole number without decimals, other numbers with up
// to 6 significant digits, durations and sizes with their unit ("100ms", "2GiB").
std::string format_for_name(double value, Unit unit);

}  // namespace racesim::scenario
