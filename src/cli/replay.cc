// racesim replay FILE -s STRATEGY --seed S: one run, explained (outcome, diagnosis, deadlock
// report, metrics), with its Chrome trace written on request.
#include <iostream>
#include <memory>
#include <sstream>

#include "src/cli/command.h"
#include "src/cli/options.h"

namespace racesim::cli {
namespace {

struct ReplayOptions {
  std::string file, strategy, policy = "fifo", trace_file, point;
  std::uint64_t seed = 0;
  OverrideOptions overrides;
};

int replay_command(const ReplayOptions& o) {
  Overrides overrides;
  if (!read_overrides(o.overrides, overrides)) return kExitUsage;
  auto study = load_study(o.file, {o.strategy}, overrides,
                          o.point.empty() ? std::vector<std::string>{} : std::vector<std::string>{o.point});
  if (!study) return kExitUsage;
  auto policy = kernel::PolicySpec::parse(o.policy);
  if (!policy) {
    std::cerr << "racesim: --policy: " << policy.message() << "\n";
    return kExitUsage;
  }
  run::RunOptions opts;
  opts.policy = *policy;
  std::ostringstream trace;  // written whole once the run is done
  std::string deadlock;
  const auto rec = run::run_one(*study->programs[0], o.seed, opts, o.trace_file.empty() ? nullptr : &trace, &deadlock);
  const std::string& at = study->programs[0]->scenario->point;
  std::cout << study->scenario.name << " / " << o.strategy << (at.empty() ? "" : " @ " + at) << " / seed " << o.seed
            << ": " << run::to_string(rec.outcome) << " at " << kernel::format_duration(rec.makespan) << " ("
            << rec.events << " events, trace hash " << run::trace_hash_text(rec.trace_hash) << ")\n";
  if (!rec.diagnosis.empty()) std::cout << rec.check << ": " << rec.diagnosis << "\n";
  if (!deadlock.empty()) std::cout << "\n" << deadlock;
  for (const auto& [name, v] : rec.metrics) std::cout << "  " << name << " = " << v << "\n";
  if (!o.trace_file.empty()) {
    if (!write_file_atomically(o.trace_file, trace.str())) return kExitUsage;
    std::cout << "Chrome trace written to " << o.trace_file << "\n";
  }
  return run::failed(rec.outcome) ? kExitFailed : kExitOk;
}

}  // namespace

Command add_replay_command(CLI::App& parent) {
  auto o = std::make_shared<ReplayOptions>();
  auto* cmd = parent.add_subcommand("replay", "run one seed, explain the outcome, write a trace");
  cmd->add_option("file", o->file, "scenario file")->required();
  cmd->add_option("--strategy,-s", o->strategy, "strategy")->required();
  cmd->add_option("--seed", o->seed, "seed")->required();
  cmd->add_option("--policy", o->policy, "schedule policy");
  cmd->add_option("--trace", o->trace_file, "write a Chrome trace (JSON) here");
  add_override_options(cmd, o->overrides);
  cmd->add_option("--point", o->point,
                  "the sweep point, by its label as run prints it or a KEY=VALUE filter (default: the first)");
  return {cmd, [o] { return replay_command(*o); }};
}

}  // namespace racesim::cli
