// Semantics of every control primitive, through whole runs of small scenarios.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/run/runner.h"
#include "sim/kernel/stack_pool.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/execute/interpreter.h"
#include "src/scenario/execute/run_state.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/language/overrides.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/language/sweep.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;
using kernel::kSecond;

TEST(ControlTest, SleepAndComputeAdvanceTimeByTheirDurations) {
  auto f = make(2, "  - sleep: 2s\n  - compute: {uniform: {min: 1s, max: 1s}}\n  - mark: {name: done, metric: true}\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass);
  EXPECT_EQ(r.makespan, 3 * kSecond);
  EXPECT_DOUBLE_EQ(r.metrics.at("done_s"), 3.0);
}

// At teardown a sleep among the program's own steps returns instead of being unwound: run_rank
// returns false, no step after it runs, the process ends as killed. A sleep nested in another
// step is unwound as before (run_rank never returns). Both give their stack back.
TEST(ControlTest, ATopLevelSleepReturnsAtTeardownANestedOneIsUnwound) {
  for (const bool nested : {false, true}) {
    SCOPED_TRACE(nested ? "nested" : "top level");
    auto f = make(1, nested ? "  - repeat: {times: 1, do: [{sleep: 10s}]}\n  - mark: {name: after, metric: true}\n"
                            : "  - sleep: 10s\n  - mark: {name: after, metric: true}\n");
    const CompiledProgram& program = *f.study->programs.at(0);
    std::optional<bool> returned;
    bool torn_down = false;
    {
      kernel::Simulation sim;
      RunState state(sim, program.platform.get(), 1);
      kernel::Process* p = sim.spawn("rank 0", [&] {
        RankContext ctx{sim, state, 0, 1, sim.stream("rank0")};
        returned = run_rank(program.steps, ctx);
        torn_down = sim.tearing_down();
      });
      sim.schedule_at(kSecond, [&] { sim.stop("done"); });
      EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kStopped);
      sim.shutdown();
      EXPECT_TRUE(p->finished());
      if (!nested) {
        EXPECT_EQ(p->exit_kind(), kernel::ExitKind::kKilled);
      }
      EXPECT_FALSE(state.marked("after"));
    }
    if (nested) {
      EXPECT_FALSE(returned.has_value());
    } else {
      EXPECT_EQ(returned, std::optional<bool>(false));
      EXPECT_TRUE(torn_down);
    }
    EXPECT_EQ(kernel::StackPool::for_this_thread().stats().stacks_in_use, 0u);
  }
}

TEST(ControlTest, RepeatRunsItsBodyNTimesFromAParam) {
  auto f = make(1, "  - repeat: {times: \"${n}\", do: [{sleep: 1s}]}\n", "params: {n: 4}\n");
  EXPECT_EQ(run(f).makespan, 4 * kSecond);
}

TEST(ControlTest, IfBranchesOnRankAndMarks) {
  auto f = make(3,
                "  - if: {rank: rank0, then: [{mark: zero}], else: [{sleep: 5s}]}\n"
                "  - if: {marked: zero, then: [{mark: {name: \"saw_${rank}\", metric: true}}], else: [{fail: nope}]}\n");
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
                   "  - mark: {name: after, metric: true}\n");
  auto r3 = run(cont);
  EXPECT_EQ(r3.outcome, run::Outcome::kPass);
  EXPECT_DOUBLE_EQ(r3.metrics.at("after_s"), 3.0);
}

TEST(ControlTest, WaitBlocksUntilMarkedOrTimesOut) {
  auto f = make(2,
                "  - if: {rank: 1, then: [{sleep: 7s}, {mark: go}]}\n"
                "  - wait: go\n  - mark: {name: \"through_${rank}\", metric: true}\n");
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
                "  - sleep: 2s\n  - mark: {name: main, metric: true}\n  - join: helper\n  - mark: {name: joined, metric: true}\n");
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
  auto f = make(1, "  - sleep: ${d}\n  - if: {chance: 0.5, then: [{mark: {name: done, metric: true}}]}\n",
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

// ---- faults and derived metrics ----

TEST(ControlTest, StragglerFaultSlowsComputeOnTheRanksItHits) {
  auto f = make(3, "  - compute: 10s\n  - mark: {name: done, metric: true}\n",
                "faults: [{kind: straggler, on: [1], factor: 2.5}]\n"
                "metrics: {first_done: {of: done_s, stat: min}, done_ranks: {of: done_s, stat: count}}\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass);
  EXPECT_EQ(r.makespan, 25 * kSecond);
  EXPECT_DOUBLE_EQ(r.metrics.at("done_s"), 25.0);      // the series' maximum
  EXPECT_DOUBLE_EQ(r.metrics.at("first_done"), 10.0);  // derived: min over ranks
  EXPECT_DOUBLE_EQ(r.metrics.at("done_ranks"), 3.0);
  EXPECT_DOUBLE_EQ(r.metrics.at("faults.straggler"), 1.0);
  // sleep is not compute: a straggler does not stretch it.
  auto g = make(2, "  - sleep: 10s\n", "faults: [{kind: straggler, factor: 3}]\n");
  EXPECT_EQ(run(g).makespan, 10 * kSecond);
}

TEST(ControlTest, FaultProbabilityActivatesPerRunAndRankFromTheSeed) {
  auto f = make(4, "  - compute: 10s\n", "faults: [{kind: straggler, probability: 0.25, factor: 2}]\n");
  int active = 0, slow_runs = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    auto r = run(f, seed);
    active += static_cast<int>(r.metrics.at("faults.straggler"));
    slow_runs += r.makespan == 20 * kSecond;
    EXPECT_EQ(r.trace_hash, run(f, seed).trace_hash);  // the same draw every time
  }
  // 1,600 rank-runs at p = 0.25: mean 400, sd 17.3; accept +-4 sd.
  EXPECT_NEAR(active, 400, 70);
  // A run is slow when any of its 4 ranks straggles: 1 - 0.75^4 = 68.4% of 400 = 273.
  EXPECT_NEAR(slow_runs, 273, 40);
  auto never = make(4, "  - compute: 10s\n", "faults: [{kind: straggler, probability: 0, factor: 2}]\n");
  for (std::uint64_t seed = 0; seed < 50; ++seed) EXPECT_EQ(run(never, seed).makespan, 10 * kSecond);
}

TEST(ControlTest, AFaultDoesNotShiftTheRanksOwnRandomDraws) {
  // The compute times come from the ranks' streams; the fault draws from its own, so rank 1's
  // duration is the same with and without a straggler on rank 0 (a paired comparison).
  const std::string prog = "  - if: {rank: 1, then: [{compute: {uniform: {min: 1s, max: 9s}}}, {mark: {name: r1, metric: true}}]}\n"
                           "  - compute: 1s\n";
  auto without = make(2, prog);
  auto with_fault = make(2, prog, "faults: [{kind: straggler, on: rank0, probability: 0.5, factor: 7}]\n");
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_DOUBLE_EQ(run(without, seed).metrics.at("r1_s"), run(with_fault, seed).metrics.at("r1_s"));
  }
}

TEST(ControlTest, CrashKillsTheRankAndThoseWaitingForItDeadlock) {
  // Rank 0 would set 'ready' at 10 s but crashes at 4 s; rank 1 waits for it forever.
  auto f = make(2, "  - if: {rank: rank0, then: [{sleep: 10s}, {mark: ready}], else: [{wait: ready}]}\n",
                "faults: [{kind: crash, on: rank0, at: 4s}]\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock) << r.diagnosis;
  EXPECT_THAT(r.diagnosis, HasSubstr("mark 'ready'"));
  // A mark has no known setter, so the diagnosis names the crash itself.
  EXPECT_THAT(r.diagnosis, HasSubstr("; rank 0 was killed at 4s by crash fault 'crash'"));
  EXPECT_EQ(r.makespan, 4 * kSecond);
  EXPECT_DOUBLE_EQ(r.metrics.at("crashed_ranks"), 1.0);
  // A crash after the rank finished changes nothing.
  auto late = make(2, "  - if: {rank: rank0, then: [{sleep: 1s}, {mark: ready}], else: [{wait: ready}]}\n",
                   "faults: [{kind: crash, on: rank0, at: 4s}]\n");
  auto r2 = run(late);
  EXPECT_EQ(r2.outcome, run::Outcome::kPass) << r2.diagnosis;
  // Counted as 0, not left out (a mean over the runs that crashed would read 1).
  EXPECT_DOUBLE_EQ(r2.metrics.at("crashed_ranks"), 0.0);
}

TEST(ControlTest, ARankCrashedAtABarrierHasNotArrivedAndTheHangNamesIt) {
  // Rank 0 reaches the barrier at once and crashes there at 5 s; the others arrive at 10 s.
  auto f = make(3, "  - if: {rank: rank0, then: [{barrier: b}], else: [{sleep: 10s}, {barrier: b}]}\n"
                   "  - mark: {name: after, metric: true}\n",
                "faults: [{name: oom_kill, kind: crash, on: rank0, at: 5s}]\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock) << r.diagnosis;
  EXPECT_THAT(r.diagnosis, HasSubstr("arrive on barrier 'b': waiting for rank 0 (killed at 5s by crash fault "
                                     "'oom_kill') (2 blocked at 10s)"));
  EXPECT_FALSE(r.metrics.count("after_s"));
}

TEST(ControlTest, ACrashedRankRestartsItsProgramFromTheFirstStep) {
  // The program resumes from a saved marker if there is one, else works 3 s and saves it.
  const std::string program =
      "  - if:\n"
      "      text: {path: \"/c/latest${rank}\", equals: saved}\n"
      "      then: [{count: resumed}]\n"
      "      else: [{sleep: 3s}, {write_text: {path: \"/c/latest${rank}\", text: saved}}, {sleep: 2s}]\n"
      "  - barrier: end\n";
  const std::string storage = "platform: {storage: {c: {kind: local, mount: /c, meta_latency: 1ms}}}\n";
  // Crashed at 2 s, before it saved: the restart at 7 s starts over and saves at 10 s.
  auto before = run(make(2, program, storage + "faults: [{kind: crash, on: rank0, at: 2s, restarts: 1, restart_after: 5s}]\n"));
  EXPECT_EQ(before.outcome, run::Outcome::kPass) << before.diagnosis;
  EXPECT_EQ(before.metrics.at("restarts"), 1.0);
  EXPECT_EQ(before.metrics.at("resumed"), 0.0);
  EXPECT_NEAR(before.metrics.at("makespan_s"), 12.0, 0.01);
  // Crashed at 4 s, after it saved: the restart at 9 s resumes at once.
  auto after = run(make(2, program, storage + "faults: [{kind: crash, on: rank0, at: 4s, restarts: 1, restart_after: 5s}]\n"));
  EXPECT_EQ(after.outcome, run::Outcome::kPass) << after.diagnosis;
  EXPECT_EQ(after.metrics.at("resumed"), 1.0);
  EXPECT_NEAR(after.metrics.at("makespan_s"), 9.0, 0.01);
  // Without a restart the other rank waits at the barrier for a rank that is gone.
  auto gone = run(make(2, program, storage + "faults: [{kind: crash, on: rank0, at: 4s}]\n"));
  EXPECT_EQ(gone.outcome, run::Outcome::kDeadlock);
  EXPECT_THAT(gone.diagnosis, HasSubstr("waiting for rank 0 (killed at 4s by crash fault 'crash')"));
  // The only rank crashes: the pending restart keeps the run going, and the restarted program
  // runs (the run does not end at the crash as a pass of a program that never finished).
  auto alone = run(make(1, program, storage + "faults: [{kind: crash, on: rank0, at: 4s, restarts: 1, restart_after: 5s}]\n"));
  EXPECT_EQ(alone.outcome, run::Outcome::kPass) << alone.diagnosis;
  EXPECT_EQ(alone.metrics.at("restarts"), 1.0);
  EXPECT_EQ(alone.metrics.at("resumed"), 1.0);
  EXPECT_NEAR(alone.metrics.at("makespan_s"), 9.0, 0.01);
}

}  // namespace
}  // namespace racesim::scenario

namespace racesim::scenario {
namespace {

// At most `permits` ranks inside at once, FIFO; the wait is recorded per entry; a second use of
// the name with another count is an error naming both.
TEST(SemaphoreTest, AtMostPermitsRanksRunTheStepsAtOnce) {
  auto f = make(4, "  - semaphore: {name: s, permits: 2, do: [{sleep: 1s}]}\n  - mark: {name: done, metric: true}\n");
  const auto r = run(f);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("done_s"), 2);             // two waves of one second
  EXPECT_DOUBLE_EQ(r.metrics.at("semaphore.s.wait_s"), 1);  // the second wave waited a second
  EXPECT_DOUBLE_EQ(r.metrics.at("semaphore.s.entries"), 4);
  auto g = make(2, "  - if: {rank: rank0, then: [{semaphore: {name: s, permits: 2, do: []}}], "
                   "else: [{sleep: 1s}, {semaphore: {name: s, permits: 3, do: []}}]}\n");
  const auto bad = run(g);
  EXPECT_EQ(bad.outcome, run::Outcome::kFail);
  EXPECT_THAT(bad.diagnosis, ::testing::HasSubstr("semaphore 's' has 2 permits (its first use) but this step asks for 3"));
}

// A daemon helper dies when its rank's program ends; what it held is released, and it is counted.
TEST(SpawnTest, EachRanksDaemonsAreKilledWhenThatRanksProgramEnds) {
  // Rank r's program ends at r seconds; each of its two daemons marks at 1.5 s. Ranks 0 and 1
  // end first: their four daemons are killed there; ranks 2 and 3's have finished by their end.
  auto f = make(4, "  - spawn: {name: d, daemon: true, do: [{sleep: 1500ms}, {mark: ran}]}\n"
                   "  - spawn: {name: e, daemon: true, do: [{sleep: 1500ms}, {mark: ran}]}\n"
                   "  - sleep: \"${rank * 1s}\"\n");
  const auto r = run(f);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("daemons_killed"), 4);
  EXPECT_DOUBLE_EQ(r.metrics.at("makespan_s"), 3);
}

TEST(SpawnTest, ADaemonIsKilledWhenItsRanksProgramEnds) {
  auto f = make(1, "  - spawn: {name: d, daemon: true, do: [{sleep: 10s}, {mark: {name: late, metric: true}}]}\n"
                   "  - spawn: {name: n, do: [{sleep: 2s}, {mark: {name: kept, metric: true}}]}\n  - sleep: 1s\n");
  const auto r = run(f);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("daemons_killed"), 1);
  EXPECT_EQ(r.metrics.count("late_s"), 0u);    // the daemon never got there
  EXPECT_DOUBLE_EQ(r.metrics.at("kept_s"), 2);  // a non-daemon helper runs on after the program
  EXPECT_DOUBLE_EQ(r.metrics.at("makespan_s"), 2);
}

// `if: {expr: ...}` holds when the expression is not 0: a comparison over loop variables, params
// and the rank (`step % save_every == 0`); a duration or a size is no condition.
TEST(ControlTest, AnIfOnAnExpressionComparesLoopVariablesParamsAndTheRank) {
  auto f = make(4,
                "  - for_each:\n      var: step\n      range: \"${steps}\"\n      do:\n"
                "        - if: {expr: \"${step % save_every == 0}\", then: [{count: saves}]}\n"
                "  - if: {expr: \"${rank >= 3}\", then: [{count: high}], else: [{count: low}]}\n",
                "params:\n  steps: 6\n  save_every: 2\n");
  ASSERT_TRUE(f.study);
  const auto r = run(f);
  EXPECT_DOUBLE_EQ(r.metrics.at("saves"), 4 * 3) << "steps 0, 2 and 4 on every rank";
  EXPECT_DOUBLE_EQ(r.metrics.at("high"), 1);
  EXPECT_DOUBLE_EQ(r.metrics.at("low"), 3);
  EXPECT_THAT(compile_errors(1, "  - if: {expr: \"${10ms}\", then: []}\n"),
              HasSubstr("if expr: ${10ms} is a duration, expected a number"));
  EXPECT_THAT(compile_errors(1, "  - if: {expr: \"${1 == 1}\", rank: 0, then: []}\n"),
              HasSubstr("expected exactly one condition: marked, rank, chance, exists, glob, text or expr"));
}

}  // namespace
}  // namespace racesim::scenario
