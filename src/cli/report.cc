// racesim report FILE... --out DIR: run each scenario (or read its stored results with --results)
// and write a Markdown report per scenario with charts (gnuplot SVG) and CSV, and an index.
#include <iostream>
#include <memory>

#include "src/cli/command.h"
#include "src/cli/options.h"
#include "src/cli/scenario_results.h"

namespace racesim::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> files, results_dirs;
  std::vector<std::string> strategies, points;  // -s, --point: only these (when running)
  std::string out;
  CommonOptions common;
};

int report_command(const ReportOptions& o) {
  if (!stems_distinct(o.files)) return kExitUsage;
  std::vector<std::unique_ptr<ScenarioResults>> results;
  if (!o.results_dirs.empty()) {
    if (o.files.size() != 1) {
      std::cerr << "racesim: report --results reports one scenario file's stored results; " << o.files.size()
                << " files were given\n";
      return kExitUsage;
    }
    std::vector<std::string> given = o.common.run_choices_given();
    if (!o.strategies.empty()) given.push_back("--strategy");
    if (!o.points.empty()) given.push_back("--point");
    if (!refuse_run_choices("report --results", "reports", given)) return kExitUsage;
    if (!output_is_no_input("report --results", o.out, o.results_dirs)) return kExitUsage;
    auto r = std::make_unique<ScenarioResults>();
    if (!read_scenario_results(o.files[0], o.results_dirs, "report --results", true, *r)) return kExitUsage;
    results.push_back(std::move(r));
    return write_reports(results, o.out) ? kExitOk : kExitUsage;
  }
  Overrides overrides;
  if (!read_overrides(o.common.overrides, overrides)) return kExitUsage;
  for (const auto& file : o.files) {
    auto r = std::make_unique<ScenarioResults>();
    r->study = load_study(file, o.strategies, overrides, o.points);
    if (!r->study || !run_scenario(file, o.common, *r)) return kExitUsage;
    results.push_back(std::move(r));
  }
  return write_reports(results, o.out) ? kExitOk : kExitUsage;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd =
      parent.add_subcommand("report", "run scenarios and write Markdown reports with charts (gnuplot) and CSV");
  cmd->add_option("files", o->files, "scenario files")->required();
  cmd->add_option("--out", o->out, "directory for the reports")->required();
  cmd->add_option("--results", o->results_dirs,
                  "report stored results (DIR/results.jsonl) instead of running; several experiments (a "
                  "simulation and its live runs, a merge of them) are put side by side (repeatable)");
  cmd->add_option("--strategy,-s", o->strategies, "only these strategies (repeatable; each file must define them)");
  cmd->add_option("--point", o->points,
                  "only these sweep points: a label as run prints it, or KEY=VALUE filters (repeatable)");
  add_common_options(cmd, o->common);
  return {cmd, [o] { return report_command(*o); }};
}

}  // namespace racesim::cli
