// Small scenarios built from text and run in-process, for the primitive tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::scenario {

struct Fixture {
  std::unique_ptr<Study> study;  // nullptr when the scenario did not compile (reported)
};

// Builds a scenario with `ranks` ranks, the given program and (optionally) params/strategies,
// through the one pipeline (study.h).
inline Fixture make(int ranks, const std::string& program, const std::string& extra = "",
                    const std::string& strategies = "strategies: {only: }\n") {
  Fixture f;
  Diagnostics d;
  const std::string text = "name: t\nranks: " + std::to_string(ranks) + "\nlimits: {time: 1h}\n" +
                           extra + "program:\n" + program + strategies;
  f.study = compile_study({.path = "t.yaml", .text = text}, d);
  EXPECT_TRUE(f.study) << d.to_string() << text;
  return f;
}

// The errors compiling such a scenario reports ("" when it compiles).
inline std::string compile_errors(int ranks, const std::string& program, const std::string& extra = "",
                                  const std::string& strategies = "strategies: {only: }\n") {
  Diagnostics d;
  const std::string text = "name: t\nranks: " + std::to_string(ranks) + "\nlimits: {time: 1h}\n" +
                           extra + "program:\n" + program + strategies;
  auto study = compile_study({.path = "t.yaml", .text = text}, d);
  EXPECT_EQ(study == nullptr, d.count() > 0);
  return d.to_string();
}

inline run::RunRecord run(const Fixture& f, std::uint64_t seed = 1, std::size_t strategy = 0) {
  return run::run_one(*f.study->programs.at(strategy), seed, {});
}

}  // namespace racesim::scenario
