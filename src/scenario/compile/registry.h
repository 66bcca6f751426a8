// The registry: every primitive (a step kind and its compile function), every fault kind and
// every check racesim has, each registered by its family (src/scenario/primitives/*.cc).
//
// A family is one file in src/scenario/primitives/ that defines
//   void register_FILE_family(Registry& r)
// (FILE is the file's name without .cc); the build collects them, so adding a family edits no
// central list. A primitive is one line there:
//   r.add({"sleep", "sleep: DURATION - wait for a (sampled) duration", compile_sleep});
// Its compile function reads the arguments through the Compiler (compiler.h), which resolves
// ${param} references, checks units and reports errors at the argument's file:line:column.
// Fault kinds that a model in sim/ declares are registered from its declarations
// (r.add_faults(storage::fault_kinds())); checks with r.add_check.
#pragma once

#include <any>
#include <cassert>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/scenario/file/value.h"

#include "sim/kernel/faults.h"
#include "sim/kernel/simulation.h"
#include "src/scenario/file/diagnostics.h"
#include "src/scenario/file/quantity.h"
#include "src/scenario/compile/step.h"

namespace racesim::scenario {

class Compiler;
class PlatformReader;
class RunState;

using CompileFn = std::unique_ptr<Step> (*)(const Value& args, const Location& where,
                                            Compiler& c);

struct PrimitiveInfo {
  std::string name;
  std::string help;  // one line: syntax - what it does
  CompileFn compile;
  // Declares the counters its model records when a program has this step (metric_names.h:
  // they are 0 in a run that does not add to them); null: none beyond what `compile` declares.
  void (*declares)(Compiler& c) = nullptr;
  // It has a live meaning (racesim live runs it on a real process and directory): its family
  // registers it with Registry::add_live. A live run refuses a program with any other primitive.
  bool live = false;
  // Its model keeps state of the rank's process (dynamo's compile caches, a load's progress, the
  // profiler's schedule) that a group restart (platform.elastic) does not reset: a program with
  // it and a group restart policy is refused when compiled.
  bool keeps_process_state = false;
};

// An argument of a fault kind: its unit, and its default as written ("" when required).
struct FaultArg {
  std::string name;
  Unit unit = Unit::kNumber;
  std::string default_value;
  double lo = 0, hi = -1;  // the values it may take (base units); hi < 0: max_of(unit)
};

using kernel::ActiveFault;

// What a fault kind's start hook sees: called once per active fault when the run begins, after
// the ranks are spawned (a crash schedules the kill here; most kinds need no hook: the model
// they affect asks the fault seam).
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
  std::vector<std::string> counters = {};     // counters its start hook adds to (metric_names.h)
};

// A check: what makes a run fail. Hard checks are always on (a rank that deadlocks or dies never
// passes). A soft check is on when the scenario's `checks:` lists it or has no `checks:`; left
// out, a violation is counted as the metric ignored.NAME and the rank goes on, as the real
// program would (a torn model loads as garbage).
struct CheckInfo {
  std::string name;
  bool hard = false;
  std::string description;  // one line
};

// A family's own platform section (platform.NAME), parsed with located errors by `parse`, which
// gets the section's node (undefined when the scenario has none, so it returns the defaults) and
// returns the section's value; the family reads it back as platform.section<T>(NAME).
struct PlatformSection {
  std::string name;
  std::string help;  // one line: its keys
  std::any (*parse)(PlatformReader& reader, const std::string& key, const Value& node) = nullptr;
};

// Items with a unique `name`, kept sorted by it.
template <typename T>
class NamedTable {
 public:
  // REQUIRES: no item of that name yet (a family registers each name once).
  void add(T item) {
    const std::string name = item.name;
    [[maybe_unused]] const bool inserted = by_name_.emplace(name, std::move(item)).second;
    assert(inserted && "registered twice");
  }
  const T* find(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &it->second;
  }
  T* find(std::string_view name) {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &it->second;
  }
  std::vector<const T*> all() const {
    std::vector<const T*> out;
    for (const auto& [n, item] : by_name_) out.push_back(&item);
    return out;
  }

 private:
  std::map<std::string, T, std::less<>> by_name_;
};

class Registry {
 public:
  void add(PrimitiveInfo info) { primitives_.add(std::move(info)); }
  const PrimitiveInfo* find(std::string_view name) const { return primitives_.find(name); }
  // A primitive with a live meaning (PrimitiveInfo::live): said where it is registered.
  void add_live(PrimitiveInfo info) {
    info.live = true;
    add(std::move(info));
  }
  std::vector<const PrimitiveInfo*> all() const { return primitives_.all(); }  // sorted by name
  std::string names() const;                      // "compute, fail, ..."
  // The primitive whose name is nearest to `name` (at most 2 edits), or "".
  std::string closest(std::string_view name) const;

  void add_fault(FaultKindInfo info) { faults_.add(std::move(info)); }
  // Registers fault kinds a model declares (sim/storage/faults.h, ...), with an optional start
  // hook for all of them.
  void add_faults(const std::vector<kernel::FaultKindSpec>& kinds, FaultStartFn start = nullptr);
  const FaultKindInfo* find_fault(std::string_view name) const { return faults_.find(name); }
  std::vector<const FaultKindInfo*> all_faults() const { return faults_.all(); }

  void add_section(PlatformSection section) { sections_.add(std::move(section)); }
  std::vector<const PlatformSection*> all_sections() const { return sections_.all(); }

  void add_check(CheckInfo info) { checks_.add(std::move(info)); }
  const CheckInfo* find_check(std::string_view name) const { return checks_.find(name); }
  std::vector<const CheckInfo*> all_checks() const { return checks_.all(); }

 private:
  NamedTable<PrimitiveInfo> primitives_;
  NamedTable<FaultKindInfo> faults_;
  NamedTable<CheckInfo> checks_;
  NamedTable<PlatformSection> sections_;
};

// Every primitive, fault kind and check of every family.
const Registry& builtin_registry();
// Calls every family's register function (generated by the build from primitives/*.cc).
void register_families(Registry& r);

}  // namespace racesim::scenario
