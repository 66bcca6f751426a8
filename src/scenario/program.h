// The step language: a registry of primitives, a compiler from YAML steps to a compact tree of
// Step objects (once per strategy), and the per-rank interpreter that runs it.
//
// A primitive is added with one line in its family's register function (see control.cc):
//   registry.add({"sleep", "sleep: DURATION - wait for a (sampled) duration", compile_sleep});
// Its compile function reads the arguments through the Compiler, which resolves ${param}
// references, checks units and reports errors at the argument's file:line:column.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/kernel/faults.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"
#include "src/scenario/scenario.h"
#include "src/scenario/yaml_util.h"

namespace racesim::scenario {

// A failed check in one run: which check, where, and a one-line diagnosis.
struct Failure {
  std::string check;
  std::string diagnosis;
};

struct CompiledFault;
struct Platform;
class StorageRuntime;
class ClusterRuntime;

// Thrown by a step whose operation failed (an I/O error, a lock that cannot be taken): a
// `try` step catches it; otherwise the rank stops and the run fails with this check.
struct StepError {
  std::string check;
  std::string diagnosis;
};

// State shared by every rank of one run.
class RunState {
 public:
  // `platform` (nodes, storage mounts) must outlive the run; nullptr: an empty platform.
  explicit RunState(kernel::Simulation& sim, const Platform* platform = nullptr, int world = 1);
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;
  kernel::Simulation& sim() { return sim_; }
  const Platform& platform() const { return *platform_; }
  // The run's file systems, created on first use.
  StorageRuntime& storage();
  // The run's devices and collective engine, created on first use.
  ClusterRuntime& cluster();
  // The named barrier of all `parties` ranks, created on first use (cyclic).
  kernel::Barrier& barrier(const std::string& name, int parties);
  // The ranks' main processes (the runner sets them), for models that report where a rank is.
  // Also binds each to its rank in the fault seam.
  void set_rank_processes(std::vector<kernel::Process*> ranks);
  const std::vector<kernel::Process*>& rank_processes() const { return rank_processes_; }
  // A process died (a crash): the models release what it held (flocks, open files).
  void release(const kernel::Process* p, int rank);
  // The named mark (an event any rank can set and wait for), created on first use.
  kernel::Event& mark(const std::string& name);
  bool marked(const std::string& name) const;
  // Appends a value to a named series (a mark NAME: NAME_s, the time each rank reached it).
  // The run's metric of that name is the series' maximum; `metrics:` derives others.
  void sample(const std::string& series, double value);
  // Adds to a named counter (compiles, bytes_written, ...); the run's metric is the total.
  void add(const std::string& counter, double delta);
  // The run's metrics: each series' maximum, each counter's total, then the scenario's
  // derived metrics (a definition whose series was not recorded gives no metric).
  std::map<std::string, double> metrics(const std::vector<MetricDef>& defs) const;
  // The first failure wins; the run stops at once and this returns true. A step check the
  // scenario left out of `checks:` (model_loads_intact, no_io_errors) does not stop the run: it
  // is counted as ignored.CHECK and this returns false, so the step carries on as the real
  // program would (a torn model loads as garbage).
  bool fail(std::string check, std::string diagnosis);
  // The scenario's `checks:` (empty: all on). REQUIRES: outlives the run.
  void set_checks(const std::vector<std::string>* checks) { checks_ = checks; }
  const std::optional<Failure>& failure() const { return failure_; }
  // Named helper processes (spawn/join), per rank.
  std::map<std::pair<int, std::string>, kernel::Process*>& spawned() { return spawned_; }

  // Draws which faults are active in this run: for each fault, each rank it may hit, in rank
  // order, from the stream "fault/NAME"; an active fault samples its arguments from its own
  // stream "fault/NAME/RANK". Counts active faults as the counter faults.NAME, then runs the
  // kinds' start hooks. REQUIRES: set_rank_processes was called.
  void arm_faults(const std::vector<CompiledFault>& faults, int world);
  // The run's fault seam: the models ask it at their fault points.
  kernel::FaultSeam& faults() { return faults_; }

 private:
  kernel::Simulation& sim_;
  const Platform* platform_;
  int world_;
  std::vector<kernel::Process*> rank_processes_;
  std::unique_ptr<StorageRuntime> storage_;
  std::unique_ptr<ClusterRuntime> cluster_;
  std::map<std::string, std::unique_ptr<kernel::Barrier>> barriers_;
  std::map<std::string, std::unique_ptr<kernel::Event>> marks_;
  std::map<std::string, std::vector<double>> series_;
  std::map<std::string, double> counters_;
  std::optional<Failure> failure_;
  const std::vector<std::string>* checks_ = nullptr;
  std::map<std::pair<int, std::string>, kernel::Process*> spawned_;
  kernel::FaultSeam faults_;
  std::vector<std::string> fault_names_;  // every fault of the plan (armed or not)
};

// What a step sees when it runs: its rank, the run, and the rank's own random stream.
struct RankContext {
  kernel::Simulation& sim;
  RunState& run;
  int rank;
  int world;
  kernel::RandomStream rng;
};

// A name or path with ${rank}/${world}/${param} substituted per rank ("ready_${rank}").
class Text {
 public:
  Text() = default;
  explicit Text(std::string literal) { parts_.push_back({false, std::move(literal)}); }
  std::string resolve(const RankContext& ctx) const;
  bool is_literal() const { return parts_.size() <= 1 && (parts_.empty() || !parts_[0].var); }

 private:
  friend class Compiler;
  struct Part {
    bool var;           // ${rank} or ${world}
    std::string text;   // literal text, or the variable name
  };
  std::vector<Part> parts_;
};

class Step {
 public:
  virtual ~Step() = default;
  // REQUIRES: called from the rank's simulated process.
  virtual void run(RankContext& ctx) const = 0;
  Location where;
  std::optional<RankSelector> on;
};
using StepList = std::vector<std::unique_ptr<Step>>;

using kernel::to_time;
// A time as diagnoses print it: "41.3 s".
std::string seconds_text(kernel::Time t);

// Runs `steps` in order, skipping those whose `on:` selector excludes this rank.
void run_steps(const StepList& steps, RankContext& ctx);
// A rank's (or a spawned helper's) whole program: run_steps, and a StepError that no `try`
// caught fails the run.
void run_rank(const StepList& steps, RankContext& ctx);

class Compiler;
using CompileFn = std::unique_ptr<Step> (*)(const YAML::Node& args, const Location& where,
                                            Compiler& c);

struct PrimitiveInfo {
  std::string name;
  std::string help;  // one line: syntax - what it does
  CompileFn compile;
};

// An argument of a fault kind: its unit, and its default as written ("" when required).
struct FaultArg {
  std::string name;
  Unit unit = Unit::kNumber;
  std::string default_value;
};
using kernel::ActiveFault;

// What a fault kind's start hook sees: called once per active fault when the run begins, after
// the ranks are spawned (a crash schedules the kill here; most kinds need no hook and are
// consulted by the model they affect through RunState::fault).
struct FaultStart {
  kernel::Simulation& sim;
  RunState& run;
  kernel::Process* rank_process;
};
using FaultStartFn = void (*)(ActiveFault& fault, const FaultStart& start);

struct FaultKindInfo {
  std::string name;
  std::string help;  // one line: what it does
  std::vector<FaultArg> args;
  FaultStartFn start = nullptr;
  std::vector<kernel::ResourceKind> aimable;  // what `on:` may aim it at besides ranks
};

// A fault of the plan, with its arguments parsed (every declared argument present).
struct CompiledFault {
  std::string name;
  const FaultKindInfo* kind = nullptr;
  Location where;
  RankSelector on;
  std::vector<std::pair<kernel::ResourceKind, std::string>> aims;  // mount, comm, link
  double probability = 1;
  std::map<std::string, Distribution, std::less<>> args;
};

class Registry {
 public:
  void add(PrimitiveInfo info);
  const PrimitiveInfo* find(std::string_view name) const;
  // Sorted by name.
  std::vector<const PrimitiveInfo*> all() const;
  std::string names() const;  // "compute, fail, ..."

  void add_fault(FaultKindInfo info);
  // Registers fault kinds a model declares (sim/storage/faults.h, ...), with an optional start
  // hook for all of them.
  void add_faults(const std::vector<kernel::FaultKindSpec>& kinds, FaultStartFn start = nullptr);
  const FaultKindInfo* find_fault(std::string_view name) const;
  std::vector<const FaultKindInfo*> all_faults() const;  // sorted by name

 private:
  std::map<std::string, PrimitiveInfo, std::less<>> by_name_;
  std::map<std::string, FaultKindInfo, std::less<>> faults_;
};

// Every primitive racesim has (control now; storage, device, collectives and runtime join as
// their models land).
const Registry& builtin_registry();
void register_control_primitives(Registry& r);
void register_storage_primitives(Registry& r);
void register_cluster_primitives(Registry& r);

// Compiles the program for one strategy; arguments are checked by each primitive.
class Compiler {
 public:
  Compiler(const Scenario& sc, const Strategy& strategy, const Registry& registry,
           Diagnostics& diags)
      : sc_(sc), strategy_(strategy), registry_(registry), diags_(diags) {}

  StepList compile_list(const YAML::Node& steps);
  // The steps bound to `slot` by this strategy (compiled in place of the slot step).
  StepList compile_slot(const std::string& slot, const Location& where);

  // Argument readers: each reports errors itself and returns nullopt on error.
  // A quantity of `unit`: a literal, a distribution, or "${param}" of that unit.
  std::optional<Distribution> quantity(const YAML::Node& node, Unit unit, std::string_view what);
  std::optional<std::int64_t> count(const YAML::Node& node, std::int64_t lo, std::int64_t hi,
                                    std::string_view what);
  std::optional<double> number(const YAML::Node& node, double lo, double hi, std::string_view what);
  // A fixed duration (a literal or a constant param; no distribution), as a timeout is.
  std::optional<kernel::Time> fixed_duration(const YAML::Node& node, std::string_view what);
  // true or false; `fallback` when the node is absent.
  std::optional<bool> flag(const YAML::Node& node, std::string_view what, bool fallback);
  // Text with ${rank}/${world} kept for run time and ${param} (constant params) substituted.
  std::optional<Text> text(const YAML::Node& node, std::string_view what);
  // A nested step list.
  std::optional<StepList> steps(const YAML::Node& node, std::string_view what);
  // A fault of the plan, checked against its kind's arguments; `on:` is resolved against the
  // point's ranks and `platform` (its mounts).
  std::optional<CompiledFault> fault(const FaultSpec& spec, const Platform* platform);
  // A communicator name the program uses (`collective comm: {name: N}`): a fault may aim at it.
  void declare_comm(std::string name) { comms_.push_back(std::move(name)); }
  // Reports keys of map `node` outside `allowed`, and `required` keys that are missing.
  bool keys(const YAML::Node& node, std::initializer_list<std::string_view> allowed,
            std::initializer_list<std::string_view> required, std::string_view what);

  Location at(const YAML::Node& node) const { return scenario::at(node, sc_.file); }
  void error(const Location& where, std::string message) { diags_.error(where, std::move(message)); }
  const Scenario& scenario() const { return sc_; }
  const Strategy& strategy() const { return strategy_; }

 private:
  std::unique_ptr<Step> compile_step(const YAML::Node& node);
  // A fault's `on:`: a rank selector, or {ranks: SELECTOR, mount: M, comm: C, link: L}.
  void resolve_fault_target(const FaultSpec& spec, const FaultKindInfo& kind, const Platform* platform,
                            CompiledFault& f);

  const Scenario& sc_;
  const Strategy& strategy_;
  const Registry& registry_;
  Diagnostics& diags_;
  std::vector<std::string> slot_stack_;  // guards against a slot expanding into itself
  std::vector<std::string> comms_;       // declared communicator names
};

struct CompiledProgram {
  const Scenario* scenario = nullptr;  // at its sweep point
  const Strategy* strategy = nullptr;
  StepList steps;
  std::vector<CompiledFault> faults;
  std::shared_ptr<const Platform> platform;
};
std::optional<CompiledProgram> compile_program(const Scenario& sc, const Strategy& strategy,
                                               Diagnostics& diags,
                                               const Registry& registry = builtin_registry());

}  // namespace racesim::scenario
