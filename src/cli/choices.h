// Choice files on the command line: the one a run's tape makes (explore, replay --record), and
// reading one back for replay --choices, refused with a located error when it is not a tape of the
// scenario, strategy, point, overrides and racesim version at hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"
#include "src/search/choice_file.h"

namespace racesim::cli {

// The choice file of `record` (run with RunOptions::record_choices), a run of `program` with
// `overrides` under `options`; `made_by` names the policy or explorer mode.
search::ChoiceFile choice_file_of(const scenario::CompiledProgram& program, const std::vector<std::string>& overrides,
                                  const run::RunRecord& record, const run::RunOptions& options,
                                  const std::string& made_by);

// Reads and parses the choice file at `path`; nullopt, with the error printed, when it cannot be
// read or is not one.
std::optional<search::ChoiceFile> read_choice_file(const std::string& path);
// The same for `command --choices PATH` ("replay", "shrink"), which takes the seed, policy and
// overrides from the file: first refuses the flags that would make another run (--seed, --policy,
// --set/--set-file), with the error printed.
std::optional<search::ChoiceFile> read_choice_file_for(const std::string& command, const std::string& path,
                                                       bool seed_given, bool policy_given, bool overrides_given);

// The options that replay `file` on `program` (its tape, its disarmed faults, its ranks' streams);
// nullopt, with the error printed ("PATH:1:1: ..."), when the file is of another scenario (name or
// content), strategy, point or racesim version, disarms a fault the program does not have, or
// names the streams of another number of ranks.
std::optional<run::RunOptions> replay_options(const search::ChoiceFile& file, const std::string& path,
                                              const scenario::CompiledProgram& program);

}  // namespace racesim::cli
