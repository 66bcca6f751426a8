// Bounded exhaustive search (exhaustive.h): it enumerates a small space completely (counted by
// hand for two processes), each schedule once, within the delay bound; it finds a planted bug;
// it says when the budget left the space unexplored; and it finds the same on any threads.
#include "src/search/exhaustive.h"
#include "src/search/explore.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/search/looks_apart.h"

namespace racesim::search {
namespace {

// Two ranks, each: three steps at time 0, a yield between (sleep 0s). Each rank dispatches 3
// events (its start and two resumes); while both can run, every dispatch is a choice of which.
// The schedules are the interleavings of two sequences of 3: C(6, 3) = 20.
constexpr const char* kTwo = R"(name: two
ranks: 2
program:
  - sleep: 0s
  - sleep: 0s
strategies:
  only: {}
)";

// Rank 1 fails if rank 0 marks m1 to m4 between its two looks (looks_apart.h). In sticky order a
// rank goes on while it can, so it takes 2 preemptions: rank 1 started before rank 0's first mark
// (1), then, after its first look, rank 0 run instead of it (2), which marks m1 to m4 for free.
// Found with 2, not with 1.
const std::string kPlanted = test::looks_apart(2, 4);

std::unique_ptr<scenario::Study> compile(const std::string& text) { return test::compile_text(text); }

ExploreResult search(const scenario::CompiledProgram& p, int bound, std::uint64_t budget = 100000, int jobs = 1,
                     bool all = false, bool reduce = true) {
  ExploreOptions o;
  o.mode = Mode{ModeKind::kExhaustive, bound};
  o.budget_runs = budget;
  o.jobs = jobs;
  o.all = all;
  o.reduce = reduce;
  return explore(p, o);
}

TEST(ExhaustiveTest, EnumeratesEveryInterleavingOfTwoProcessesOnce) {
  auto s = compile(kTwo);
  ASSERT_TRUE(s);
  // Unbounded in effect (a run has at most 5 choices): all 20 interleavings, each once.
  const ExploreResult all = search(*s->programs[0], 64, 100000, 1, false, false);
  EXPECT_TRUE(all.coverage.exhausted);
  EXPECT_EQ(all.coverage.runs, 20u);
  EXPECT_EQ(all.coverage.distinct_schedules, 20u);
  EXPECT_EQ(all.coverage.pending, 0u);
  // No delay: fifo's one run.
  const ExploreResult none = search(*s->programs[0], 0, 100000, 1, false, false);
  EXPECT_TRUE(none.coverage.exhausted);
  EXPECT_EQ(none.coverage.runs, 1u);
  // The bound grows the space monotonically up to all of it, never running a schedule twice.
  std::uint64_t before = 1;
  for (int d = 1; d <= 5; ++d) {
    const ExploreResult r = search(*s->programs[0], d, 100000, 1, false, false);
    EXPECT_TRUE(r.coverage.exhausted);
    EXPECT_EQ(r.coverage.runs, r.coverage.distinct_schedules) << d;
    EXPECT_GE(r.coverage.runs, before) << d;
    before = r.coverage.runs;
  }
  EXPECT_EQ(before, 20u);
}

// Partial-order reduction (reduction.h), counted by hand. Two ranks, one step each, both due at
// time 0: one schedule choice of two options, so 2 schedules without the reduction. Marking two
// different marks commutes: 1 with it. Marking a mark and looking at the same one does not: 2.
// Two ranks that only sleep (kTwo): 20 interleavings, all of which commute: 1.
TEST(ExhaustiveTest, TheReductionRunsOneOrderOfStepsThatCommuteCountedByHand) {
  auto two_steps = [](const std::string& rank0, const std::string& rank1) {
    return compile("name: t\nranks: 2\nprogram:\n  - if: {rank: 0, then: [" + rank0 + "], else: [" + rank1 +
                   "]}\nstrategies:\n  only: {}\n");
  };
  auto count = [](const scenario::Study& s, bool reduce) {
    const ExploreResult r = search(*s.programs[0], 64, 100000, 1, false, reduce);
    EXPECT_TRUE(r.coverage.exhausted);
    EXPECT_EQ(r.coverage.reduced, reduce);
    return r.coverage.runs;
  };
  auto apart = two_steps("{mark: a}", "{mark: b}");
  auto same = two_steps("{mark: a}", "{if: {marked: a, then: [], else: []}}");
  auto sleeps = compile(kTwo);
  ASSERT_TRUE(apart && same && sleeps);
  EXPECT_EQ(count(*apart, false), 2u);
  EXPECT_EQ(count(*apart, true), 1u);
  EXPECT_EQ(count(*same, false), 2u);
  EXPECT_EQ(count(*same, true), 2u);
  EXPECT_EQ(count(*sleeps, false), 20u);
  EXPECT_EQ(count(*sleeps, true), 1u);
}

// Two ranks each write a file: on two mounts the writes commute (one run), on one mount they share
// its metadata server and bandwidth, so their orders are run.
TEST(ExhaustiveTest, TheReductionTellsTwoMountsApart) {
  auto writes = [](const std::string& second) {
    return compile(
        "name: t\nranks: 2\nplatform:\n  storage:\n"
        "    a: {kind: nfs, mount: /a, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s}\n"
        "    b: {kind: nfs, mount: /b, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s}\n"
        "program:\n  - if: {rank: 0, then: [{write_file: {path: /a/x, size: 1MiB}}], else: [{write_file: {path: " +
        second + ", size: 1MiB}}]}\nstrategies:\n  only: {}\n");
  };
  auto apart = writes("/b/x");
  auto together = writes("/a/y");
  ASSERT_TRUE(apart && together);
  const ExploreResult apart_full = search(*apart->programs[0], 64, 100000, 1, false, false);
  const ExploreResult apart_reduced = search(*apart->programs[0], 64, 100000, 1, false, true);
  const ExploreResult together_reduced = search(*together->programs[0], 64, 100000, 1, false, true);
  EXPECT_TRUE(apart_full.coverage.exhausted && apart_reduced.coverage.exhausted && together_reduced.coverage.exhausted);
  EXPECT_GT(apart_full.coverage.runs, 1u);
  EXPECT_EQ(apart_reduced.coverage.runs, 1u);
  EXPECT_GT(together_reduced.coverage.runs, 1u);
}

// A bug decided by the order of two dependent steps, among steps that commute: rank 1 fails when
// it looks for mark `a` before rank 0 sets it (one preemption from fifo's order), while ranks 2
// and 3 sleep around them. The reduction finds it in fewer runs and, searching the whole bounded
// space, finds the same failures.
TEST(ExhaustiveTest, TheReductionKeepsAPlantedBug) {
  auto s = compile(
      "name: t\nranks: 4\nprogram:\n"
      "  - sleep: 0s\n"
      "  - if: {rank: 0, then: [{mark: a}]}\n"
      "  - if: {rank: 1, then: [{if: {marked: a, then: [], else: [{fail: looked before a}]}}]}\n"
      "  - if: {rank: [2, 3], then: [{sleep: 0s}, {sleep: 0s}]}\n"
      "strategies:\n  only: {}\n");
  ASSERT_TRUE(s);
  for (int bound : {1, 2}) {
    const ExploreResult full = search(*s->programs[0], bound, 100000, 1, true, false);
    const ExploreResult reduced = search(*s->programs[0], bound, 100000, 1, true, true);
    ASSERT_EQ(full.findings.size(), 1u) << bound;
    ASSERT_EQ(reduced.findings.size(), 1u) << bound;
    EXPECT_EQ(reduced.findings[0].signature, full.findings[0].signature);
    EXPECT_THAT(reduced.findings[0].record.diagnosis, ::testing::HasSubstr("looked before a"));
    EXPECT_TRUE(full.coverage.exhausted && reduced.coverage.exhausted);
    EXPECT_LT(reduced.coverage.runs, full.coverage.runs) << bound;
  }
}

TEST(ExhaustiveTest, FindsAPlantedBugAtItsDelayAndNotBelow) {
  auto s = compile(kPlanted);
  ASSERT_TRUE(s);
  const ExploreResult below = search(*s->programs[0], 1);
  EXPECT_TRUE(below.findings.empty());
  EXPECT_TRUE(below.coverage.exhausted);
  const ExploreResult one = search(*s->programs[0], 2);
  ASSERT_EQ(one.findings.size(), 1u);
  EXPECT_THAT(one.findings[0].record.diagnosis, ::testing::HasSubstr("4 steps between the looks"));
  EXPECT_FALSE(one.coverage.exhausted);  // it stopped at the failure
  // The finding's tape replays strictly to its run.
  run::RunOptions replay;
  replay.policy = kernel::PolicySpec::replay(one.findings[0].record.tape);
  replay.policy.sticky = true;
  const run::RunRecord again = run::run_one(*s->programs[0], 0, replay);
  EXPECT_EQ(again.trace_hash, one.findings[0].record.trace_hash);
  EXPECT_EQ(again.replay_divergence, "");
}

TEST(ExhaustiveTest, ABudgetLeavesPrefixesAndTheSameRunsOnAnyThreads) {
  auto s = compile(kTwo);
  ASSERT_TRUE(s);
  const ExploreResult cut = search(*s->programs[0], 64, 7, 1, false, false);
  EXPECT_EQ(cut.coverage.runs, 7u);
  EXPECT_FALSE(cut.coverage.exhausted);
  EXPECT_GT(cut.coverage.pending, 0u);
  auto planted = compile(kPlanted);
  ASSERT_TRUE(planted);
  const ExploreResult a = search(*planted->programs[0], 5, 100000, 1, true);
  const ExploreResult b = search(*planted->programs[0], 5, 100000, 3, true);
  EXPECT_FALSE(a.findings.empty());
  EXPECT_EQ(a.coverage.runs, b.coverage.runs);
  EXPECT_EQ(a.coverage.distinct_schedules, b.coverage.distinct_schedules);
  EXPECT_EQ(a.coverage.choices, b.coverage.choices);
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (std::size_t i = 0; i < a.findings.size(); ++i) EXPECT_EQ(a.findings[i].run, b.findings[i].run);
}

}  // namespace
}  // namespace racesim::search
