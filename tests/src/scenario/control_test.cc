// Semantics of every control primitive, through whole runs of small scenarios.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/run/runner.h"
#include "src/scenario/program.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;
using kernel::kSecond;

struct Fixture {
  std::optional<Scenario> sc;
  std::vector<CompiledProgram> programs;
};

// Builds a scenario with `ranks` ranks, the given program and (optionally) params/strategies.
Fixture make(int ranks, const std::string& program, const std::string& extra = "",
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

run::RunRecord run(const Fixture& f, std::uint64_t seed = 1, std::size_t strategy = 0) {
  return run::run_one(f.programs.at(strategy), seed, {});
}

TEST(ControlTest, SleepAndComputeAdvanceTimeByTheirDurations) {
  auto f = make(2, "  - sleep: 2s\n  - compute: {uniform: {min: 1s, max: 1s}}\n  - mark: done\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass);
  EXPECT_EQ(r.makespan, 3 * kSecond);
  EXPECT_DOUBLE_EQ(r.metrics.at("done_s"), 3.0);
}

TEST(ControlTest, RepeatRunsItsBodyNTimesFromAParam) {
  auto f = make(1, "  - repeat: {times: \"${n}\", do: [{sleep: 1s}]}\n", "params: {n: 4}\n");
  EXPECT_EQ(run(f).makespan, 4 * kSecond);
}

TEST(ControlTest, IfBranchesOnRankAndMarks) {
  auto f = make(3,
                "  - if: {rank: rank0, then: [{mark: zero}], else: [{sleep: 5s}]}\n"
                "  - if: {marked: zero, then: [{mark: \"saw_${rank}\"}], else: [{fail: nope}]}\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.makespan, 5 * kSecond);
  EXPECT_EQ(r.metrics.count("saw_0"), 0u);  // metric names carry the _s suffix
  EXPECT_DOUBLE_EQ(r.metrics.at("saw_2_s"), 5.0);
}

TEST(ControlTest, ChanceDependsOnTheSeedOnly) {
  auto f = make(1, "  - if: {chance: 0.5, then: [{fail: heads}], else: [{mark: tails}]}\n");
  int heads = 0;
  for (std::uint64_t s = 0; s < 400; ++s) heads += run(f, s).outcome == run::Outcome::kFail;
  EXPECT_NEAR(heads, 200, 50);
  EXPECT_EQ(run(f, 7).outcome, run(f, 7).outcome);
}

TEST(ControlTest, PollUntilSucceedsTimesOutOrContinues) {
  auto ok = make(2,
                 "  - if: {rank: rank0, then: [{sleep: 1100ms}, {mark: ready}]}\n"
                 "  - poll_until: {marked: ready, interval: 500ms, timeout: 10s}\n");
  auto r = run(ok);
  EXPECT_EQ(r.outcome, run::Outcome::kPass);
  EXPECT_EQ(r.makespan, 1500 * kernel::kMillisecond);  // polls at 0, 0.5, 1.0, then sees it at 1.5
  auto late = make(1, "  - poll_until: {marked: never, interval: 1s, timeout: 3s}\n");
  auto r2 = run(late);
  EXPECT_EQ(r2.outcome, run::Outcome::kFail);
  EXPECT_EQ(r2.check, "poll_until");
  EXPECT_THAT(r2.diagnosis, HasSubstr("rank 0: 'never' not marked after 3s of polling (t.yaml:5:5)"));
  EXPECT_EQ(r2.makespan, 3 * kSecond);
  auto cont = make(1,
                   "  - poll_until: {marked: never, interval: 1s, timeout: 3s, on_timeout: continue}\n"
                   "  - mark: after\n");
  auto r3 = run(cont);
  EXPECT_EQ(r3.outcome, run::Outcome::kPass);
  EXPECT_DOUBLE_EQ(r3.metrics.at("after_s"), 3.0);
}

TEST(ControlTest, WaitBlocksUntilMarkedOrTimesOut) {
  auto f = make(2,
                "  - if: {rank: 1, then: [{sleep: 7s}, {mark: go}]}\n"
                "  - wait: go\n  - mark: \"through_${rank}\"\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass);
  EXPECT_DOUBLE_EQ(r.metrics.at("through_0_s"), 7.0);
  auto t = make(1, "  - wait: {marked: go, timeout: 2s}\n");
  auto r2 = run(t);
  EXPECT_EQ(r2.outcome, run::Outcome::kFail);
  EXPECT_THAT(r2.diagnosis, HasSubstr("'go' not marked within 2s"));
}

TEST(ControlTest, WaitingForAMarkNobodySetsIsADeadlock) {
  auto f = make(2, "  - wait: never\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock);
  EXPECT_EQ(r.check, "no_deadlock");
  EXPECT_THAT(r.diagnosis, HasSubstr("rank 0: wait on event 'mark 'never''"));
  EXPECT_THAT(r.diagnosis, HasSubstr("(2 blocked at 0s)"));
}

TEST(ControlTest, FailStopsTheRunWithItsMessageAndLocation) {
  auto f = make(2, "  - {sleep: 1s, on: 1}\n  - {fail: \"bad ${rank}\", on: 1}\n  - sleep: 10s\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "fail");
  EXPECT_EQ(r.diagnosis, "rank 1: bad 1 (t.yaml:6:6)");
  EXPECT_EQ(r.makespan, kSecond);  // stopped at once
}

TEST(ControlTest, SpawnRunsConcurrentlyAndJoinWaits) {
  auto f = make(1,
                "  - spawn: {name: helper, do: [{sleep: 5s}, {mark: helped}]}\n"
                "  - sleep: 2s\n  - mark: main\n  - join: helper\n  - mark: joined\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("main_s"), 2.0);
  EXPECT_DOUBLE_EQ(r.metrics.at("joined_s"), 5.0);
  auto bad = make(1, "  - join: nobody\n");
  EXPECT_THAT(run(bad).diagnosis, HasSubstr("nothing named 'nobody' was spawned on this rank"));
}

TEST(ControlTest, SlotsExpandToEachStrategysSteps) {
  auto f = make(1, "  - slot: work\n  - mark: end\n", "",
                "strategies:\n  fast: {work: [{sleep: 1s}]}\n  slow: {work: [{sleep: 3s}]}\n");
  EXPECT_EQ(run(f, 1, 0).makespan, kSecond);
  EXPECT_EQ(run(f, 1, 1).makespan, 3 * kSecond);
}

TEST(ControlTest, SameSeedSameTraceHashDifferentSeedDifferent) {
  auto f = make(3, "  - compute: {exponential: {mean: 1s}}\n  - mark: \"m${rank}\"\n");
  EXPECT_EQ(run(f, 5).trace_hash, run(f, 5).trace_hash);
  EXPECT_NE(run(f, 5).trace_hash, run(f, 6).trace_hash);
}

TEST(ControlTest, MetricChecksFailRunsOutOfBoundsOrWithoutTheMetric) {
  auto f = make(1, "  - sleep: ${d}\n  - if: {chance: 0.5, then: [{mark: done}]}\n",
                "params: {d: {uniform: {min: 1s, max: 3s}}}\n"
                "checks: [no_deadlock, {metric: done_s, max: 2}]\n");
  int fails_late = 0, fails_missing = 0, passes = 0;
  for (std::uint64_t s = 0; s < 200; ++s) {
    const auto r = run(f, s);
    if (r.outcome == run::Outcome::kPass) {
      ++passes;
      EXPECT_LE(r.metrics.at("done_s"), 2.0);
    } else {
      EXPECT_EQ(r.check, "metric done_s");
      if (r.diagnosis.find("was not recorded") != std::string::npos) {
        ++fails_missing;
      } else {
        EXPECT_THAT(r.diagnosis, HasSubstr("expected <= 2"));
        ++fails_late;
      }
    }
  }
  EXPECT_GT(passes, 0);
  EXPECT_GT(fails_late, 0);
  EXPECT_GT(fails_missing, 0);
}

TEST(ControlTest, TimeLimitIsATimeout) {
  auto f = make(1, "  - sleep: 2h\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kTimeout);
  EXPECT_THAT(r.diagnosis, HasSubstr("time limit 3600s"));
}

}  // namespace
}  // namespace racesim::scenario
