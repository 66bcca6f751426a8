// Distributions of quantities, as written in scenario files, sampled through the kernel's
// seeded streams (never std::*_distribution).
//
//   40s                                          constant
//   {constant: 40s}                              constant
//   {uniform: {min: 1s, max: 3s}}                uniform on [min, max)
//   {exponential: {mean: 2s}}                    exponential
//   {normal: {mean: 40s, sd: 5s}}                normal, clamped at 0 for durations and sizes
//   {lognormal: {median: 40s, sigma: 0.25}}      median * exp(sigma * N(0, 1)); sigma unitless
//   {choice: {values: [1s, 2s], weights: [3, 1]}} weighted choice (weights default to equal)
//   "${rank * 100ms}"                            an expression (expr.h), per rank, drawing from
//                                                the distributions it names
//
// A param's distribution also says how often it is drawn (DrawScope, `per:` beside the kind:
// {uniform: {min: 1s, max: 5s}, per: run}): at each use (the default), once per rank, or once
// per run, shared by every rank.
//
// Durations and sizes are sampled as whole nanoseconds and bytes (rounded, never negative).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/scenario/file/value.h"

#include "sim/kernel/random.h"
#include "src/scenario/file/diagnostics.h"
#include "src/scenario/file/quantity.h"

namespace racesim::scenario {

// What a distribution of kind kExpr evaluates: an expression (expr.h's Expr implements it).
// Which value a draw from a distribution takes when a search steers it (a kDraw choice,
// sim/kernel/tape.h): 0 the stream's, 1 to 3 the distribution's low end, median and high end
// (Distribution::representative). src/scenario/execute/draw.h puts it through the simulation.
class DrawDecider {
 public:
  virtual ~DrawDecider() = default;
  virtual std::uint64_t decide() = 0;
};

class RankFunction {
 public:
  virtual ~RankFunction() = default;
  // Its value for `rank` in base units, drawing from `rng` where random() (each draw through
  // `decider` when there is one) and reading the rank's locals (`let`, by slot) where
  // uses_locals(); nullopt where it is undefined (a division by zero).
  virtual std::optional<double> eval(int rank, kernel::RandomStream* rng, DrawDecider* decider = nullptr,
                                     const double* locals = nullptr) const = 0;
  virtual bool uses_rank() const = 0;
  virtual bool random() const = 0;
  // Whether it reads a local variable of the rank's program (`let`): its value is known only
  // when the step runs, like a draw's, but it is no draw.
  virtual bool uses_locals() const = 0;
  virtual const std::string& source() const = 0;  // as written inside ${}
};

// How often a param's distribution is drawn in a run.
//   kUse   at each use, on each rank, from the rank's stream (the default): two uses of a param
//          on one rank are two draws.
//   kRank  once per rank: every use on a rank has the rank's value, which differs between ranks.
//   kRun   once per run: every use on every rank has one value.
// A value drawn per rank or per run comes from a stream of its own, named after the param (and
// the rank), derived from the run's seed: the same seed gives the same value whatever the ranks
// do and in what order, in a simulation and in every worker of a live run. It is not a choice on
// a run's tape (sim/kernel/tape.h): a search moves it by moving the seed.
enum class DrawScope : std::uint8_t { kUse, kRank, kRun };
// "use", "rank", "run"; and back (nullopt for any other text).
const char* scope_name(DrawScope scope);
std::optional<DrawScope> parse_scope(std::string_view text);

struct Distribution {
  enum class Kind : std::uint8_t { kConstant, kUniform, kExponential, kNormal, kLognormal, kChoice, kExpr };
  Kind kind = Kind::kConstant;
  Unit unit = Unit::kNumber;
  // constant: a; uniform: [a, b); exponential: mean a; normal: mean a, sd b;
  // lognormal: median a, sigma b; an expression without a distribution: its minimum and maximum
  // over the ranks (set by the compiler).
  double a = 0;
  double b = 0;
  std::vector<double> values;   // choice
  std::vector<double> weights;  // choice
  std::shared_ptr<const RankFunction> expr;  // expression (shared by the copies of a compiled program)
  // Set on a param's distribution (with_scope); kUse everywhere else.
  DrawScope scope = DrawScope::kUse;
  std::uint64_t scope_key = 0;  // the param's stream (fnv1a64 of "param NAME"), for kRank and kRun

  static Distribution constant(double v, Unit unit) {
    Distribution d;
    d.unit = unit;
    d.a = v;
    return d;
  }
  // REQUIRES: e is a number of unit `unit` (not text).
  static Distribution expression(std::shared_ptr<const RankFunction> e, Unit unit) {
    Distribution d;
    d.kind = Kind::kExpr;
    d.unit = unit;
    d.expr = std::move(e);
    return d;
  }
  bool is_constant() const { return kind == Kind::kConstant; }
  // This distribution drawn as `scope` says, as the param `name`. REQUIRES: random() or scope
  // is kUse (a constant is the same at every use).
  Distribution with_scope(DrawScope scope, std::string_view name) const;
  // Whether its value depends on the rank (an expression using rank, node or local_rank).
  bool uses_rank() const;
  // Whether a value of it is drawn: false for a constant and for an expression that draws
  // nothing (one of the rank, or of a loop variable bound to one).
  bool random() const;
  // Whether it is an expression that reads a local (`let`): known only when its step runs.
  bool uses_locals() const;
  // A value for `rank` (which only an expression uses). An expression that divides by zero gives
  // 0 (the compiler refuses one that can, unless it divides by a random value). With a scope of
  // kRank or kRun the value comes from the param's own stream (of rng.seed(), the run's seed)
  // and `rng` is not drawn from.
  // `locals` are the rank's local variables, which an expression that uses_locals() reads
  // (REQUIRES: given for one).
  double sample(kernel::RandomStream& rng, int rank = 0, DrawDecider* decider = nullptr,
                const double* locals = nullptr) const;
  // sample(), then, with a decider and a distribution that is not a constant, an expression
  // (whose own draws are decided inside it) or drawn per rank or run, the value the decider picks: the stream is drawn
  // from either way, so the draws after it do not move.
  double sample_decided(kernel::RandomStream& rng, int rank, DrawDecider* decider,
                        const double* locals = nullptr) const;
  // A value that stands for the distribution in a search (a kDraw choice, sim/kernel/tape.h):
  // 1 its low end, 2 its median, 3 its high end (a uniform's bounds; the 1st and 99th
  // percentiles of an exponential, normal or lognormal; a choice's least, first and greatest
  // value), rounded and clamped as sample() does. nullopt for a constant or an expression (the
  // draws inside an expression are decided one by one). REQUIRES: 1 <= which <= 3.
  std::optional<double> representative(int which) const;
  // e.g. "lognormal(median 40s, sigma 0.25)".
  std::string describe() const;
  // Why the distribution can give a value outside [lo, hi] ("its minimum 0.5 is below 1", "a
  // normal has no lower bound"), or empty when it cannot. A tail bounded on one side only
  // (exponential, lognormal, a normal of durations) is judged by its bounded side and its centre.
  std::string outside(double lo, double hi) const;

 private:
  double sample_from(kernel::RandomStream& rng, int rank, DrawDecider* decider,
                     const double* locals) const;  // at this use
};

// Parses `node` as a distribution. With `expected` set, every quantity must have that unit;
// otherwise the unit is inferred from the first quantity and the rest must match it. On error,
// reports to `diags` (with locations in `file`) and returns nullopt.
std::optional<Distribution> parse_distribution(const Value& node, std::optional<Unit> expected,
                                               const std::string& file, Diagnostics& diags);

}  // namespace racesim::scenario
