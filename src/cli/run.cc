// racesim run FILE: every strategy (or those chosen) at every sweep point over seeds, compared in
// a table (or JSON, CSV); with --out the results are kept as runs finish, --resume finishes an
// interrupted run.
#include <iostream>
#include <memory>

#include "src/cli/campaign.h"
#include "src/cli/command.h"
#include "src/cli/interrupt.h"
#include "src/cli/options.h"

namespace racesim::cli {
namespace {

struct RunCommandOptions {
  std::string file;
  std::vector<std::string> strategies, points;
  CommonOptions common;
  std::string format = "table", out_dir, resume_dir;
};

int run_command(const RunCommandOptions& o) {
  Overrides overrides;
  if (!read_overrides(o.common.overrides, overrides)) return kExitUsage;
  auto study = load_study(o.file, o.strategies, overrides, o.points);
  if (!study) return kExitUsage;
  run::Plan plan;
  if (!make_plan(o.common, study->scenario, plan) || !fits_in_memory(*study, plan)) return kExitUsage;
  Campaign campaign("", experiment_of(*study, overrides, plan));
  if (!campaign.open(o.out_dir, o.resume_dir)) return kExitUsage;
  const auto index = report::program_index(campaign.experiment());
  for (const auto& r : campaign.kept()) {
    plan.skip.insert({index.at(report::program_label(r.point, r.strategy)), r.seed});
  }
  if (campaign.logging()) plan.on_record = [&](const run::RunRecord& r) { return campaign.keep(r); };
  plan.stop = &stop_requested();
  auto records = run::run_all(study->program_pointers(), plan);
  if (auto code = campaign.collect(records)) return *code;
  const auto summaries = report::summarize(records);
  const std::vector<std::string>& axes = campaign.experiment().axes;
  if (o.format == "json") {
    std::cout << report::format_json(study->scenario.name, summaries);
  } else if (o.format == "csv") {
    std::cout << report::format_csv(summaries, axes);
  } else {
    std::cout << study->scenario.name << ": " << study->scenario.ranks << " ranks, " << plan.seeds << " seeds from "
              << plan.seed_start << ", policy " << plan.options.policy.to_string() << "\n\n"
              << report::format_table(summaries);
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "racesim: cannot write the results to standard output\n";
    return kExitUsage;
  }
  return campaign.finish(summaries) ? kExitOk : kExitUsage;
}

}  // namespace

Command add_run_command(CLI::App& parent) {
  auto o = std::make_shared<RunCommandOptions>();
  auto* cmd = parent.add_subcommand("run", "run every strategy over seeds and compare them");
  cmd->add_option("file", o->file, "scenario file")->required();
  cmd->add_option("--strategy,-s", o->strategies, "only these strategies (repeatable)");
  cmd->add_option("--point", o->points,
                  "only these sweep points: a label as run prints it, or KEY=VALUE filters (repeatable; a point "
                  "matches when it has every filter's value)");
  cmd->add_option("--format", o->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  auto* out = cmd->add_option("--out", o->out_dir,
                              "also write results.jsonl (as runs finish), summary.csv and report.md here");
  cmd->add_option("--resume", o->resume_dir,
                  "finish an interrupted run --out DIR: run only the runs DIR/results.jsonl lacks "
                  "(same scenario and options)")
      ->excludes(out);
  add_common_options(cmd, o->common);
  return {cmd, [o] { return run_command(*o); }};
}

}  // namespace racesim::cli
