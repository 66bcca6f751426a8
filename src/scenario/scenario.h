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

// A fault of the fault plan (faults: [...]): its kind, the ranks it may hit, how likely it is to
// be active per run and rank (BUGGIFY-style activation drawn from the seeded stream
// "fault/NAME"), and the kind's own arguments, which the fault registry checks when the program
// is compiled (program.h).
struct FaultSpec {
  std::string name;  // unique in the scenario; defaults to the kind
  std::string kind;
  Location where;
  // As written: a rank selector, or {ranks: SELECTOR, mount: M, comm: C, link: L}; resolved when
  // the program is compiled, against the ranks and platform of that point (so `others` follows
  // --set ranks). Undefined: every rank.
  YAML::Node on;
  double probability = 1;
  YAML::Node args;  // a map: every key other than name, kind, on and probability
  // `on` as reports print it, at `world` ranks: "all", "[1, 2, 3]", "all, mount shared".
  std::string describe_on(int world) const;
};

// A per-run metric derived from a series the run recorded (metrics: NAME: {of: SERIES, stat: S}).
// Series are recorded by steps and models: a mark NAME records NAME_s for every rank that
// reaches it; counters add up (compiles, bytes_written, ...).
struct MetricDef {
  std::string name;
  Location where;
  std::string of;
  std::string stat;  // min, max, mean, sum, count, p50, p90, p99
};

// One axis of the sweep (sweep: KEY: [values]); KEY is any key --set accepts.
struct SweepAxis {
  std::string key;
  Location where;
  std::vector<YAML::Node> values;
  std::vector<std::string> labels;  // each value as text: "1GiB", "{uniform: {min: 1s, max: 2s}}"
};

// What a strategy is expected to do over the scenario's seeds (a regression test).
struct Expectation {
  std::string strategy;
  Location where;
  // Only at the sweep points whose axes have these values (axis key, value label); empty: at
  // every point, each point judged on its own.
  std::vector<std::pair<std::string, std::string>> at;
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
  std::vector<FaultSpec> faults;
  std::vector<MetricDef> metric_defs;
  std::vector<SweepAxis> sweep;
  std::vector<Expectation> expect;
  // At a sweep point (at_point): its label, "KEY=VALUE KEY=VALUE"; empty without a sweep.
  std::string point;
  std::vector<std::pair<std::string, std::string>> point_values;  // (axis key, value label)
  std::vector<std::string> slot_names;  // every slot the program uses, in order of appearance

  // Where each value set by --set or a sweep point came from, by key ("platform.nfs.latency",
  // "faults.stall.duration"), so errors found later name the override, not the file.
  std::map<std::string, Location> overridden;

  const Strategy* strategy(const std::string& name) const;
  // The location to report for the value at `key`: the override's, or `node`'s in the file.
  Location where(const std::string& key, const YAML::Node& node) const;
};

// Loads and validates `path`. Returns nullopt when any error was reported to `diags`.
std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& diags);
// The same from text (for tests and generated scenarios); `file` names it in errors.
std::optional<Scenario> load_scenario_text(const std::string& text, const std::string& file,
                                           Diagnostics& diags);

// Applies one command-line override "KEY=VALUE" to a loaded scenario, before it is compiled.
// Keys: ranks, seeds, limits.time, limits.events, params.NAME (an existing param; VALUE is a
// quantity or a YAML distribution such as "{uniform: {min: 1s, max: 2s}}"), platform.PATH (an
// existing platform value, by its dotted path), faults.NAME.probability, faults.NAME.on and
// faults.NAME.ARG. Errors are reported at the location "--set KEY" and say what was expected;
// returns false on error.
bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags);
// The same with a parsed value; errors are reported at `where` (a sweep value's position).
bool apply_override(Scenario& sc, const std::string& key, const YAML::Node& value,
                    const Location& where, Diagnostics& diags);

// The points of the sweep: the cartesian product of its axes, first axis slowest. Without a
// sweep, one point with an empty label.
struct SweepPoint {
  std::string label;
  std::vector<std::pair<std::string, std::string>> values;  // (axis key, value label)
  std::vector<std::pair<std::string, YAML::Node>> assignments;
};
std::vector<SweepPoint> sweep_points(const Scenario& sc);
// A deep copy of `sc` with the point's assignments applied (platform and fault arguments are
// cloned, so points never share mutable YAML).
std::optional<Scenario> at_point(const Scenario& sc, const SweepPoint& point, Diagnostics& diags);
// Whether the expectation applies at a point with these axis values.
bool applies_at(const Expectation& e, const std::vector<std::pair<std::string, std::string>>& values);
// A YAML value as one line of text (scalars as written, the rest in flow style).
std::string flow_text(const YAML::Node& node);

// Every "${name}" in `text`; reports names that are neither params nor rank/world.
void check_references(const std::string& text, const Location& where,
                      const std::map<std::string, Param>& params, Diagnostics& diags);

}  // namespace racesim::scenario
