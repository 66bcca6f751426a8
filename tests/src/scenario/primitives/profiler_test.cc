// The profiler primitives and the shipped profiler_flush_storm.yaml: each strategy's mechanism,
// read off the models' metrics of one run (the verdicts over many seeds are the scenario's
// expectations), and the cross-mount move's costs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// The shipped scenario at one point, with overrides; run `strategy` on `seed`.
run::RunRecord run_storm(const std::string& strategy, std::vector<std::string> overrides = {},
                         const std::string& point = "ranks=8", std::uint64_t seed = 1) {
  Diagnostics d;
  auto study = compile_study({.path = std::string(RACESIM_SOURCE) + "/scenarios/profiler_flush_storm.yaml",
                              .overrides = std::move(overrides), .strategies = {strategy}, .points = {point}},
                             d);
  EXPECT_TRUE(study) << d.to_string();
  if (!study) return {};
  return run::run_one(*study->programs.at(0), seed, {});
}

constexpr double kRaw = 67, kText = 14, kDb = 2;  // files per rank: raw data, analysis results

TEST(ProfilerStormTest, WithoutTheProfilersOutputNothingReachesStorage) {
  const auto r = run_storm("no_profiler");
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("profiler.files"), 0);
  EXPECT_EQ(r.metrics.at("profiler.traces"), 8);  // the schedule still ends a trace on every rank
  EXPECT_EQ(r.metrics.at("fs.shared.meta_ops"), 0);
}

TEST(ProfilerStormTest, DirectWritesEveryFileOnSharedStorageAndReadsTheRawDataBackFromIt) {
  const auto base = run_storm("no_profiler");
  const auto r = run_storm("direct");
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("profiler.files"), 8 * (kRaw + kText));
  EXPECT_EQ(r.metrics.at("fs.shared.files_at_end"), 8 * (kRaw + kText));
  EXPECT_GT(r.metrics.at("fs.shared.bytes_read"), 0);  // the analysis parses the raw data there
  EXPECT_LT(r.metrics.at("fs.shared.bytes_read"), r.metrics.at("fs.shared.bytes_written"));
  // 8 ranks create at once on 8 service threads: nobody queues; 64 ranks queue.
  EXPECT_EQ(r.metrics.at("fs.shared.mds_queue_peak"), 0);
  EXPECT_GT(run_storm("direct", {}, "ranks=64").metrics.at("fs.shared.mds_queue_peak"), 8);
  // The flush is inside the step: the slowest step grows by about the slowest flush.
  EXPECT_GT(r.metrics.at("flush_max_s"), 5);
  EXPECT_NEAR(r.metrics.at("step_max_s") - base.metrics.at("step_max_s"), r.metrics.at("flush_max_s"), 1.0);
  EXPECT_GT(r.metrics.at("collective.wait_s"), base.metrics.at("collective.wait_s"));
}

TEST(ProfilerStormTest, TheNotesFixNoLongerReadsFromSharedStorageButStillCreatesEveryFileThere) {
  const auto direct = run_storm("direct");
  const auto r = run_storm("local_then_move");
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("fs.shared.bytes_read"), 0);
  EXPECT_GT(r.metrics.at("fs.local.bytes_read"), 0);
  EXPECT_EQ(r.metrics.at("fs.shared.files_at_end"), 8 * (kRaw + kText));
  EXPECT_EQ(r.metrics.at("fs.local.files_at_end"), 0);
  EXPECT_EQ(r.metrics.at("fs.shared.bytes_written"), direct.metrics.at("fs.shared.bytes_written"));
}

TEST(ProfilerStormTest, ABackgroundMoveLeavesTheStepButADaemonDiesAtJobExit) {
  const auto sync = run_storm("local_then_move");
  const auto bg = run_storm("background_move");
  ASSERT_EQ(bg.outcome, run::Outcome::kPass) << bg.diagnosis;
  EXPECT_LT(bg.metrics.at("flush_max_s"), sync.metrics.at("flush_max_s"));
  EXPECT_EQ(bg.metrics.at("daemons_killed"), 0);  // 8 ranks: the move ends within the last 3 steps
  // One step after the flush is too short for the move: job exit kills the mover part way; what
  // it had not moved stays on the node's disk (a failed run), the copy it was writing is torn.
  const auto lost = run_storm("background_move", {"params.steps=3", "params.step_compute=100ms"});
  EXPECT_EQ(lost.outcome, run::Outcome::kFail);
  EXPECT_EQ(lost.metrics.at("daemons_killed"), 8);
  EXPECT_GT(lost.metrics.at("fs.local.files_at_end"), 0);
  EXPECT_THAT(lost.diagnosis, HasSubstr("fs.local.files_at_end"));
  // A non-daemon mover is waited for at exit: nothing lost.
  const auto joined = run_storm("background_move_joined", {"params.steps=3", "params.step_compute=100ms"});
  EXPECT_EQ(joined.outcome, run::Outcome::kPass) << joined.diagnosis;
  EXPECT_EQ(joined.metrics.at("fs.local.files_at_end"), 0);
}

TEST(ProfilerStormTest, RankZeroOnlyAnalysisOffAndDbExportWriteFewerFiles) {
  EXPECT_EQ(run_storm("rank0_only").metrics.at("profiler.files"), kRaw + kText);
  const auto off = run_storm("analysis_off");
  EXPECT_EQ(off.metrics.at("profiler.files"), 8 * kRaw);
  EXPECT_EQ(off.metrics.at("fs.shared.bytes_read"), 0);
  EXPECT_EQ(run_storm("db_export").metrics.at("profiler.files"), 8 * (kRaw + kDb));
}

TEST(ProfilerStormTest, PackingAndNodeAggregationCreateOneFilePerRankOrNodeOnSharedStorage) {
  const auto direct = run_storm("direct");
  for (const char* s : {"pack", "node_aggregator"}) {
    const auto r = run_storm(s);
    ASSERT_EQ(r.outcome, run::Outcome::kPass) << s << ": " << r.diagnosis;
    EXPECT_EQ(r.metrics.at("fs.shared.files_at_end"), 8 * (kRaw + kText)) << s;  // as members of archives
    EXPECT_EQ(r.metrics.at("fs.local.files_at_end"), 0) << s;
    EXPECT_LT(r.metrics.at("fs.shared.meta_ops"), 8 * 5) << s;  // makedirs, create, close: against thousands for direct
  }
  EXPECT_GT(direct.metrics.at("fs.shared.meta_ops"), 8 * (kRaw + kText) * 2);
}

TEST(ProfilerStormTest, ARateLimitOfOneSerialisesTheFlushes) {
  const auto direct = run_storm("direct");
  const auto r = run_storm("rate_limited", {"params.permits=1"});
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("semaphore.shared_storage.entries"), 8);
  EXPECT_GT(r.metrics.at("semaphore.shared_storage.wait_s"), 5 * direct.metrics.at("flush_max_s") * 0.8);
  EXPECT_EQ(r.metrics.at("fs.shared.mds_queue_peak"), 0);  // one flusher at a time: the 8 threads never queue
}

// Every rank waits at the next all-reduce only for the spread of the flushes when all flush at
// once, but for the whole flush when only rank 0 profiles: an exec timeout shorter than that
// fails the waiting ranks, naming the collective, and is counted.
TEST(ProfilerStormTest, RanksWaitForTheSlowestFlushUpToTheExecTimeout) {
  const auto direct = run_storm("direct");
  EXPECT_LT(direct.metrics.at("collective.wait_s"), direct.metrics.at("flush_max_s"));
  const auto r = run_storm("rank0_only", {"platform.collective.exec_timeout=5s"});
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "no_deadlock");
  EXPECT_THAT(r.diagnosis, HasSubstr("exec timeout after 5s in all_reduce"));
  EXPECT_GE(r.metrics.at("collective.exec_timeouts"), 1);
  const auto ok = run_storm("rank0_only");
  EXPECT_GT(ok.metrics.at("collective.wait_s"), 5);
  EXPECT_EQ(ok.metrics.at("collective.exec_timeouts"), 0);
}

TEST(ProfilerStormTest, JitterDelaysTheFlushInsideTheStep) {
  const auto direct = run_storm("direct");
  const auto r = run_storm("jittered");
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_GT(r.metrics.at("flush_max_s"), direct.metrics.at("flush_max_s"));
}

TEST(ProfilerStormTest, ASmallLocalDiskFailsTheLocalStrategiesWithEnospc) {
  const auto r = run_storm("local_then_move", {"platform.storage.local.capacity=8GiB"});
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "no_io_errors");
  EXPECT_THAT(r.diagnosis, HasSubstr("ENOSPC"));
  EXPECT_GE(r.metrics.at("fs.local.disk_full"), 1);
  EXPECT_EQ(run_storm("direct", {"platform.storage.local.capacity=8GiB"}).outcome, run::Outcome::kPass);
}

// shutil.move of a directory across mounts: the target's tree made, each file stat'ed, read,
// created, written and closed there, then each file unlinked and each directory removed.
TEST(ProfilerStormTest, ACrossMountMoveCostsWhatShutilMoveDoes) {
  const std::string platform =
      "platform:\n  storage:\n"
      "    l: {kind: local, mount: /l, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n"
      "    s: {kind: lustre, mount: /s, metadata: {threads: 1, create: {latency: 0s, service: 2ms}, stat: {latency: 0s, "
      "service: 1ms}, mkdir: {latency: 0s, service: 3ms}}, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n";
  auto f = make(1,
                "  - mkdir: {path: /l/d/sub, parents: true}\n"
                "  - write_file: {path: /l/d/a, size: 1MiB}\n"
                "  - write_file: {path: /l/d/sub/b, size: 1MiB}\n"
                "  - mark: {name: moving, metric: true}\n"
                "  - move: {from: /l/d, to: /s/d}\n"
                "  - mark: {name: moved, metric: true}\n",
                platform);
  const auto r = run(f);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  // On /s: the exists check (stat), mkdir d and d/sub, then per file a create and a close (a stat's cost).
  EXPECT_EQ(r.metrics.at("fs.s.meta_ops"), 1 + 2 + 2 * 2);
  EXPECT_EQ(r.metrics.at("fs.s.bytes_written"), 2 << 20);
  EXPECT_EQ(r.metrics.at("fs.s.files_at_end"), 2);
  EXPECT_EQ(r.metrics.at("fs.l.files_at_end"), 0);
  // The source: stat, a listing of d and of sub, per file a stat and an open, two unlinks, two rmdirs.
  // Before the move: mkdir d/sub (ENOENT, d, d/sub), two creates and two closes.
  EXPECT_EQ(r.metrics.at("fs.l.meta_ops"), (3 + 4) + (1 + 2 + 2 * 2 + 2 + 2));
  EXPECT_EQ(r.metrics.at("fs.l.bytes_read"), 2 << 20);
  // Time on /s: 1 + 3 + 3 ms of metadata, 2 x (2 + 1) ms per file, 2 x 10 ms of bytes; on /l:
  // 11 ms of metadata and 20 ms of reads.
  EXPECT_NEAR(r.metrics.at("moved_s") - r.metrics.at("moving_s"), (7 + 6 + 20 + 11 + 20) / 1000.0, 1e-6);
  // A metadata section on a local mount is an error naming the place.
  EXPECT_THAT(compile_errors(1, "  - mkdir: /l/x\n",
                             "platform:\n  storage:\n    l: {kind: local, mount: /l, metadata: lustre}\n"),
              HasSubstr("a local mount has no metadata server"));
}

// Bad metadata sections and ci sections are located errors that say what was expected.
TEST(ProfilerStormTest, BadMetadataAndCiSectionsAreLocatedErrors) {
  auto storage = [](const std::string& md) {
    return "platform:\n  storage:\n    s: {kind: lustre, mount: /s, metadata: " + md + "}\n";
  };
  EXPECT_THAT(compile_errors(1, "  - mkdir: /s/x\n", storage("fast")),
              HasSubstr("t.yaml:6:44: error: platform.storage.s.metadata: expected lustre (the mdtest defaults) or a map"));
  EXPECT_THAT(compile_errors(1, "  - mkdir: /s/x\n", storage("{threads: 0}")),
              HasSubstr("platform.storage.s.metadata.threads: expected 1 to 4096, got 0"));
  EXPECT_THAT(compile_errors(1, "  - mkdir: /s/x\n", storage("{create: {service: 1GiB}}")),
              HasSubstr("t.yaml:6:63: error: platform.storage.s.metadata.create.service: duration '1GiB' has unknown unit"));
  EXPECT_THAT(compile_errors(1, "  - mkdir: /s/x\n", storage("{creat: {service: 1ms}}")),
              HasSubstr("unknown key 'creat'"));
  EXPECT_THAT(compile_errors(1, "  - sleep: 1s\n", "ci: [ranks=8]\n"),
              HasSubstr("ci: expected a map {points: [FILTER, ...], seeds: N}"));
  EXPECT_THAT(compile_errors(1, "  - sleep: 1s\n", "ci: {points: ranks=8}\n"),
              HasSubstr("ci.points: expected a list of sweep point filters"));
  EXPECT_THAT(compile_errors(1, "  - sleep: 1s\n", "ci: {seeds: 0}\n"), HasSubstr("ci.seeds"));
}

}  // namespace
}  // namespace racesim::scenario
