// Stackless ranks (rank_machine.h): which programs run so, and that a run of each is the same,
// event for event, as the run on fibers (outcome, check, diagnosis, makespan, events, metrics and
// trace hash), through faults, errors, restarts, deadlocks and the limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/scenario/compile/compiler.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

bool stackless(const Fixture& f) { return f.study->programs.at(0)->stackless; }

// Runs seeds 0..seeds-1 both ways and compares every record field a run can differ in; returns
// the stackless records.
std::vector<run::RunRecord> same_both_ways(const Fixture& f, int seeds) {
  std::vector<run::RunRecord> out;
  for (int seed = 0; seed < seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto& program = *f.study->programs.at(0);
    run::RunOptions fibers;
    fibers.stackless_ranks = false;
    run::RunOptions tapes = fibers;
    tapes.record_choices = tapes.log_events = true;
    const run::RunRecord a = run::run_one(program, static_cast<std::uint64_t>(seed), fibers);
    const run::RunRecord b = run::run_one(program, static_cast<std::uint64_t>(seed), {});
    EXPECT_EQ(to_string(a.outcome), to_string(b.outcome));
    EXPECT_EQ(a.check, b.check);
    EXPECT_EQ(a.diagnosis, b.diagnosis);
    EXPECT_EQ(a.makespan, b.makespan);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.metrics, b.metrics);
    EXPECT_EQ(a.trace_hash, b.trace_hash);
    // The tape and the event log (what explore and shrink read) too, step sites included.
    run::RunOptions stackless_tapes = tapes;
    stackless_tapes.stackless_ranks = true;
    const run::RunRecord ta = run::run_one(program, static_cast<std::uint64_t>(seed), tapes);
    const run::RunRecord tb = run::run_one(program, static_cast<std::uint64_t>(seed), stackless_tapes);
    EXPECT_EQ(ta.tape.size(), tb.tape.size());
    EXPECT_EQ(ta.event_log.size(), tb.event_log.size());
    EXPECT_TRUE(ta.event_log == tb.event_log);
    EXPECT_EQ(ta.entered_sites.size(), tb.entered_sites.size());
    EXPECT_EQ(ta.trace_hash, a.trace_hash);
    // Under a random schedule and PCT (what explore runs), which decide every tie.
    for (const auto& policy : {kernel::PolicySpec::random(static_cast<std::uint64_t>(seed)),
                               kernel::PolicySpec::pct(3, 10000, static_cast<std::uint64_t>(seed))}) {
      run::RunOptions fiber_policy = fibers, stackless_policy;
      fiber_policy.policy = stackless_policy.policy = policy;
      const run::RunRecord pa = run::run_one(program, static_cast<std::uint64_t>(seed), fiber_policy);
      const run::RunRecord pb = run::run_one(program, static_cast<std::uint64_t>(seed), stackless_policy);
      EXPECT_EQ(pa.trace_hash, pb.trace_hash);
      EXPECT_EQ(pa.makespan, pb.makespan);
      EXPECT_EQ(pa.metrics, pb.metrics);
    }
    out.push_back(b);
  }
  return out;
}

TEST(RankMachineTest, WhichProgramsRunStackless) {
  EXPECT_TRUE(stackless(make(2, "  - compute: 1s\n  - barrier: b\n")));
  EXPECT_TRUE(stackless(make(2, "  - repeat: {times: 3, do: [{sleep: 1ms}, {collective: {op: all_reduce, bytes: 1MiB}}, "
                                "{count: steps}]}\n")));
  // A step that may block anywhere runs on a fiber, and so does every rank of its program.
  EXPECT_FALSE(stackless(make(2, "  - compute: 1s\n  - wait: {marked: m, timeout: 1s}\n")));
  EXPECT_FALSE(stackless(make(2, "  - repeat: {times: 2, do: [{fail: x}]}\n")));
  EXPECT_TRUE(stackless(make(2, "  - let: {x: 2}\n  - repeat: {times: 2, do: [{mark: m}]}\n")));
  // Slots, uses, unrolled for_each loops and ifs whose condition does not ask the file system.
  EXPECT_TRUE(stackless(make(2, "  - slot: s\n  - for_each: {var: i, range: 3, do: [{if: {chance: 0.5, then: [{compute: 1s}]}}]}\n",
                             "", "strategies: {a: {s: [{barrier: b}]}}\n")));
  EXPECT_FALSE(stackless(make(2, "  - slot: s\n", "", "strategies: {a: {s: [{wait: {marked: m}}]}}\n")));
  EXPECT_FALSE(stackless(make(2, "  - if: {chance: 0.5, then: [{compute: 1s}], else: [{wait: {marked: m}}]}\n")));
  EXPECT_FALSE(stackless(make(2, "  - if: {exists: /x, then: [{compute: 1s}]}\n",
                              "platform:\n  storage:\n    c: {kind: local, mount: /x}\n")));
  // Compute on the node's cores shares them through a scheduler that blocks: a fiber.
  EXPECT_FALSE(stackless(make(2, "  - compute: 1s\n", "platform:\n  host: {cores: 1}\n")));
}

TEST(RankMachineTest, ComputeBarriersAndCollectivesAreTheSameEventsAsOnFibers) {
  const Fixture f = make(6,
                         "  - compute: {lognormal: {median: 1s, sigma: 0.5}}\n"
                         "  - barrier: start\n"
                         "  - repeat:\n      times: 4\n      do:\n"
                         "        - compute: {uniform: {min: 10ms, max: 30ms}}\n"
                         "        - {collective: {op: all_reduce, bytes: 64MiB}}\n"
                         "        - {collective: {op: broadcast, bytes: 1MiB, comm: {name: pair, ranks: [0, 1]}}, on: [0, 1]}\n"
                         "        - count: steps\n"
                         "        - let: {t: {uniform: {min: 0, max: 1}}}\n"
                         "        - {mark: {name: stepped, metric: true}, on: 0}\n"
                         "        - {sleep: 5ms, on: 3}\n"
                         "        - if: {chance: 0.3, then: [{compute: 7ms}, {count: slow}], else: [{slot: s}]}\n"
                         "  - for_each: {var: i, range: 3, do: [{compute: \"${(i + 1) * 1ms}\"}, {if: {marked: stepped, then: [{count: seen}]}}]}\n"
                         "  - barrier: end\n",
                         "faults: [{name: slow, kind: straggler, on: 2, factor: 3}]\n",
                         "strategies: {a: {s: [{sleep: 2ms}]}}\n");
  ASSERT_TRUE(stackless(f));
  const auto records = same_both_ways(f, 8);
  EXPECT_EQ(records[0].outcome, run::Outcome::kPass) << records[0].diagnosis;
  EXPECT_EQ(records[0].metrics.at("steps"), 6 * 4);
  EXPECT_EQ(records[0].metrics.at("collective.count"), 4 + 4);
  EXPECT_GT(records[0].metrics.at("slow"), 0);
  EXPECT_EQ(records[0].metrics.at("seen"), 6 * 3) << "rank 0 marked stepped before any rank's for_each";
  EXPECT_NE(records[0].trace_hash, records[1].trace_hash) << "seeds draw differently";
}

TEST(RankMachineTest, ACrashAndAGroupRestartAreTheSameAsOnFibers) {
  const Fixture f = make(4,
                         "  - compute: 2s\n"
                         "  - repeat: {times: 5, do: [{compute: 1s}, {collective: {op: all_reduce, bytes: 1MiB}}]}\n"
                         "  - barrier: end\n",
                         "platform:\n  elastic: {max_restarts: 2, restart_after: 5s}\n"
                         "faults: [{name: c, kind: crash, on: 1, at: {uniform: {min: 0s, max: 8s}}}]\n");
  ASSERT_TRUE(stackless(f));
  const auto records = same_both_ways(f, 6);
  EXPECT_EQ(records[0].outcome, run::Outcome::kPass) << records[0].diagnosis;
  EXPECT_EQ(records[0].metrics.at("elastic.restarts"), 1);
  EXPECT_EQ(records[0].metrics.at("crashed_ranks"), 1);
}

TEST(RankMachineTest, ACrashWithoutRestartsLeavesTheSameDeadlock) {
  // Rank 1 dies in the barrier's wait or before: the others wait for it for ever.
  const Fixture f = make(3, "  - compute: 1s\n  - barrier: b\n  - compute: 1s\n  - barrier: c\n",
                         "faults: [{name: c, kind: crash, on: 1, at: {uniform: {min: 0s, max: 1500ms}}}]\n");
  ASSERT_TRUE(stackless(f));
  const auto records = same_both_ways(f, 6);
  EXPECT_EQ(records[0].outcome, run::Outcome::kDeadlock);
  EXPECT_EQ(records[0].check, "no_deadlock");
  EXPECT_THAT(records[0].diagnosis, HasSubstr("killed at"));
}

TEST(RankMachineTest, AnExecTimeoutIsTheSameStepErrorAsOnFibers) {
  // Rank 1 never issues the collective: rank 0's sync times out.
  const Fixture f = make(2, "  - {collective: {op: all_reduce, bytes: 1MiB}, on: 0}\n  - count: after\n",
                         "platform:\n  collective: {exec_timeout: 30s}\n");
  ASSERT_TRUE(stackless(f));
  const auto records = same_both_ways(f, 2);
  EXPECT_EQ(records[0].check, "no_deadlock");
  EXPECT_THAT(records[0].diagnosis, HasSubstr("exec timeout after 30s"));
  EXPECT_EQ(records[0].makespan, 30 * kernel::kSecond);
}

TEST(RankMachineTest, TheLimitsEndARunAsOnFibers) {
  // The event limit, reached by a loop that never blocks (its iterations count as work).
  Fixture spin;
  Diagnostics d;
  spin.study = compile_study({.path = "t.yaml", .text = "name: t\nranks: 2\nlimits: {time: 1h, events: 5000}\n"
                                                        "program: [{repeat: {times: 1000000, do: [{count: n}]}}]\n"
                                                        "strategies: {only: }\n"},
                             d);
  ASSERT_TRUE(spin.study) << d.to_string();
  ASSERT_TRUE(stackless(spin));
  const auto spun = same_both_ways(spin, 1);
  EXPECT_EQ(spun[0].outcome, run::Outcome::kTimeout);
  EXPECT_EQ(spun[0].check, "no_timeout");
  EXPECT_THAT(spun[0].diagnosis, HasSubstr("event limit 5000 reached"));
  // The time limit, with a rank asleep for 100 days.
  const Fixture slow = make(3, "  - compute: 30min\n  - {sleep: 2400h, on: 0}\n  - barrier: b\n");
  ASSERT_TRUE(stackless(slow));
  const auto slept = same_both_ways(slow, 1);
  EXPECT_EQ(slept[0].check, "no_timeout");
  EXPECT_EQ(slept[0].makespan, 3600 * kernel::kSecond);
}

}  // namespace
}  // namespace racesim::scenario
