// `racesim report`: per scenario, a Markdown page with the comparison tables, the verdicts of its
// expectations and charts drawn by gnuplot (SVG), plus a CSV of the aggregates. Every number is
// printed with a fixed precision and nothing depends on the date, the host or the thread count,
// so the output is byte-for-byte reproducible and CI can compare it with what is committed.
//
// Charts (DIR/<stem>/):
//   failure_rate.svg      failure rate with its 95% Wilson interval, per strategy (and point)
//   makespan_<k>.svg      the makespan's distribution (empirical CDF) per strategy, at point k
//   sweep_<axis>_<m>.svg  failure rate, makespan p50 and each `metrics:` metric's p50 against
//                         each sweep axis, per strategy, one chart (_f<k>) per combination of
//                         the other axes' values; a numeric axis by value (log when it spans
//                         decades), strategies side by side, identical ones named (chart_axis.h)
//   heatmap_failure_rate.svg  with two axes or more: the failure rate over the first two, a
//                         panel per strategy
#pragma once

#include <string>
#include <vector>

#include "src/report/aggregate.h"
#include "src/report/comparison.h"
#include "src/run/runner.h"
#include "src/scenario/language/scenario.h"

namespace racesim::report {

struct ReportInput {
  const scenario::Scenario* scenario = nullptr;
  std::string stem;      // file names: DIR/<stem>.md, DIR/<stem>.csv, DIR/<stem>/*.svg
  std::string setup;     // one line: seeds, policy
  const std::vector<run::RunRecord>* records = nullptr;
  std::vector<StrategySummary> summaries;
  std::vector<Verdict> verdicts;
  // Several experiments side by side (report --results with a simulation and its live runs):
  // the Results section is their comparison (comparison.h) and the CSV its rows; `summaries` and
  // `records` then label each side's points "SIDE" or "SIDE @ POINT", so the failure-rate chart
  // has a series per side and each side gets its makespan chart (no sweep charts).
  const std::vector<Side>* sides = nullptr;
};

// The gnuplot binary: $RACESIM_GNUPLOT, else "gnuplot" on the PATH.
std::string gnuplot_command();

// Writes one scenario's report into `dir`. Returns false with `error` set on failure (gnuplot
// missing or failing, a file that cannot be written).
bool write_report(const ReportInput& in, const std::string& dir, std::string& error);

// DIR/README.md: an index of the scenario reports, in the given order.
bool write_report_index(const std::vector<ReportInput>& reports, const std::string& dir,
                        std::string& error);

}  // namespace racesim::report
