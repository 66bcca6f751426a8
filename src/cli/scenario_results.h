// What check, report and merge share: result files read back as experiments (shards joined,
// different experiments kept apart), one scenario's results either run now or read from stored
// results and judged against its expectations, and its reports written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/cli/options.h"
#include "src/report/comparison.h"
#include "src/report/report.h"

namespace racesim::cli {

// One experiment read from result files: its shards joined, its records in run order.
struct ResultSet {
  report::Experiment experiment;
  std::vector<run::RunRecord> records;
};

// The results in `dirs` (each DIR/results.jsonl, complete: a run, one shard, or a side-by-side
// merge of several experiments) as experiments: the shards of each joined, different experiments
// kept apart, in the order given (report::group_experiments). False, with the error printed
// after `what`, when a file is missing, cut short, or of another scenario file, or a shard is
// missing.
bool read_result_sets(const std::vector<std::string>& dirs, const std::string& what, std::vector<ResultSet>& sets);

// The sides of a comparison, one per experiment, labelled apart.
std::vector<report::Side> sides_of(const std::vector<ResultSet>& sets);

// Stored results were run as they were: false, saying which, when `given` (the options that
// choose runs to make) is not empty. `what` is the command ("check --results"), `verb` what it
// does with the runs ("judges").
bool refuse_run_choices(const std::string& what, const std::string& verb, const std::vector<std::string>& given);

// One scenario file's results for `check` and `report`: its study, its runs, their summaries and
// the expectations' verdicts; `input` is what its report is written from.
struct ScenarioResults {
  std::unique_ptr<scenario::Study> study;
  std::vector<run::RunRecord> records;
  std::vector<report::Side> sides;  // several experiments from stored results (report --results)
  report::ReportInput input;
};

// Fills `r` for `file` from stored results in `dirs` instead of running: the scenario is
// compiled with the results' own overrides, and must be the file they were run from (its content
// hash). Several experiments (a simulation and its live runs) are allowed only `side_by_side`
// (report): their comparison, with no verdicts. False, with the reason printed, otherwise.
bool read_scenario_results(const std::string& file, const std::vector<std::string>& dirs, const std::string& what,
                           bool side_by_side, ScenarioResults& r);

// Runs the loaded study of `file` (r.study) over the plan `o` gives and fills in the rest of `r`.
// False when the options do not fit it (a usage error; printed).
bool run_scenario(const std::string& file, const CommonOptions& o, ScenarioResults& r);

// Reports are named by the file's stem: false, printed, when two files share one.
bool stems_distinct(const std::vector<std::string>& files);

// DIR/<stem>.md (with its charts and CSV) for every scenario, then DIR/README.md. False, printed.
bool write_reports(const std::vector<std::unique_ptr<ScenarioResults>>& results, const std::string& dir);

}  // namespace racesim::cli
