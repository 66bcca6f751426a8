// A scenario file, loaded and validated (see scenarios/README.md for the schema).
//
// The loader checks the document's structure, every value's type and unit, every ${name}, every
// rank selector and every slot binding, and reports all problems at once with file:line:column,
// before anything runs. Steps stay as YAML nodes here; the primitive registry compiles them per
// strategy (compile.h), where each primitive checks its own arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/kernel/time.h"
#include "src/scenario/diagnostics.h"
#include "src/scenario/distribution.h"

namespace racesim::scenario {

// Which ranks a step runs on: all, rank0, others, a rank, a list, a range "a-b", or
// {every: k, offset: m}.
struct RankSelector {
  enum class Kind : std::uint8_t { kAll, kList, kEvery };
  Kind kind = Kind::kAll;
  std::vector<int> ranks;  // kList, ascending, unique
  int every = 1;           // kEvery
  int offset = 0;
  bool contains(int rank) const;
  std::string describe() const;
};
// Parses a selector; ranks must be in [0, world). Reports errors to diags.
std::optional<RankSelector> parse_rank_selector(const YAML::Node& node, int world,
                                                const std::string& file, Diagnostics& diags);

struct Param {
  std::string name;
  Location where;
  Distribution value;
};

struct Strategy {
  std::string name;
  Location where;
  std::string summary;
  std::map<std::string, YAML::Node> slots;  // slot name -> step list
};

// A per-run bound on a metric (checks: {metric: NAME, min: X, max: Y}); a run that did not
// record the metric fails it too.
struct MetricCheck {
  std::string metric;
  Location where;
  std::optional<double> min, max;
};

// A bound on a statistic of a metric over a strategy's runs
// (expect: S: {metric: {name: NAME, stat: p50|p90|p99|max|mean, min: X, max: Y}}).
struct MetricExpectation {
  std::string metric;
  std::string stat = "p50";
  std::optional<double> min, max;
};

// What a strategy is expected to do over the scenario's seeds (a regression test).
struct Expectation {
  std::string strategy;
  Location where;
  std::optional<bool> fails;        // true: fails in at least one seed
  std::optional<bool> never_fails;  // true: fails in no seed
  std::optional<double> failure_rate_min;
  std::optional<double> failure_rate_max;
  std::vector<MetricExpectation> metrics;
};

struct Limits {
  kernel::Time time = 24 * kernel::kHour;  // virtual time per run
  std::uint64_t events = 50'000'000;        // events per run
};

struct Scenario {
  std::string file;
  std::string name;
  std::string summary;
  std::string source;
  int ranks = 1;
  int seeds = 100;
  Limits limits;
  std::map<std::string, Param> params;
  YAML::Node platform;  // for the models; kept as written
  YAML::Node program;   // a step list
  std::vector<Strategy> strategies;  // in file order
  std::vector<std::string> checks;   // no_deadlock is always on
  std::vector<MetricCheck> metric_checks;
  std::vector<Expectation> expect;
  std::vector<std::string> slot_names;  // every slot the program uses, in order of appearance

  const Strategy* strategy(const std::string& name) const;
};

// Loads and validates `path`. Returns nullopt when any error was reported to `diags`.
std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& diags);
// The same from text (for tests and generated scenarios); `file` names it in errors.
std::optional<Scenario> load_scenario_text(const std::string& text, const std::string& file,
                                           Diagnostics& diags);

// Applies one command-line override "KEY=VALUE" to a loaded scenario, before it is compiled.
// Keys: ranks, seeds, limits.time, limits.events, params.NAME (an existing param; VALUE is a
// quantity or a YAML distribution such as "{uniform: {min: 1s, max: 2s}}"). Errors are reported
// at the location "--set KEY" and say what was expected; returns false on error.
bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags);

// Every "${name}" in `text`; reports names that are neither params nor rank/world.
void check_references(const std::string& text, const Location& where,
                      const std::map<std::string, Param>& params, Diagnostics& diags);

}  // namespace racesim::scenario
