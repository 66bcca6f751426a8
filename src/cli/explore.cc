// racesim explore FILE -s STRATEGY --mode M --budget N|DURATION: searches one strategy's runs for
// a failure (src/search/explore.h), stops at the first (or, with --all, collects one run per
// distinct failure), writes a choice file for each and prints the replay command that reproduces
// it; otherwise says what it covered.
#include <cmath>
#include <iostream>
#include <memory>

#include "src/cli/choices.h"
#include "src/cli/command.h"
#include "src/cli/interrupt.h"
#include "src/cli/options.h"
#include "src/report/number_text.h"
#include "src/search/explore.h"

namespace racesim::cli {
namespace {

struct ExploreCliOptions {
  std::string file, strategy, point, mode = "random", budget = "1000", out;
  std::string shard;  // --shard I/N or auto
  std::uint64_t seed_start = 0;
  int jobs = CommonOptions::default_jobs();
  bool all = false;
  bool no_reduction = false;
  OverrideOptions overrides;
};

// "1000" (runs) or a duration ("30s", "5min"); false, with the error printed, otherwise.
bool parse_budget(const std::string& text, search::ExploreOptions& o) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    if (text.size() > 9 || std::stoull(text) < 1 || std::stoull(text) > search::kMaxBudgetRuns) {
      std::cerr << "racesim: --budget: expected a number of runs from 1 to " << search::kMaxBudgetRuns
                << " or a duration (30s, 5min), got '" << text << "'\n";
      return false;
    }
    o.budget_runs = std::stoull(text);
    return true;
  }
  const auto d = kernel::parse_duration(text);
  if (!d || *d <= 0) {
    std::cerr << "racesim: --budget: expected a number of runs (1000) or a duration (30s, 5min), got '" << text
              << "'" << (d ? "" : " (" + d.message() + ")") << "\n";
    return false;
  }
  o.budget_runs = search::kMaxBudgetRuns;
  o.budget_seconds = kernel::to_seconds(*d);
  return true;
}

// The shell words of the replay command for `choices`.
std::string replay_command_text(const ExploreCliOptions& o, const std::string& choices) {
  return "racesim replay " + o.file + " --choices " + choices;
}

int explore_command(const ExploreCliOptions& o) {
  search::ExploreOptions eo;
  const auto mode = search::Mode::parse(o.mode);
  if (!mode) {
    std::cerr << "racesim: --mode: " << mode.message() << "\n";
    return kExitUsage;
  }
  eo.mode = *mode;
  if (o.no_reduction && eo.mode.kind != search::ModeKind::kExhaustive) {
    std::cerr << "racesim: --no-reduction: only with --mode exhaustive (the other modes sample schedules and "
                 "reduce nothing), got --mode " << o.mode << "\n";
    return kExitUsage;
  }
  eo.reduce = !o.no_reduction;
  if (!parse_budget(o.budget, eo)) return kExitUsage;
  // Run i has seed seed-start + i (exhaustive: every run seed-start). A time budget may make up
  // to kMaxBudgetRuns runs.
  if (eo.mode.kind != search::ModeKind::kExhaustive && !seeds_fit(o.seed_start, eo.budget_runs)) return kExitUsage;
  eo.seed_start = o.seed_start;
  eo.jobs = o.jobs;
  eo.all = o.all;
  if (!o.shard.empty()) {
    if (eo.mode.kind == search::ModeKind::kExhaustive) {
      std::cerr << "racesim: --shard: an exhaustive search walks one tree in order, and its coverage statement is "
                   "of the whole walk; shard random, pct or swarm searches\n";
      return kExitUsage;
    }
    run::Plan plan;
    if (!choose_shard(o.shard, plan)) return kExitUsage;
    eo.shard_index = plan.shard_index;
    eo.shard_count = plan.shard_count;
  }
  Overrides overrides;
  if (!read_overrides(o.overrides, overrides)) return kExitUsage;
  auto study = load_study(o.file, {o.strategy}, overrides,
                          o.point.empty() ? std::vector<std::string>{} : std::vector<std::string>{o.point});
  if (!study || !runs_fit_in_memory(*study, o.jobs)) return kExitUsage;
  const scenario::CompiledProgram& program = *study->programs[0];
  const std::string out = o.out.empty() ? "explore-" + program.strategy->name + ".choices.jsonl" : o.out;
  catch_interrupts();
  eo.stop = &stop_requested();
  const std::string& at = program.scenario->point;
  std::cout << "racesim explore: " << study->scenario.name << " / " << program.strategy->name
            << (at.empty() ? "" : " @ " + at) << ", mode " << eo.mode.to_string() << ", budget "
            << (eo.budget_seconds > 0 ? o.budget : std::to_string(eo.budget_runs) + " runs") << ", seeds from "
            << eo.seed_start << ", " << eo.jobs << " threads"
            << (eo.shard_count > 1 ? ", shard " + std::to_string(eo.shard_index) + "/" + std::to_string(eo.shard_count) +
                                         " (its runs i with i % " + std::to_string(eo.shard_count) + " == " +
                                         std::to_string(eo.shard_index) + ")"
                                   : "")
            << "\n";
  const search::ExploreResult result = search::explore(program, eo);
  const search::Coverage& cov = result.coverage;
  int status = result.findings.empty() ? kExitOk : kExitFailed;
  for (std::size_t n = 0; n < result.findings.size(); ++n) {
    const search::Finding& f = result.findings[n];
    const std::string path = n == 0 ? out : out + "." + std::to_string(n + 1);
    std::string made_by = eo.mode.to_string();
    if (eo.mode.kind == search::ModeKind::kPct) made_by = f.options.policy.to_string();
    const auto file = choice_file_of(program, overrides.texts, f.record, f.options, made_by);
    if (!write_file_atomically(path, search::format_choice_file(file))) return kExitUsage;
    // The finding replays from its file alone, or it is no finding: check before saying so.
    auto replay = replay_options(file, path, program);
    if (!replay) return kExitInternal;
    const run::RunRecord again = run::run_one(program, file.seed, *replay);
    if (!again.replay_divergence.empty() || again.trace_hash != f.record.trace_hash) {
      std::cerr << "racesim: internal error: the failing run " << f.run << " does not replay from " << path << " ("
                << (again.replay_divergence.empty() ? "trace hash " + run::trace_hash_text(again.trace_hash) +
                                                          ", recorded " + run::trace_hash_text(f.record.trace_hash)
                                                    : again.replay_divergence)
                << "): a nondeterministic model\n";
      status = kExitInternal;
    }
    std::cout << "FAILED at run " << f.run + 1 << " (seed " << f.record.seed << "): " << f.record.check << ": "
              << f.record.diagnosis << "\n"
              << "  choice file: " << path << " (" << f.record.tape.size()
              << " choices: " << search::count_by_kind(f.record.tape) << ")\n"
              << "  reproduce:   " << replay_command_text(o, path) << " [--trace trace.json]\n";
  }
  std::cout << (result.findings.empty() ? "no failure in " : "covered ") << cov.runs << " run"
            << (cov.runs == 1 ? "" : "s") << (result.findings.empty() || o.all ? "" : " (up to the first failure)")
            << ": " << cov.distinct_schedules << " distinct schedules (by trace hash); choice points: ";
  for (std::size_t k = 0; k < kernel::kChoiceKinds; ++k) {
    std::cout << (k ? ", " : "") << kernel::to_string(static_cast<kernel::ChoiceKind>(k)) << " " << cov.choices[k];
  }
  std::cout << "\n";
  if (eo.mode.kind == search::ModeKind::kPct) {
    // Burckhardt et al.'s bound for these n and k: 1 / (n k^(d-1)).
    const double bound = static_cast<double>(cov.processes) *
                         std::pow(static_cast<double>(cov.steps_hint), eo.mode.depth - 1);
    std::cout << "pct: depth " << eo.mode.depth << ", " << cov.processes << " processes, " << cov.steps_hint
              << " steps (a fifo run's): a bug of depth " << eo.mode.depth
              << " is found per run with probability >= 1/" << report::num(bound) << "\n";
  }
  if (eo.mode.kind == search::ModeKind::kExhaustive) {
    const std::string bound = "at most " + std::to_string(eo.mode.depth) + " delay" + (eo.mode.depth == 1 ? "" : "s");
    const std::string given = "each draw seed " + std::to_string(eo.seed_start) +
                              "'s or its distribution's low end, median or high end; " +
                              (cov.reduced ? "partial-order reduction: one order of the steps that commute"
                                           : "no partial-order reduction");
    if (cov.exhausted) {
      std::cout << "exhaustive: all " << cov.runs << " schedules with " << bound
                << (cov.reduced ? ", up to the order of steps that commute," : "") << " run ("
                << (result.findings.empty() ? "no failure" : "failures above") << "; " << given << ")\n";
    } else {
      std::cout << "exhaustive: not complete: " << cov.runs << " schedules with " << bound << " run, " << cov.pending
                << " prefixes left to explore" << (cov.frontier_full ? " (the most it keeps: lower the bound)" : "")
                << " (" << given << ")\n";
    }
  }
  if (cov.stopped_by_time) std::cout << "stopped by the time budget " << o.budget << "\n";
  if (cov.interrupted) {
    std::cout << "interrupted after " << cov.runs << " runs\n";
    return 128 + interrupt_signal();
  }
  if (o.all && !result.findings.empty()) {
    std::cout << result.findings.size() << " distinct failure" << (result.findings.size() == 1 ? "" : "s")
              << " (by check and diagnosis with numbers left out)\n";
  }
  return status;
}

}  // namespace

Command add_explore_command(CLI::App& parent) {
  auto o = std::make_shared<ExploreCliOptions>();
  auto* cmd = parent.add_subcommand("explore",
                                    "search one strategy's runs for a failure (random, pct, swarm, exhaustive)");
  cmd->add_option("file", o->file, "scenario file")->required();
  cmd->add_option("--strategy,-s", o->strategy, "strategy")->required();
  cmd->add_option("--mode", o->mode, "random, pct[:DEPTH], swarm or exhaustive[:DELAYS] (default random)");
  cmd->add_option("--budget", o->budget, "runs (1000) or a duration (30s, 5min); default 1000 runs");
  add_seed_option(cmd, "--seed-start", o->seed_start,
                  "the first run's seed (run i: seed-start + i; exhaustive: every run's)");
  cmd->add_option("--jobs,-j", o->jobs, "threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->add_flag("--all", o->all, "go through the budget, keeping one run per distinct failure");
  add_shard_option(cmd, o->shard);
  cmd->add_flag("--no-reduction", o->no_reduction,
                "exhaustive: run every schedule within the bound, also those that only reorder steps that commute");
  cmd->add_option("--out", o->out,
                  "the choice file of the failure found (default explore-STRATEGY.choices.jsonl; with --all, "
                  "FILE.2, FILE.3, ... for the next ones)");
  add_override_options(cmd, o->overrides);
  cmd->add_option("--point", o->point,
                  "the sweep point, by its label as run prints it or a KEY=VALUE filter (default: the first)");
  return {cmd, [o] { return explore_command(*o); }};
}

}  // namespace racesim::cli
