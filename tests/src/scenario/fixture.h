// Small scenarios built from text and run in-process, for the primitive tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/run/runner.h"
#include "src/scenario/program.h"

namespace racesim::scenario {

struct Fixture {
  std::optional<Scenario> sc;
  std::vector<CompiledProgram> programs;
};

// Builds a scenario with `ranks` ranks, the given program and (optionally) params/strategies.
inline Fixture make(int ranks, const std::string& program, const std::string& extra = "",
             const std::string& strategies = "strategies: {only: }\n") {
  Fixture f;
  Diagnostics d;
  const std::string text = "name: t\nranks: " + std::to_string(ranks) + "\nlimits: {time: 1h}\n" +
                           extra + "program:\n" + program + strategies;
  f.sc = load_scenario_text(text, "t.yaml", d);
  EXPECT_TRUE(f.sc) << d.to_string() << text;
  if (!f.sc) return f;
  for (const auto& st : f.sc->strategies) {
    auto p = compile_program(*f.sc, st, d);
    EXPECT_TRUE(p) << d.to_string();
    if (p) f.programs.push_back(std::move(*p));
  }
  return f;
}

inline run::RunRecord run(const Fixture& f, std::uint64_t seed = 1, std::size_t strategy = 0) {
  return run::run_one(f.programs.at(strategy), seed, {});
}

}  // namespace racesim::scenario
