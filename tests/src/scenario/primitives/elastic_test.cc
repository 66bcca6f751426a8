// Group restarts (platform.elastic), through whole runs of small scenarios: a rank's failure
// stops every rank and all start again, with communicators formed anew, storage as the failure
// left it, restarts counted and limited.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// Four ranks; restarts 5 s after a failure; one local mount at /c (100 MiB/s, 1 ms per metadata op).
std::string elastic(int max_restarts) {
  return "platform:\n  elastic: {max_restarts: " + std::to_string(max_restarts) +
         ", restart_after: 5s}\n  collective: {exec_timeout: none}\n  storage:\n"
         "    c: {kind: local, mount: /c, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n";
}

TEST(ElasticTest, ACrashRestartsEveryRankWithNewCommunicatorsAndTheFilesAsTheCrashLeftThem) {
  // First start: rank 0 writes a pointer; collective #1; rank 0 writes a 1 GiB file (10.24 s)
  // and rank 1 sleeps. Rank 1 crashes at 10 s: every rank stops (rank 0 mid-write, the others in
  // collective #2), and at 15 s all start again, find the pointer, skip the writes, and run
  // collectives #1 and #2 of a new engine.
  const std::string program =
      "  - let: {resumed: false}\n"
      "  - if:\n      exists: /c/ptr\n      then: [{set: {resumed: true}}, {mark: {name: resumed, metric: true}}]\n"
      "      else: [{write_text: {path: /c/ptr, text: x}, on: rank0}]\n"
      "  - collective: {op: all_reduce, bytes: 1MiB}\n"
      "  - if: {expr: \"${resumed == 0}\", then: [{write_file: {path: /c/big, size: 1GiB}, on: rank0}]}\n"
      "  - {sleep: 20s, on: 1}\n"
      "  - collective: {op: all_reduce, bytes: 1MiB}\n";
  auto r = run(make(4, program, elastic(2) + "faults: [{name: c, kind: crash, on: 1, at: 10s}]\n"));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("elastic.restarts"), 1);
  EXPECT_EQ(r.metrics.at("crashed_ranks"), 1);
  EXPECT_NEAR(r.metrics.at("resumed_s"), 15.0, 1e-3) << "every rank starts again 5 s after the crash";
  EXPECT_NEAR(r.metrics.at("makespan_s"), 35.0, 0.01) << "rank 1's 20 s sleep, from 15 s";
  EXPECT_EQ(r.metrics.at("collective.count"), 1 + 2) << "one before the crash, two after, on the new engine";
  EXPECT_EQ(r.metrics.at("fs.c.torn_at_end"), 1) << "rank 0's write stopped at the restart stays torn";
}

TEST(ElasticTest, AnErrorTheProgramDidNotCatchRestartsTheGroupUntilTheRestartsAreUsedUp) {
  // Rank 2 reads a file nobody writes: ENOENT at every start.
  auto r = run(make(4, "  - {read: /c/missing, on: 2}\n  - sleep: 1s\n",
                    elastic(2) + "checks: [no_io_errors]\n"));
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "no_io_errors");
  EXPECT_THAT(r.diagnosis, HasSubstr("rank 2: read /c/missing: ENOENT at 10.0 s"));
  EXPECT_THAT(r.diagnosis, HasSubstr("(after 2 group restarts, platform.elastic.max_restarts)"));
  EXPECT_EQ(r.metrics.at("elastic.restarts"), 2);
  // A crash once the restarts are used up fails the run with the check `elastic`.
  auto crash = run(make(2, "  - sleep: 30s\n", elastic(1) + "faults:\n  - {name: a, kind: crash, on: 0, at: 1s}\n"
                                                           "  - {name: b, kind: crash, on: 1, at: 10s}\n"));
  EXPECT_EQ(crash.outcome, run::Outcome::kFail);
  EXPECT_EQ(crash.check, "elastic");
  EXPECT_THAT(crash.diagnosis, HasSubstr("rank 1: crash fault 'b' at 10.0 s, after 1 group restarts"));
}

TEST(ElasticTest, TheRestartedGroupHasFreshMarksAndBarriersAndSpawnedHelpersStop) {
  // Rank 0 marks `ready` at 2 s of each start, and its helper would mark `late` 20 s into it.
  // Rank 3 crashes at 5 s; all restart at 10 s. Rank 1 waits for `ready` again: the mark of the
  // first start is gone (a new rendezvous), so it passes at 12 s, not at 10 s; the first
  // helper never marks (stopped), the second marks at 30 s.
  auto r = run(make(4, "  - {spawn: {name: h, do: [{sleep: 20s}, {mark: {name: late, metric: true}}]}, on: rank0}\n"
                       "  - {sleep: 2s, on: rank0}\n  - {mark: ready, on: rank0}\n"
                       "  - {sleep: 8s, on: 3}\n  - wait: ready\n  - {mark: {name: through, metric: true}, on: 1}\n"
                       "  - barrier: all\n  - {mark: {name: all_in, metric: true}, on: 2}\n",
                    elastic(1) + "faults: [{name: c, kind: crash, on: 3, at: 5s}]\n"));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_NEAR(r.metrics.at("through_s"), 12, 1e-6) << "the first start's mark does not carry over";
  EXPECT_NEAR(r.metrics.at("all_in_s"), 18, 1e-6) << "the barrier counts the new start's arrivals only";
  EXPECT_NEAR(r.metrics.at("late_s"), 30, 1e-6) << "only the second start's helper marks";
  EXPECT_NEAR(r.metrics.at("makespan_s"), 30, 1e-6);
}

TEST(ElasticTest, APolicyIsCheckedAndRefusedWithModelsThatKeepProcessState) {
  EXPECT_THAT(compile_errors(1, "  - sleep: 1s\n", "platform:\n  elastic: {max_restarts: -1}\n"),
              HasSubstr("platform.elastic.max_restarts"));
  EXPECT_THAT(compile_errors(1, "  - sleep: 1s\n", "platform:\n  elastic: {max_restarts: 1, restart_after: 0s}\n"),
              HasSubstr("platform.elastic.restart_after"));
  EXPECT_THAT(compile_errors(1, "  - sleep: 1s\n", "platform:\n  elastic: {restarts: 1}\n"), HasSubstr("restarts"));
  EXPECT_THAT(compile_errors(1, "  - import: torch\n", "platform:\n  elastic: {max_restarts: 1}\n"),
              HasSubstr("'import' keeps state in the rank's process that a group restart does not reset yet"));
  // Without a policy a crash restarts only its rank, as before.
  auto r = run(make(2, "  - sleep: 10s\n", "faults: [{name: c, kind: crash, on: 1, at: 1s, restarts: 1, restart_after: 2s}]\n"));
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("restarts"), 1);
  EXPECT_EQ(r.metrics.count("elastic.restarts"), 0u);
  EXPECT_NEAR(r.metrics.at("makespan_s"), 13, 1e-9);
}

}  // namespace
}  // namespace racesim::scenario
