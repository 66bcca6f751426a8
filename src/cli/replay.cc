// racesim replay FILE -s STRATEGY --seed S: one run, explained (outcome, diagnosis, deadlock
// report, metrics), with its Chrome trace written on request. With --choices TAPE it replays a
// choice file (one `explore` wrote, or --record) exactly: its seed, overrides, point and every
// choice, and says where the run left the tape if it does; --record writes the run's own tape.
#include <iostream>
#include <memory>
#include <sstream>

#include "src/cli/choices.h"
#include "src/cli/command.h"
#include "src/cli/options.h"
#include "src/report/number_text.h"

namespace racesim::cli {
namespace {

struct ReplayOptions {
  std::string file, strategy, policy = "fifo", trace_file, point, choices_file, record_file;
  std::uint64_t seed = 0;
  OverrideOptions overrides;
  CLI::Option* seed_option = nullptr;
  CLI::Option* policy_option = nullptr;
};

int replay_command(const ReplayOptions& o) {
  std::optional<search::ChoiceFile> tape;
  Overrides overrides;
  std::string strategy = o.strategy, point = o.point;
  std::uint64_t seed = o.seed;
  if (!o.choices_file.empty()) {
    // The choice file says what it is a tape of; flags that would make it another run are refused.
    tape = read_choice_file_for("replay", o.choices_file, o.seed_option->count() > 0,
                               o.policy_option->count() > 0, !o.overrides.empty());
    if (!tape) return kExitUsage;
    overrides = overrides_of(tape->overrides);
    if (strategy.empty()) strategy = tape->strategy;
    if (point.empty()) point = tape->point;
    seed = tape->seed;
  } else {
    if (strategy.empty() || o.seed_option->count() == 0) {
      std::cerr << "racesim: replay needs --strategy and --seed, or --choices FILE\n";
      return kExitUsage;
    }
    if (!read_overrides(o.overrides, overrides)) return kExitUsage;
  }
  auto study = load_study(o.file, {strategy}, overrides, point.empty() ? std::vector<std::string>{} : std::vector<std::string>{point});
  if (!study || !runs_fit_in_memory(*study, 1)) return kExitUsage;
  const scenario::CompiledProgram& program = *study->programs[0];
  run::RunOptions opts;
  std::string made_by;
  if (tape) {
    auto replay = replay_options(*tape, o.choices_file, program);
    if (!replay) return kExitUsage;
    opts = std::move(*replay);
    made_by = tape->made_by;
  } else {
    auto policy = kernel::PolicySpec::parse(o.policy);
    if (!policy) {
      std::cerr << "racesim: --policy: " << policy.message() << "\n";
      return kExitUsage;
    }
    opts.policy = *policy;
    made_by = policy->to_string();
  }
  opts.record_choices = !o.record_file.empty();
  std::ostringstream trace;  // written whole once the run is done
  std::string deadlock;
  const auto rec = run::run_one(program, seed, opts, o.trace_file.empty() ? nullptr : &trace, &deadlock);
  const std::string& at = program.scenario->point;
  std::cout << study->scenario.name << " / " << program.strategy->name << (at.empty() ? "" : " @ " + at) << " / seed "
            << seed << (tape ? " / choices " + o.choices_file : "") << ": " << run::to_string(rec.outcome) << " at "
            << kernel::format_duration(rec.makespan) << " (" << rec.events << " events, trace hash "
            << run::trace_hash_text(rec.trace_hash) << ")\n";
  if (!rec.diagnosis.empty()) std::cout << rec.check << ": " << rec.diagnosis << "\n";
  if (!deadlock.empty()) std::cout << "\n" << deadlock;
  for (const auto& [name, v] : rec.metrics) std::cout << "  " << name << " = " << report::metric_exact_text(name, v) << "\n";
  if (!o.trace_file.empty()) {
    if (!write_file_atomically(o.trace_file, trace.str())) return kExitUsage;
    std::cout << "Chrome trace written to " << o.trace_file << "\n";
  }
  if (!o.record_file.empty()) {
    const auto file = choice_file_of(program, overrides.texts, rec, opts, made_by);
    if (!write_file_atomically(o.record_file, search::format_choice_file(file))) return kExitUsage;
    std::cout << "choice file written to " << o.record_file << " (" << rec.tape.size()
              << " choices: " << search::count_by_kind(rec.tape) << ")\n";
  }
  if (tape) {
    // A replay that did not follow its tape is not the run the file recorded: say so, loudly.
    if (!rec.replay_divergence.empty()) {
      std::cerr << "racesim: " << o.choices_file << ": the run left its tape: " << rec.replay_divergence << "\n";
      return kExitUsage;
    }
    if (run::trace_hash_text(rec.trace_hash) != tape->trace_hash) {
      std::cerr << "racesim: " << o.choices_file << ": the run followed its tape but its trace hash is "
                << run::trace_hash_text(rec.trace_hash) << ", the recorded run's " << tape->trace_hash
                << " (a nondeterministic model: racesim check --determinism names where)\n";
      return kExitUsage;
    }
  }
  return run::failed(rec.outcome) ? kExitFailed : kExitOk;
}

}  // namespace

Command add_replay_command(CLI::App& parent) {
  auto o = std::make_shared<ReplayOptions>();
  auto* cmd = parent.add_subcommand("replay", "run one seed or choice file, explain the outcome, write a trace");
  cmd->add_option("file", o->file, "scenario file")->required();
  cmd->add_option("--strategy,-s", o->strategy, "strategy (with --choices: the file's)");
  o->seed_option = add_seed_option(cmd, "--seed", o->seed, "seed");
  o->policy_option = cmd->add_option("--policy", o->policy, std::string("schedule policy: ") + kPolicyValues + " (default fifo)");
  cmd->add_option("--choices", o->choices_file,
                  "replay this choice file (explore writes them): its seed, overrides, point and every choice");
  cmd->add_option("--record", o->record_file, "write the run's choices here as a choice file");
  cmd->add_option("--trace", o->trace_file, "write a Chrome trace (JSON) here");
  add_override_options(cmd, o->overrides);
  cmd->add_option("--point", o->point,
                  "the sweep point, by its label as run prints it or a KEY=VALUE filter (default: the first)");
  return {cmd, [o] { return replay_command(*o); }};
}

}  // namespace racesim::cli
