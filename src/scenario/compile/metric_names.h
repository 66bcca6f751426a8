// The metrics a compiled program can record, known before it runs: what makes a counter 0 in a
// run that never adds to it (instead of absent, which would average it over only the runs that
// happened to record it), and what `metrics: {of: ...}`, `checks: {metric: ...}` and
// `expect: {metric: ...}` may name (a typo is a located error, not a metric that never appears).
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace racesim::scenario {

struct MetricNames {
  // Totals a run adds to (count: NAME, loads, faults.NAME, fs.MOUNT.meta_ops, dynamo.compiles,
  // ...): 0 in every run that does not add to them.
  std::set<std::string, std::less<>> counters;
  // Per-rank samples (a mark NAME asked for records NAME_s; record: {series: NAME}): the run's metric NAME
  // is their maximum, absent in a run where no rank sampled it; `metrics:` derives statistics.
  std::set<std::string, std::less<>> series;
  // Derived metrics (`metrics:` NAME), absent where their series has no sample, except count and
  // sum, which are 0.
  std::set<std::string, std::less<>> derived;
  // Every mark the program sets (by name, as each rank resolves it), whether or not it records
  // NAME_s: what `between:` may name, and what a misspelt series is compared with.
  std::set<std::string, std::less<>> marks;

  bool knows(std::string_view name) const {
    return counters.count(name) || series.count(name) || derived.count(name) || name == "makespan_s";
  }
  // The known name nearest to `name` (at most 3 edits, or sharing its last dotted part), or "";
  // a mark's NAME_s counts as known here (the scenario may ask for it).
  std::string closest(std::string_view name) const;
  // "makespan_s, loads, ..." (at most `limit` names, then "and N more").
  std::string list(std::size_t limit = 12) const;
};

}  // namespace racesim::scenario
