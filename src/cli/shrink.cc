// racesim shrink FILE -s STRATEGY (--seed S [--policy P] | --choices F): reduces a failing run to
// a minimal one that fails the same way (src/search/shrink.h), prints the overrides and the choices
// it keeps, writes a choice file that `replay --choices` reproduces, and says which choices vary
// freely.
#include <iostream>
#include <memory>

#include "src/cli/choices.h"
#include "src/cli/command.h"
#include "src/cli/options.h"
#include "src/search/shrink.h"

namespace racesim::cli {
namespace {

struct ShrinkCliOptions {
  std::string file, strategy, point, policy = "fifo", choices_file, out, max_time = "60s";
  std::uint64_t seed = 0, max_replays = 500;
  OverrideOptions overrides;
  CLI::Option* seed_option = nullptr;
  CLI::Option* policy_option = nullptr;
};

// "#3 (wake among 3, took 2, rank 1 at 41.3s)".
std::string choice_text(const search::ChoiceFile& f, std::size_t i) {
  const kernel::Choice& c = f.choices[i];
  const bool named = c.process >= 0 && static_cast<std::size_t>(c.process) < f.processes.size();
  return "#" + std::to_string(i + 1) + " (" + std::string(kernel::to_string(c.kind)) + " among " +
         std::to_string(c.options) + ", took " + std::to_string(c.value) +
         (named ? ", " + f.processes[static_cast<std::size_t>(c.process)] : std::string()) + " at " +
         kernel::format_duration(c.at) + ")";
}

int shrink_command(const ShrinkCliOptions& o) {
  search::ShrinkOptions so;
  so.max_replays = o.max_replays;
  const auto t = kernel::parse_duration(o.max_time);
  if (!t || *t <= 0) {
    std::cerr << "racesim: --max-time: expected a duration (60s, 5min), got '" << o.max_time << "'\n";
    return kExitUsage;
  }
  so.max_seconds = kernel::to_seconds(*t);
  Overrides base;
  std::string strategy = o.strategy, point = o.point;
  std::uint64_t seed = o.seed;
  std::vector<kernel::Choice> tape;
  std::vector<int> rank_streams;
  std::optional<kernel::PolicySpec> policy;
  if (!o.choices_file.empty()) {
    if (!o.out.empty() && !output_is_no_input("shrink", o.out, {o.choices_file, o.file})) return kExitUsage;
    auto file = read_choice_file_for("shrink", o.choices_file, o.seed_option->count() > 0,
                                    o.policy_option->count() > 0, !o.overrides.empty());
    if (!file) return kExitUsage;
    // Check it is a tape of this scenario before anything runs.
    auto study = load_study(o.file, {strategy.empty() ? file->strategy : strategy}, overrides_of(file->overrides),
                            {point.empty() ? file->point : point});
    if (!study || !replay_options(*file, o.choices_file, *study->programs[0])) return kExitUsage;
    std::vector<std::string> texts = file->overrides;
    // A fault swarm left out is turned off by an override, which the result then prints.
    for (const std::string& f : file->disarmed) texts.push_back("faults." + f + ".probability=0");
    base = overrides_of(texts);
    strategy = file->strategy;
    point = file->point;
    seed = file->seed;
    tape = file->choices;
    rank_streams = file->rank_streams;
    so.sticky = file->sticky;
  } else {
    if (strategy.empty() || o.seed_option->count() == 0) {
      std::cerr << "racesim: shrink needs --strategy and --seed, or --choices FILE\n";
      return kExitUsage;
    }
    if (!read_overrides(o.overrides, base)) return kExitUsage;
    auto p = kernel::PolicySpec::parse(o.policy);
    if (!p) {
      std::cerr << "racesim: --policy: " << p.message() << "\n";
      return kExitUsage;
    }
    policy = *p;
  }
  // The run to shrink, as given (its errors printed); then, for a seed, its tape.
  auto study = load_study(o.file, {strategy}, base, point.empty() ? std::vector<std::string>{} : std::vector<std::string>{point});
  if (!study || !runs_fit_in_memory(*study, 1)) return kExitUsage;
  point = study->programs[0]->scenario->point;
  if (policy) {
    run::RunOptions opts;
    opts.policy = *policy;
    opts.record_choices = true;
    tape = run::run_one(*study->programs[0], seed, opts).tape;
  }
  // Candidates compile quietly: one that does not (a rank count the program cannot take) is
  // skipped.
  const search::CompileFn compile = [&](const std::vector<std::string>& extra) {
    scenario::StudyRequest r;
    r.path = o.file;
    r.overrides = base.texts;
    r.override_origins = base.origins;
    r.overrides.insert(r.overrides.end(), extra.begin(), extra.end());
    r.strategies = {strategy};
    if (!point.empty()) r.points = {point};
    scenario::Diagnostics quiet;
    return scenario::compile_study(r, quiet);
  };
  std::string error;
  auto res = search::shrink(compile, seed, tape, rank_streams, so, error);
  if (!res) {
    std::cerr << "racesim: shrink: " << study->scenario.name << " / " << strategy << " / seed " << seed << ": " << error
              << "\n";
    return kExitUsage;
  }
  const scenario::CompiledProgram& program = *res->study->programs[0];
  std::vector<std::string> all = base.texts;
  const auto extra = search::override_texts(res->overrides);
  all.insert(all.end(), extra.begin(), extra.end());
  const std::string out = o.out.empty() ? "shrunk-" + strategy + ".choices.jsonl" : o.out;
  const auto file = choice_file_of(program, all, res->record, res->options, "shrink");
  if (!write_file_atomically(out, search::format_choice_file(file))) return kExitUsage;
  std::cout << "racesim shrink: " << study->scenario.name << " / " << strategy << (point.empty() ? "" : " @ " + point)
            << " / seed " << seed << ", " << res->signature << "\n";
  std::cout << (res->complete ? "1-minimal" : "stopped by the budget (--max-replays, --max-time), not 1-minimal")
            << " after " << res->replays << " replays: ranks " << res->ranks_before << " -> " << program.scenario->ranks;
  if (!res->options.rank_streams.empty()) {
    std::vector<std::string> kept;
    for (int r : res->options.rank_streams) kept.push_back(std::to_string(r));
    std::cout << " (" << (kept.size() == 1 ? "rank " : "ranks ") << flag_list(kept) << " of the run, renumbered from 0)";
  }
  std::cout << "; choices off their first option " << res->nonzero_before << " -> " << res->nonzero_after << " of "
            << res->record.tape.size() << "\n";
  std::cout << "  fails:       " << res->record.check << ": " << res->record.diagnosis << "\n";
  std::cout << "  overrides:  ";
  if (extra.empty()) std::cout << " (none)";
  for (const auto& e : extra) std::cout << " --set " << e;
  if (!res->options.rank_streams.empty()) std::cout << " (and the ranks' streams, in the choice file)";
  std::cout << "\n";
  std::cout << "  choice file: " << out << "\n  reproduce:   racesim replay " << o.file << " --choices " << out
            << " [--trace trace.json]\n";
  std::cout << "  choices kept off their first option:";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < file.choices.size(); ++i) {
    if (file.choices[i].value == 0) continue;
    if (shown++ == 10) {
      std::cout << " ...";
      break;
    }
    std::cout << " " << choice_text(file, i);
  }
  if (shown == 0) std::cout << " none (the first option everywhere: fifo's run)";
  std::cout << "\n  choices that vary freely (every other option tried fails the same way): " << res->free_choices.size()
            << " of " << file.choices.size() << (res->free_choices_complete ? "" : " (the budget ended before all were tried)")
            << "\n";
  return kExitFailed;
}

}  // namespace

Command add_shrink_command(CLI::App& parent) {
  auto o = std::make_shared<ShrinkCliOptions>();
  auto* cmd = parent.add_subcommand("shrink", "reduce a failing run to a minimal one that fails the same way");
  cmd->add_option("file", o->file, "scenario file")->required();
  cmd->add_option("--strategy,-s", o->strategy, "strategy (with --choices: the file's)");
  o->seed_option = add_seed_option(cmd, "--seed", o->seed, "the failing run's seed");
  o->policy_option = cmd->add_option("--policy", o->policy, std::string("its schedule policy: ") + kPolicyValues + " (default fifo)");
  cmd->add_option("--choices", o->choices_file, "the failing run's choice file (explore writes them)");
  cmd->add_option("--max-replays", o->max_replays, "at most this many replays (default 500)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  cmd->add_option("--max-time", o->max_time, "at most this long (default 60s)");
  cmd->add_option("--out", o->out, "the minimal run's choice file (default shrunk-STRATEGY.choices.jsonl)");
  add_override_options(cmd, o->overrides);
  cmd->add_option("--point", o->point,
                  "the sweep point, by its label as run prints it or a KEY=VALUE filter (default: the first)");
  return {cmd, [o] { return shrink_command(*o); }};
}

}  // namespace racesim::cli
