// A scenario, as the loader (loader.h) builds it from a file: params, platform, program,
// strategies, faults, checks, metrics, sweep and expectations (see scenarios/README.md for the
// schema). Steps, the platform, fault targets and arguments are located values (value.h), read
// once from the file; the compiler (compiler.h) resolves them per strategy and sweep point, where
// each primitive checks its own arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/scenario/file/value.h"

#include "sim/kernel/time.h"
#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/distribution.h"
#include "src/scenario/language/rank_selector.h"

namespace racesim::scenario {


// A param (params: NAME: VALUE): a quantity or a distribution (`value`), a text ("/cache/run1":
// `text`), or an expression over other params ("${steps * 2}": `expr`, the source inside ${},
// evaluated when the program is compiled, so --set on the params it uses carries over).
struct Param {
  std::string name;
  Location where;
  Distribution value;
  std::optional<std::string> text;
  std::optional<std::string> expr;
};

// A reusable step list (define: NAME: {args: [A, B], do: [steps]}, or NAME: [steps]), run by a
// `use: {name: NAME, A: VALUE, B: VALUE}` step; its args are names in its steps' expressions.
struct Definition {
  std::string name;
  Location where;
  std::vector<std::string> args;
  Value body;  // the step list
};

struct Strategy {
  std::string name;
  Location where;
  std::string summary;
  std::map<std::string, Value> slots;  // slot name -> step list
};

// A per-run bound on a metric (checks: {metric: NAME, min: X, max: Y}); a run that did not
// record the metric fails it too.
struct MetricCheck {
  std::string metric;
  Location where;
  std::optional<double> min, max;
};

// A bound on a statistic of a metric over a strategy's runs
// (expect: S: {metric: {name: NAME, stat: p50|p90|p99|max|mean, min: X, max: Y}}), or, with
// ratio_to: OTHER, of the per-seed ratio of S's metric to OTHER's on the same seeds (paired).
struct MetricExpectation {
  std::string metric;
  std::string stat = "p50";
  std::optional<double> min, max;
  Location where = {};  // of the name
  std::string ratio_to = {};  // another strategy: the bound is on S / OTHER, seed by seed
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
  Value on;
  double probability = 1;
  // Where an armed fault acts (kernel::ActiveFault::set_firing): at each site it could, with
  // probability `fires`; at most `times` sites (0: no limit).
  double fires = 1;
  std::uint64_t times = 0;
  // Every key other than name, kind, on, probability, fires and times, with its value, in the
  // file's order.
  std::vector<std::pair<Value, Value>> args;
  // Sets argument `key` (an override): replaces its value, or adds it.
  void set_arg(const std::string& key, Value value);
  // The value of argument `key`, or an undefined node.
  Value arg(const std::string& key) const;
  // Sets one of probability, fires and times from `value`: false (and an error at `where`) when
  // the value is not one it takes. REQUIRES: `field` is one of the three (is_level_field).
  bool set_level(const std::string& field, const Value& value, const Location& where, Diagnostics& diags);
  static bool is_level_field(const std::string& field) {
    return field == "probability" || field == "fires" || field == "times";
  }
  // `on` as reports print it, at `world` ranks: "all", "[1, 2, 3]", "all, mount shared".
  std::string describe_on(int world) const;
};

// A per-run metric derived from a series the run recorded (metrics: NAME: {of: SERIES, stat: S}),
// or from the durations between two marks (metrics: NAME: {between: [FROM, TO], stat: S}: each
// rank's k-th TO minus its k-th FROM). Series are recorded by steps and models: a mark NAME
// records NAME_s for every rank that reaches it, when the scenario names it (or says metric: true); counters add up (compiles, bytes_written, ...).
struct MetricDef {
  std::string name;
  Location where;
  std::string of;                    // or
  std::vector<std::string> between;  // two mark names
  Location of_where;
  std::string stat;  // min, max, mean, sum, count, p50, p90, p99
};

// One axis of the sweep (sweep: KEY: [values]); KEY is any key --set accepts.
struct SweepAxis {
  std::string key;
  Location where;
  std::vector<Value> values;
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

// The most seeds a scenario or a run may ask for.
inline constexpr int kMaxSeeds = 10'000'000;

struct Limits {
  kernel::Time time = 24 * kernel::kHour;  // virtual time per run
  std::uint64_t events = 50'000'000;        // events per run
};

struct Scenario {
  std::string file;  // the path it was read from (errors while loading and compiling name it)
  // How what a run reports names a place in the scenario (its diagnoses, its trace): `NAME.yaml`,
  // by its `name:`, not by the file it was read from, so the same scenario under another file
  // name (a copy, a symlink) gives the same results, byte for byte.
  Location run_place(const Location& where) const { return {name + ".yaml", where.line, where.column}; }
  // 16 hex digits, a 64-bit FNV-1a hash of the file's bytes: results name what they ran, so runs
  // of an edited file never merge with runs of the old one (report/experiment.h).
  std::string content_hash;
  std::string name;
  std::string summary;
  std::string source;
  int ranks = 1;
  int seeds = 100;
  // `ci: {points: [FILTER, ...], seeds: N}`: what `check --ci` runs of a scenario too large for a
  // regression suite (its full verification is run by hand): only the points the filters (as
  // `run --point` takes them) match, on N seeds (at most; --seeds may ask for fewer). Empty
  // points: every point; seeds 0: `seeds`.
  std::vector<std::string> ci_points;
  int ci_seeds = 0;
  Limits limits;
  std::map<std::string, Param> params;
  Value platform;  // for the models; kept as written
  Value program;   // a step list
  std::map<std::string, Definition> defines;
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

  // What an override changed that the user should hear of, as one line each ("--set KEY=V pins
  // sweep axis KEY (values: a, b)"); the command line prints them when it loads the scenario.
  std::vector<std::string> notes;

  // Where each value set by --set or a sweep point came from, by key ("platform.nfs.latency",
  // "faults.stall.duration"), so errors found later name the override, not the file.
  std::map<std::string, Location> overridden;

  const Strategy* strategy(const std::string& name) const;
  std::vector<std::string> strategy_names() const;  // in file order
  // The location to report for the value at `key`: the override's, or `node`'s in the file.
  Location where(const std::string& key, const Value& node) const;
};

}  // namespace racesim::scenario
