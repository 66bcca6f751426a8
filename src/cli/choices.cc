// Choice files on the command line (see choices.h).
#include "src/cli/choices.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "src/cli/options.h"
#include "src/report/experiment.h"
#include "src/scenario/file/input_file.h"

namespace racesim::cli {

search::ChoiceFile choice_file_of(const scenario::CompiledProgram& program, const std::vector<std::string>& overrides,
                                  const run::RunRecord& record, const run::RunOptions& options,
                                  const std::string& made_by) {
  const scenario::Scenario& sc = *program.scenario;
  search::ChoiceFile f;
  f.version = report::kRacesimVersion;
  f.scenario = sc.name;
  f.content = sc.content_hash;
  f.overrides = overrides;
  f.strategy = program.strategy->name;
  f.point = sc.point;
  f.seed = record.seed;
  f.made_by = made_by;
  for (std::size_t i = 0; i < options.disarmed_faults.size(); ++i) {
    if (options.disarmed_faults[i]) f.disarmed.push_back(program.faults[i].name);
  }
  f.rank_streams = options.rank_streams;
  f.sticky = options.policy.sticky;
  f.outcome = run::to_string(record.outcome);
  f.check = record.check;
  f.diagnosis = record.diagnosis;
  f.trace_hash = run::trace_hash_text(record.trace_hash);
  f.processes = record.process_names;
  f.choices = record.tape;
  return f;
}

std::optional<search::ChoiceFile> read_choice_file(const std::string& path) {
  const auto text = scenario::read_input_file(path, search::kMaxChoiceFileBytes, "a choice file");
  if (!text) {
    std::cerr << "racesim: " << path << ": " << text.message() << "\n";
    return std::nullopt;
  }
  search::ChoiceFile f;
  std::string error;
  if (!search::parse_choice_file(*text, path, f, error)) {
    std::cerr << "racesim: " << error << "\n";
    return std::nullopt;
  }
  return f;
}

std::optional<search::ChoiceFile> read_choice_file_for(const std::string& command, const std::string& path,
                                                       bool seed_given, bool policy_given, bool overrides_given) {
  std::vector<std::string> refused;
  if (seed_given) refused.push_back("--seed");
  if (policy_given) refused.push_back("--policy");
  if (overrides_given) refused.push_back("--set/--set-file");
  if (!refuse_flags(command + " --choices takes the seed, policy and overrides from the choice file", refused)) {
    return std::nullopt;
  }
  return read_choice_file(path);
}

std::optional<run::RunOptions> replay_options(const search::ChoiceFile& file, const std::string& path,
                                              const scenario::CompiledProgram& program) {
  const scenario::Scenario& sc = *program.scenario;
  const auto refuse = [&path](const std::string& why) {
    std::cerr << "racesim: " << path << ":1:1: " << why << "\n";
    return std::nullopt;
  };
  if (file.scenario != sc.name) {
    return refuse("a tape of scenario '" + file.scenario + "', not of '" + sc.name + "'");
  }
  if (file.content != sc.content_hash) {
    return refuse("a tape of another version of " + sc.file + " (content " + file.content + ", the file's is now " +
                  sc.content_hash + "): its choices would not line up; explore it again");
  }
  if (file.strategy != program.strategy->name) {
    return refuse("a tape of strategy '" + file.strategy + "', not of '" + program.strategy->name + "'");
  }
  if (file.point != sc.point) {
    return refuse("a tape of the sweep point '" + file.point + "', not of '" + sc.point + "'");
  }
  if (file.version != report::kRacesimVersion) {
    return refuse("written by racesim " + file.version + ", this is " + report::kRacesimVersion +
                  ": the models may choose differently; explore it again");
  }
  if (!file.rank_streams.empty() && file.rank_streams.size() != static_cast<std::size_t>(sc.ranks)) {
    return refuse("its rank_streams name " + std::to_string(file.rank_streams.size()) + " ranks, the run has " +
                  std::to_string(sc.ranks));
  }
  run::RunOptions opts;
  opts.policy = kernel::PolicySpec::replay(file.choices);
  opts.policy.sticky = file.sticky;
  opts.rank_streams = file.rank_streams;
  opts.disarmed_faults.assign(program.faults.size(), 0);
  for (const std::string& name : file.disarmed) {
    std::size_t i = 0;
    while (i < program.faults.size() && program.faults[i].name != name) ++i;
    if (i == program.faults.size()) return refuse("disarms the fault '" + name + "', which the scenario does not have");
    opts.disarmed_faults[i] = 1;
  }
  return opts;
}

}  // namespace racesim::cli
