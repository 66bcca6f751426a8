// A subcommand of `racesim`: it adds itself, with its options, to the command line, and says what
// runs it once the command line is parsed. One file per subcommand (run.cc, check.cc, ...);
// main.cc only lists them and dispatches.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace racesim::cli {

// Exit codes of every subcommand: 0 ok; 1 an expectation or check failed; 2 usage, scenario or
// input error; 3 internal error; 128 + the signal's number when a campaign is interrupted
// (SIGINT, SIGTERM).
inline constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitInternal = 3;

struct Command {
  CLI::App* app = nullptr;   // the subcommand; app->parsed() says whether it was chosen
  std::function<int()> run;  // runs it with the options parsed into it
};

// Each adds its subcommand to `parent` and returns it.
Command add_run_command(CLI::App& parent);
Command add_check_command(CLI::App& parent);
Command add_validate_command(CLI::App& parent);
Command add_replay_command(CLI::App& parent);
Command add_merge_command(CLI::App& parent);
Command add_report_command(CLI::App& parent);
Command add_list_command(CLI::App& parent);
Command add_live_command(CLI::App& parent);
Command add_explore_command(CLI::App& parent);
Command add_shrink_command(CLI::App& parent);

}  // namespace racesim::cli
