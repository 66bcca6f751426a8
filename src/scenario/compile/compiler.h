// The compiler: a scenario's program, at one sweep point, for one strategy, to a tree of Step
// objects (slots replaced by the strategy's bindings, `on:` selectors resolved against the
// point's ranks), with its platform and fault plan checked and resolved.
#pragma once

#include <cassert>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "src/scenario/file/value.h"

#include "sim/kernel/faults.h"
#include "src/scenario/language/distribution.h"
#include "src/scenario/language/expr.h"
#include "src/scenario/compile/metric_names.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/language/scenario.h"
#include "src/scenario/compile/step.h"
#include "src/scenario/compile/text.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

struct Platform;

// A fault of the plan, with its arguments parsed (every declared argument present).
struct CompiledFault {
  std::string name;
  const FaultKindInfo* kind = nullptr;
  Location where;
  RankSelector on;
  std::vector<std::pair<kernel::ResourceKind, std::string>> aims;  // mount, comm, link
  double probability = 1;
  double fires = 1;         // FaultSpec::fires
  std::uint64_t times = 0;  // FaultSpec::times (0: no limit)
  std::map<std::string, Distribution, std::less<>> args;
};

// A compiled step's primitive and where it is written.
struct StepUse {
  const PrimitiveInfo* primitive = nullptr;
  Location where;
  std::string live_refusal;  // Step::live_refusal
};

// Compiles the program for one strategy; arguments are checked by each primitive.

class Compiler {
 public:
  // `max_steps`: the most steps the program may compile to (kMaxSteps, or fewer where a caller
  // bounds its work: the fuzz target). REQUIRES: 1 <= max_steps <= kMaxSteps.
  Compiler(const Scenario& sc, const Strategy& strategy, const Registry& registry,
           Diagnostics& diags, std::size_t max_steps = kMaxSteps)
      : sc_(sc), strategy_(strategy), registry_(registry), diags_(diags), max_steps_(max_steps) {
    assert(max_steps >= 1 && max_steps <= kMaxSteps);
  }

  // Step lists nest at most this deep (a rank's program runs on a fiber stack of 64 KiB; each
  // level costs a few hundred bytes of it); deeper is a located error, not a stack overflow.
  static constexpr int kMaxNesting = 32;
  StepList compile_list(const Value& steps);
  // The steps bound to `slot` by this strategy (compiled in place of the slot step).
  StepList compile_slot(const std::string& slot, const Location& where);

  // Argument readers: each reports errors itself and returns nullopt on error.
  // A quantity of `unit`: a literal, a distribution, or an expression "${...}" (expr.h) of that
  // unit; a constant expression is folded, one that uses the rank is checked for every rank.
  std::optional<Distribution> quantity(const Value& node, Unit unit, std::string_view what);
  std::optional<std::int64_t> count(const Value& node, std::int64_t lo, std::int64_t hi,
                                    std::string_view what);
  std::optional<double> number(const Value& node, double lo, double hi, std::string_view what);
  // A fixed duration (a literal or a constant param; no distribution), as a timeout is.
  std::optional<kernel::Time> fixed_duration(const Value& node, std::string_view what);
  // true or false, written so or as ${NAME} of a use's argument (or text param) that is one;
  // `fallback` when the node is absent.
  std::optional<bool> flag(const Value& node, std::string_view what, bool fallback);
  // Text with expressions: constant ones substituted now, those using the rank kept for run time
  // ("ready_${rank}", "/ckpt/node${node}/step${step}"); one that draws from a distribution is an
  // error (a name is not random).
  std::optional<Text> text(const Value& node, std::string_view what);
  // Parses the expression `source` (inside ${}) where `node` wrote it; nullptr (reported) on error.
  std::shared_ptr<const Expr> expression(const std::string& source, const Value& node, std::string_view what);
  // What a name means here: a loop variable (innermost first), a param, or a built-in (rank,
  // world, node, local_rank, ranks_per_node, nodes).
  std::optional<Binding> lookup(std::string_view name);
  // Loop variables (for_each) and locals, visible to the steps compiled until pop_scope.
  // A scope's locals give their slots back when it ends: the steps after it reuse them (a rank
  // runs one scope's steps before the next's; a spawned process has its own copy).
  void push_scope(std::map<std::string, Binding, std::less<>> vars) {
    scopes_.push_back(std::move(vars));
    scope_slots_.emplace_back(locals_, text_locals_);
  }
  void pop_scope() {
    scopes_.pop_back();
    std::tie(locals_, text_locals_) = scope_slots_.back();
    scope_slots_.pop_back();
  }
  // A nested step list.
  std::optional<StepList> steps(const Value& node, std::string_view what);
  // A value bound to a loop variable or a use's arg: a constant expression, a quantity or text.
  std::optional<Binding> value_binding(const Value& node, std::string_view what);
  // Declares a local variable (`let`, a collective's carried value, a listing's name): a number
  // of `unit`, or a text, in a slot of the rank's own (RankContext::locals, text_locals),
  // visible to the steps after it in its step list and to the lists inside them. A name that
  // is not an identifier, is built in, or is already a param, loop variable, argument or local
  // here is a located error (nullopt).
  std::optional<Binding> declare_local(const Value& name, Unit unit, bool is_text, std::string_view what);
  // Whether `name` (written at `node`) can name a metric: a located error when it reads a local,
  // since a run's metrics are named before it starts.
  bool fixed_name(const Text& name, const Value& node, std::string_view what);
  // A fault of the plan, checked against its kind's arguments; `on:` is resolved against the
  // point's ranks and `platform` (its mounts).
  std::optional<CompiledFault> fault(const FaultSpec& spec, const Platform* platform);
  // A communicator name the program uses (`collective comm: {name: N}`): a fault may aim at it.
  void declare_comm(std::string name) { comms_.push_back(std::move(name)); }
  // A counter a step or its model may add to (metric_names.h): 0 in every run that does not.
  // A name with ${rank}/${world} is declared as each rank would resolve it.
  void declare_counter(std::string name) { metrics_.counters.insert(std::move(name)); }
  void declare_counter(const Text& name);
  // True the first time `what` is asked in this compile: a family's work that is the same for
  // every step of a program (declaring every mount's counters) is done once, not once a step.
  bool first_time(std::string_view what) { return done_once_.insert(std::string(what)).second; }
  // A per-rank series a step may sample (a mark's NAME_s, record's series).
  void declare_series(std::string name) { metrics_.series.insert(std::move(name)); }
  void declare_series(const Text& name, std::string_view suffix = "");
  // A mark the program sets (MetricNames::marks), as each rank resolves it.
  void declare_mark(const Text& name);
  const MetricNames& metric_names() const { return metrics_; }
  // The series the scenario names (a `metrics:` definition's `of:` and each of its `between:`
  // marks' NAME_s, a check's and an expectation's metric): what a mark records only when asked.
  std::shared_ptr<const std::set<std::string, std::less<>>> asked_series();
  const std::vector<StepUse>& step_uses() const { return step_uses_; }
  // The point's platform (nullptr when it did not parse): steps check paths against its mounts.
  const Platform* platform() const { return platform_; }
  void set_platform(const Platform* p) { platform_ = p; }
  // Reports keys of map `node` outside `allowed`, and `required` keys that are missing.
  bool keys(const Value& node, std::initializer_list<std::string_view> allowed,
            std::initializer_list<std::string_view> required, std::string_view what);

  Location at(const Value& node) const { return scenario::at(node, sc_.file); }
  // Reports an error; inside a `use`, located at the use (the definition's place in the message).
  void error(const Location& where, std::string message) { report(where, std::move(message)); }
  void report(const Location& where, std::string message);
  // The steps of `define: NAME`, with its args bound to the use's values (use: {name: N, A: V}).
  std::optional<StepList> compile_use(const Value& args, const Location& where);
  // for_each: {var: V, range: N | [START, STOP] | [START, STOP, STEP] | in: [values], index: I,
  // do: [steps]}: the steps once per value, unrolled when compiled.
  std::optional<StepList> compile_for_each(const Value& args, const Location& where);
  // The most iterations one for_each may unroll, and the most steps a program may compile to.
  static constexpr std::int64_t kMaxIterations = 100'000;
  static constexpr std::size_t kMaxSteps = 1'000'000;
  const Scenario& scenario() const { return sc_; }
  const Strategy& strategy() const { return strategy_; }

 private:
  std::unique_ptr<Step> compile_step(const Value& node);
  // A fault's `on:`: a rank selector, or {ranks: SELECTOR, mount: M, comm: C, link: L}.
  void resolve_fault_target(const FaultSpec& spec, const FaultKindInfo& kind, const Platform* platform,
                            CompiledFault& f);

  const Scenario& sc_;
  const Strategy& strategy_;
  const Registry& registry_;
  Diagnostics& diags_;
  std::vector<std::string> slot_stack_;  // guards against a slot expanding into itself
  int nesting_ = 0;  // step lists open around the one being compiled
  std::vector<std::string> comms_;       // declared communicator names
  MetricNames metrics_;                  // declared counters and series
  std::shared_ptr<const std::set<std::string, std::less<>>> asked_;  // asked_series(), built once
  const Platform* platform_ = nullptr;
  std::vector<std::map<std::string, Binding, std::less<>>> scopes_;  // loop variables, innermost last
  std::vector<std::string> resolving_;   // params being evaluated (a cycle is an error)
  int locals_ = 0, text_locals_ = 0;     // slots in use by the locals in scope (declare_local)
  std::vector<std::pair<int, int>> scope_slots_;  // locals_ and text_locals_ when each scope began
  struct UseFrame {
    std::string name;
    Location site;
  };
  std::vector<UseFrame> uses_;           // the `use` steps being compiled, outermost first
  std::set<std::string, std::less<>> done_once_;  // first_time's
  std::vector<const Location*> step_sites_;  // the steps being compiled, innermost last (a
                                            // missing key's error is located at its step)
  std::size_t max_steps_;                // the most steps this program may compile to
  std::size_t steps_ = 0;                // steps compiled so far (bounded by max_steps_)
  std::vector<StepUse> step_uses_;       // every step compiled, in order
  // The names lookup knows, for messages ("rank, world, ..., steps, i").
  std::string known_names() const;
  int ranks_per_node() const;
};

struct CompiledProgram {
  const Scenario* scenario = nullptr;  // at its sweep point
  const Strategy* strategy = nullptr;
  StepList steps;
  std::vector<CompiledFault> faults;
  std::shared_ptr<const Platform> platform;
  // What its runs can record: declared counters are 0 in a run that does not add to them.
  MetricNames metric_names;
  // Every step compiled, in order (a live run checks that each has a live meaning before
  // anything starts).
  std::vector<StepUse> uses;
  // Every step can run on a stackless rank (runs_stackless): a simulated run's ranks are
  // state machines instead of fibers (execute/rank_machine.h), unless a full trace is written.
  bool stackless = false;
};
// `max_steps` as Compiler's.
std::optional<CompiledProgram> compile_program(const Scenario& sc, const Strategy& strategy,
                                               Diagnostics& diags,
                                               const Registry& registry = builtin_registry(),
                                               std::size_t max_steps = Compiler::kMaxSteps);

}  // namespace racesim::scenario
