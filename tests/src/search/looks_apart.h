// The search tests' scenario: rank 0 marks m1, m2, ... one scheduling step apart; every other rank
// looks for m1 and, one step later, fails if rank 0 had marked `steps` of them in between. A bug
// decided by the schedule alone (every step takes no virtual time), of depth 2 for PCT, needing
// `steps` delays from fifo's order. And a compiler of scenario text for the tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/scenario/pipeline/study.h"

namespace racesim::search::test {

// `extra` is appended (more strategies, a `faults:` section); the strategy `split` is the bug.
inline std::string looks_apart(int ranks, int steps, const std::string& extra = "") {
  const std::string n = std::to_string(steps);
  return "name: looks_apart\nranks: " + std::to_string(ranks) +
         "\nprogram:\n"
         "  - if:\n"
         "      rank: 0\n"
         "      then:\n"
         "        - for_each: {var: i, range: [1, " + std::to_string(steps + 1) +
         "], do: [{sleep: 0s}, {mark: \"m${i}\"}]}\n"
         "      else: [{slot: look}]\n"
         "strategies:\n"
         "  split:\n"
         "    look:\n"
         "      - sleep: 0s\n"
         "      - if:\n"
         "          marked: m1\n"
         "          then: []\n"
         "          else:\n"
         "            - sleep: 0s\n"
         "            - if: {marked: m" + n + ", then: [{fail: \"" + n + " steps between the looks\"}]}\n" +
         extra;
}

// The study of `text` (named x.yaml in errors) for `strategies` (all when empty), with
// `overrides`; nullptr (and a test failure naming the errors) when it does not compile.
inline std::unique_ptr<scenario::Study> compile_text(const std::string& text, const std::vector<std::string>& strategies = {},
                                                     const std::vector<std::string>& overrides = {}) {
  scenario::Diagnostics d;
  scenario::StudyRequest r;
  r.path = "x.yaml";
  r.text = text;
  r.strategies = strategies;
  r.overrides = overrides;
  auto s = scenario::compile_study(r, d);
  EXPECT_TRUE(s) << d.to_string();
  return s;
}

}  // namespace racesim::search::test
