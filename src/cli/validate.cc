// racesim validate FILE...: load and compile each scenario file; print what it holds (ranks,
// strategies, the params drawn from distributions and how often each is drawn, sweep points as
// --point takes them) or its errors.
#include <iostream>
#include <memory>

#include "src/cli/command.h"
#include "src/cli/options.h"

namespace racesim::cli {
namespace {

// How often a param is drawn, the default said as such.
const char* scope_text(scenario::DrawScope scope) {
  switch (scope) {
    case scenario::DrawScope::kUse: return "drawn per use (the default: at each use, on each rank)";
    case scenario::DrawScope::kRank: return "drawn per rank (once on each rank)";
    case scenario::DrawScope::kRun: return "drawn per run (once, shared by every rank)";
  }
  return "";
}

int validate_command(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& file : files) {
    auto study = load_study(file, {});
    if (!study) {
      ++bad;
      continue;
    }
    const scenario::Scenario& sc = study->scenario;
    auto count = [](std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
    std::cout << "ok " << file << ": " << sc.name << ", " << count(static_cast<std::size_t>(sc.ranks), "rank", "ranks") << ", "
              << count(sc.strategies.size(), "strategy", "strategies");
    if (study->points.size() > 1) std::cout << " x " << study->points.size() << " sweep points";
    if (!sc.faults.empty()) std::cout << ", " << count(sc.faults.size(), "fault", "faults");
    std::cout << "\n";
    for (const auto& [name, p] : sc.params) {
      if (p.text || p.expr || !p.value.random()) continue;
      std::cout << "  param " << name << ": " << p.value.describe() << ", " << scope_text(p.value.scope) << "\n";
    }
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
