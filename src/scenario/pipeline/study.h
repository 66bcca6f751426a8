// The one pipeline from a scenario file (or text) to what runs: load -> --set overrides -> sweep
// points -> compile every chosen strategy at every chosen point. The CLI, the benchmarks and the
// tests all build their studies here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/scenario/compile/compiler.h"
#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

struct StudyRequest {
  std::string path = {};                 // the scenario file; or, with `text`, its name in errors
  std::optional<std::string> text = {};  // the scenario's text instead of reading `path`
  std::vector<std::string> overrides = {};   // "KEY=VALUE", applied in order before the sweep
  // Where each override was written, by index (a --set-file line); missing or with an empty
  // file: a --set, and its errors say "--set KEY".
  std::vector<Location> override_origins = {};
  std::vector<std::string> strategies = {};  // the strategies to compile (empty: all)
  // The sweep points to compile (empty: every point): each entry is a point's label as run
  // prints it ("platform.mesh.ep=2 ranks=64"), or an axis filter KEY=VALUE; a point is chosen when
  // its label is given, or when it matches every filter given.
  std::vector<std::string> points = {};
  bool first_point_only = false;             // only the first sweep point (benchmarks)
  // The most steps each program may compile to: Compiler::kMaxSteps, or fewer where a caller
  // bounds its work (the fuzz target).
  std::size_t max_steps = Compiler::kMaxSteps;
};

// A compiled study: the scenario (after overrides), its sweep points and the compiled programs,
// points outer and strategies inner, in file order. Programs point into `points`; not copyable.
struct Study {
  Scenario scenario;
  std::vector<std::unique_ptr<Scenario>> points;
  std::vector<std::unique_ptr<CompiledProgram>> programs;
  std::vector<const CompiledProgram*> program_pointers() const;
};

// Builds the study; every problem (the file, an override, a strategy or point that does not
// exist, a primitive's arguments) is reported to `diags` with its location, and then nullptr is
// returned.
std::unique_ptr<Study> compile_study(const StudyRequest& request, Diagnostics& diags);

}  // namespace racesim::scenario
