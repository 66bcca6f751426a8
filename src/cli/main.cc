// racesim: run scenario comparisons, check expectations, validate files, replay one seed or choice
// file, explore a strategy for failures and shrink one, run a scenario live. main() builds the
// command line from the subcommands (command.h) and runs the one chosen; each subcommand lives in
// a file of its own.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "src/cli/command.h"
#include "src/report/experiment.h"

int main(int argc, char** argv) {
  using namespace racesim::cli;
  CLI::App app{"racesim: deterministic simulation of distributed-runtime race conditions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("racesim ") + racesim::report::kRacesimVersion);
  const std::vector<Command> commands = {
      add_run_command(app),    add_check_command(app),  add_validate_command(app), add_replay_command(app),
      add_merge_command(app),  add_report_command(app), add_list_command(app),     add_live_command(app),
      add_explore_command(app), add_shrink_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // --version is a "success" CLI11 reports this way
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (const auto& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const std::exception& e) {
    std::cerr << "racesim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitUsage;
}
