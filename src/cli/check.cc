// racesim check FILE...: run each scenario's expectations (or judge them on stored results with
// --results) and say PASS, FAIL or SKIP for each; exit 1 when any fails. --junit writes JUnit XML,
// --report the reports `racesim report` writes, from the same runs. --determinism runs the
// determinism guard instead (determinism.h).
#include <algorithm>
#include <iostream>
#include <memory>

#include "src/cli/command.h"
#include "src/cli/determinism.h"
#include "src/cli/options.h"
#include "src/cli/scenario_results.h"
#include "src/report/junit.h"

namespace racesim::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> files, points, strategies, results_dirs;
  std::string junit_file, report_dir;
  bool ci = false, determinism = false;
  CommonOptions common;
};

int check_command(const CheckOptions& c) {
  if (c.determinism) {
    std::vector<std::string> refused;
    if (!c.results_dirs.empty()) refused.push_back("--results");
    if (!c.report_dir.empty()) refused.push_back("--report");
    if (!c.common.shard.empty()) refused.push_back("--shard");
    if (!refuse_flags("check --determinism runs each seed twice and compares the runs", refused)) return kExitUsage;
    return check_determinism_command({c.files, c.points, c.strategies, c.ci, c.junit_file, c.common});
  }
  if (!c.report_dir.empty() && !stems_distinct(c.files)) return kExitUsage;
  if (!c.results_dirs.empty()) {
    if (c.files.size() != 1) {
      std::cerr << "racesim: check --results judges one scenario file's stored results; " << c.files.size()
                << " files were given\n";
      return kExitUsage;
    }
    std::vector<std::string> given;
    if (c.ci) given.push_back("--ci");
    if (!c.points.empty()) given.push_back("--point");
    if (!c.strategies.empty()) given.push_back("--strategy");
    const auto common = c.common.run_choices_given();
    given.insert(given.end(), common.begin(), common.end());
    if (!refuse_run_choices("check --results", "judges", given)) return kExitUsage;
  }
  Overrides overrides;
  if (!read_overrides(c.common.overrides, overrides)) return kExitUsage;
  int passed = 0, failed = 0, skipped = 0;
  std::vector<report::JUnitCase> cases;
  std::vector<std::unique_ptr<ScenarioResults>> reports;
  for (const auto& file : c.files) {
    auto r = std::make_unique<ScenarioResults>();
    CommonOptions o = c.common;
    if (!c.results_dirs.empty()) {
      if (!read_scenario_results(file, c.results_dirs, "check --results", false, *r)) return kExitUsage;
    } else {
      r->study = load_study(file, c.strategies, overrides, c.points);
    }
    // --ci: the scenario's own subset for regression suites (its `ci:` section).
    if (c.ci && r->study) {
      const scenario::Scenario& sc = r->study->scenario;
      // The scenario's ci seeds cap --seeds too (a sanitizer tree asks for fewer of every scenario).
      if (sc.ci_seeds > 0) {
        const auto ci_seeds = static_cast<std::uint64_t>(sc.ci_seeds);
        o.seeds = o.seeds == 0 ? ci_seeds : std::min(o.seeds, ci_seeds);
      }
      if (!sc.ci_points.empty() && c.points.empty()) r->study = load_study(file, c.strategies, overrides, sc.ci_points);
    }
    if (!r->study) {
      std::cout << "FAIL " << file << ": the scenario does not load (errors above)\n";
      cases.push_back({file, "loads", "the scenario does not load"});
      ++failed;
      continue;
    }
    if (r->study->scenario.expect.empty()) {
      std::cout << "note " << file << ": no expectations to check\n";
      if (c.report_dir.empty()) continue;  // nothing to run it for
    }
    if (c.results_dirs.empty() && !run_scenario(file, o, *r)) return kExitUsage;
    for (const auto& v : r->input.verdicts) {
      const std::string who = v.point.empty() ? v.strategy : v.strategy + " @ " + v.point;
      std::cout << (v.skipped ? "SKIP " : v.passed ? "PASS " : "FAIL ") << file << " " << who << " " << v.expectation
                << ": " << v.detail << "\n";
      if (v.skipped) {
        ++skipped;
        cases.push_back({file, who + " " + v.expectation, v.detail, true});
        continue;
      }
      (v.passed ? passed : failed)++;
      cases.push_back({file, who + " " + v.expectation, v.passed ? "" : v.detail});
    }
    if (!c.report_dir.empty()) reports.push_back(std::move(r));
  }
  if (!c.junit_file.empty() && !write_file_atomically(c.junit_file, report::junit_xml(cases))) return kExitUsage;
  if (!c.report_dir.empty() && !write_reports(reports, c.report_dir)) return kExitUsage;
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped > 0) std::cout << ", " << skipped << " not run (points or strategies not selected)";
  std::cout << "\n";
  // A selection that judged nothing is not a pass.
  if (passed == 0 && failed == 0 && skipped > 0) {
    std::cout << "racesim: check: no expectation was judged: select the points and strategies they are at\n";
    return kExitFailed;
  }
  return failed ? kExitFailed : kExitOk;
}

}  // namespace

Command add_check_command(CLI::App& parent) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = parent.add_subcommand("check", "run every scenario's expectations (exit 1 if any fails)");
  cmd->add_option("files", o->files, "scenario files")->required();
  cmd->add_option("--junit", o->junit_file, "also write the results as JUnit XML here");
  cmd->add_option("--point", o->points,
                  "only these sweep points, as run --point takes them (repeatable; with several files, each must "
                  "have them)");
  cmd->add_option("--strategy,-s", o->strategies,
                  "only these strategies (repeatable); expectations of the others are reported as not run");
  cmd->add_flag("--ci", o->ci,
                "run each scenario's `ci:` subset (its points and seeds for regression suites) where it has one");
  cmd->add_option("--report", o->report_dir, "also write the reports `racesim report` writes, from the same runs, here");
  cmd->add_option("--results", o->results_dirs,
                  "judge the runs stored in these result directories (run --out DIR, or the shards of one "
                  "run: run --shard I/N --out DIR) instead of running: one scenario file, the one they were run "
                  "from (repeatable)");
  cmd->add_flag("--determinism", o->determinism,
                "instead of the expectations, run each seed twice (on two threads) and check the runs are the same, "
                "event for event; names where they first differ (--seeds: how many, default 2)");
  add_common_options(cmd, o->common);
  return {cmd, [o] { return check_command(*o); }};
}

}  // namespace racesim::cli
