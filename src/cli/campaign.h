// A campaign: the runs of one experiment, kept as they finish (--out DIR), finished after an
// interruption (--resume DIR), and stopped by SIGINT or SIGTERM saying what was kept and how to
// run the rest. `run` makes its runs in the simulation and `live` on real processes; both go
// through this, so a results log, a resume and an interrupt mean the same in each.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/cli/command.h"
#include "src/cli/options.h"
#include "src/report/aggregate.h"
#include "src/report/experiment.h"
#include "src/report/results_file.h"
#include "src/report/results_log.h"

namespace racesim::cli {

// What identifies the results of `study` run with `overrides` on `plan` (report/experiment.h).
report::Experiment experiment_of(const scenario::Study& study, const Overrides& overrides, const run::Plan& plan);

class Campaign {
 public:
  // `command` names the subcommand in messages ("" for run, "live: " for live).
  Campaign(std::string command, report::Experiment experiment);
  Campaign(const Campaign&) = delete;
  Campaign& operator=(const Campaign&) = delete;

  // Opens the results log: afresh in `out_dir`, continued from `resume_dir` (its records are then
  // kept()), or none when both are empty; then catches SIGINT and SIGTERM. False, with the error
  // printed, when the log cannot be started or resumed (another experiment, a damaged file).
  bool open(const std::string& out_dir, const std::string& resume_dir);
  const report::Experiment& experiment() const { return experiment_; }
  // The records --resume found: runs not to make again.
  const std::vector<run::RunRecord>& kept() const { return kept_; }
  bool logging() const { return !dir_.empty(); }
  // Keeps one finished run's record in the log (safe from several threads at once). False once a
  // write failed: the campaign then stops.
  bool keep(const run::RunRecord& r);
  // Whether runs should stop starting: a signal arrived, or a write failed.
  bool stopping() const;

  // After the runs, with the records of the runs made: when the campaign was interrupted or a
  // write failed, says so, what the log keeps and how to run the rest, and returns the exit code
  // (128 + the signal, or 2). Otherwise adds the kept records, puts all in run order and returns
  // nullopt (or 3, an internal error, when they do not fit the experiment).
  std::optional<int> collect(std::vector<run::RunRecord>& records);
  // Writes the finished log (results.jsonl whole, summary.csv, report.md) from the summaries of
  // every run. False, with the error printed.
  bool finish(const std::vector<report::StrategySummary>& summaries);

 private:
  std::string command_;
  report::Experiment experiment_;
  report::ResultsLog log_;
  std::string dir_;  // the log's directory ("" without one)
  std::vector<run::RunRecord> kept_;
  std::mutex write_error_mutex_;
  std::string write_error_;  // the first failed write
  std::atomic<bool> write_failed_{false};
};

}  // namespace racesim::cli
