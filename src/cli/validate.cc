// racesim validate FILE...: load and compile each scenario file; print what it holds (ranks,
// strategies, sweep points as --point takes them) or its errors.
#include <iostream>
#include <memory>

#include "src/cli/command.h"
#include "src/cli/options.h"

namespace racesim::cli {
namespace {

int validate_command(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& file : files) {
    auto study = load_study(file, {});
    if (!study) {
      ++bad;
      continue;
    }
    const scenario::Scenario& sc = study->scenario;
    std::cout << "ok " << file << ": " << sc.name << ", " << sc.ranks << " ranks, " << sc.strategies.size()
              << " strategies";
    if (study->points.size() > 1) std::cout << " x " << study->points.size() << " sweep points";
    if (!sc.faults.empty()) std::cout << ", " << sc.faults.size() << " faults";
    std::cout << "\n";
    if (study->points.size() > 1) {
      for (const auto& p : study->points) std::cout << "  point " << p->point << "\n";
    }
  }
  return bad ? kExitUsage : kExitOk;
}

}  // namespace

Command add_validate_command(CLI::App& parent) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* cmd = parent.add_subcommand("validate", "load and compile scenario files, report errors");
  cmd->add_option("files", *files, "scenario files")->required();
  return {cmd, [files] { return validate_command(*files); }};
}

}  // namespace racesim::cli
