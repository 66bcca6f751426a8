// Aggregation of run records: failure rates with 95% Wilson intervals, percentiles of each
// metric, ratios to a baseline strategy, and `expect` verdicts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/run/runner.h"
#include "src/scenario/language/scenario.h"

namespace racesim::report {

struct Interval {
  double lo = 0;
  double hi = 0;
};
// Wilson score interval for `failures` out of `n` (95% by default). n == 0 gives [0, 1].
Interval wilson_interval(std::uint64_t failures, std::uint64_t n, double z = 1.959963984540054);
// Linear-interpolation percentile (the "type 7" definition), p in [0, 100]. REQUIRES: non-empty.
double percentile(std::vector<double> values, double p);

struct Quantiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  std::uint64_t n = 0;  // how many values (runs) they are over
};
Quantiles quantiles(const std::vector<double>& values);

struct StrategySummary {
  std::string strategy;
  std::string point;  // the sweep point's label ("" without a sweep)
  std::uint64_t runs = 0;
  std::uint64_t failures = 0;
  std::map<std::string, std::uint64_t> outcomes;  // outcome name -> count
  std::map<std::string, std::uint64_t> failed_checks;  // the check a failed run failed -> count
  double failure_rate = 0;
  Interval failure_ci;
  // Over the runs that recorded the metric (Quantiles::n of `runs`: a statistic over fewer than
  // every run is reported with its n, and an expectation on it fails).
  std::map<std::string, Quantiles> metrics;
  // The makespans of the passed runs (n = how many passed): a failed run's makespan is the time
  // it took to fail, which would make a strategy that fails early look fast. All runs' are the
  // metric makespan_s.
  Quantiles makespan_passed;
  // makespan_passed.p50 / the baseline's, where the baseline is the first strategy at the point
  // with a passed run; nullopt when this strategy has none (or no strategy there has).
  std::optional<double> makespan_ratio;
  std::string baseline;  // that strategy ("" when none)
  std::string example_failure;               // the first failing seed's diagnosis
  std::uint64_t example_seed = 0;
};

// One summary per (sweep point, strategy), in the order they appear in `records`; at each point
// the first strategy with a passed run is the baseline for makespan ratios.
std::vector<StrategySummary> summarize(const std::vector<run::RunRecord>& records);

struct Verdict {
  std::string strategy;
  std::string point;
  std::string expectation;  // e.g. "fails", "never_fails", "failure_rate in [0.1, 0.5]"
  bool passed = false;
  std::string detail;       // e.g. "12 of 200 seeds failed (6.0%, 95% CI 3.5%-10.2%)"
  // Not judged: it applies only at sweep points that this selection (--point, --ci) did not run.
  // Neither passed nor failed; reported as not run.
  bool skipped = false;
};
// `records` are the runs the summaries come from, for paired expectations (ratio_to): without
// them, such an expectation fails and says so.
std::vector<Verdict> check_expectations(const scenario::Scenario& sc,
                                        const std::vector<StrategySummary>& summaries,
                                        const std::vector<run::RunRecord>* records = nullptr);

// The comparison table for a terminal (run, live, merge): per point and strategy, runs, failures
// with the rate's interval, the passed runs' makespans, the outcomes and the checks that failed.
std::string format_table(const std::vector<StrategySummary>& summaries);
// Aggregates as a JSON document.
std::string format_json(const std::string& scenario, const std::vector<StrategySummary>& summaries);
// Aggregates as Markdown: a failure-rate and makespan table, example failures, and p50/p99 of
// every other metric. Deterministic (no dates, no hosts), so it can be compared byte for byte.
std::string format_markdown(const std::string& scenario, const std::vector<StrategySummary>& summaries);
// Aggregates as CSV: one row per (point, strategy); with the sweep's axis keys (in order), a
// column per axis holding the point's value; then every metric any strategy recorded, as
// NAME_p50, NAME_p99 and NAME_n (the runs it is over), in base units (seconds, bytes); a cell is
// empty where there is no value.
std::string format_csv(const std::vector<StrategySummary>& summaries, const std::vector<std::string>& axes = {});

}  // namespace racesim::report
