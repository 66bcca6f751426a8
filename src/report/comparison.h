// Results of several experiments of one scenario side by side: a simulation and its live runs
// (`racesim live`), or the model under two calibrations. Each side is summarized on its own
// records (never pooled); per program, the tables give each side's failures and failure rate with
// its 95% Wilson interval, the 95% interval of each later side's difference from the first
// (Newcombe's hybrid score interval: the sides agree when it holds 0), and the p50 of the passed
// runs' makespan and of each metric, with the ratio of each later side's p50 to the first side's
// over the seeds both recorded it (a run cut short by its failure may record a metric on one side
// only: the ratio never compares different sets of runs); and, over the seeds two sides both ran
// (the same seed samples the same values in a simulation and live), how many fail in both, in one
// only, or in neither: where the sides part, seed by seed; and the failed runs by kind (the check
// and where it failed, in terms a model and a live run share: failure_kind.h), each kind's share
// of each side's runs and its difference's interval: where the sides part, by what fails.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "src/report/aggregate.h"
#include "src/report/experiment.h"
#include "src/run/runner.h"

namespace racesim::report {

struct Side {
  std::string label;  // "sim", "live tmpfs", ...; distinct among the sides (label_sides)
  std::string setup;  // one line: how the side was run
  std::vector<StrategySummary> summaries;
  // (point, strategy) -> seed -> whether that run failed.
  std::map<std::pair<std::string, std::string>, std::map<std::uint64_t, bool>> failed_by_seed;
  // (point, strategy) -> measure ("": the makespan of a passed run; else a metric) -> seed -> the
  // run's value, where the run recorded it.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::map<std::uint64_t, double>>> value_by_seed;
  // (point, strategy) -> what failed (failure_kind.h) -> how many of its runs failed so.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::uint64_t>> failures_by_kind;
};

// A side from one experiment and its records (in run order).
Side side_of(const Experiment& experiment, const std::vector<run::RunRecord>& records);
// Makes the labels distinct: the second "sim" becomes "sim #2", and so on.
void label_sides(std::vector<Side>& sides);

// The 95% interval of p_b - p_a (proportions of failures fa of na and fb of nb), Newcombe's
// method 10 (from the two Wilson intervals). REQUIRES: na > 0 and nb > 0.
Interval difference_interval(std::uint64_t fa, std::uint64_t na, std::uint64_t fb, std::uint64_t nb);

// The CPU time of a mount's reads and writes (fs.MOUNT.read_cpu_s, fs.MOUNT.write_cpu_s) where
// every side recorded it in some run, in name order: a model's charges to its cores beside a live
// run's thread clocks (sim/storage/files.h, FsStats), for the medians' table.
std::vector<std::string> cpu_measures_of_every_side(const std::vector<Side>& sides);

// The most kinds of failure the table of a program lists; the rest are summed in one row.
inline constexpr std::size_t kFailureKindsListed = 8;

// The comparison as Markdown tables (failure rates and differences; runs paired by seed; the
// failed runs by kind, at most kFailureKindsListed a program, most frequent first; medians
// of the makespan and of `metrics`, the scenario's metric names, and their ratios over the seeds
// both sides recorded), then a list of the sides' setups.
std::string format_comparison_markdown(const std::vector<Side>& sides, const std::vector<std::string>& metrics);
// As CSV: one row per (point, strategy, side), in base units; the difference columns are the
// side's difference from the first side (empty on the first side's rows).
std::string format_comparison_csv(const std::vector<Side>& sides, const std::vector<std::string>& metrics);

}  // namespace racesim::report
