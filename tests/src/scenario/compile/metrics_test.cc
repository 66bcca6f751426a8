// Honest metrics: a counter is 0 in a run that never adds to it, a count or sum over no sample
// is 0, and a metric name that no program records (a typo, a counter used as a series) is a
// located error when the scenario is compiled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/report/aggregate.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// In about half the seeds the rank counts 'retried' and marks 'late'.
const char* kProgram = "  - sleep: 1s\n  - if: {chance: 0.5, then: [{count: retried}, {mark: late}]}\n";
const char* kMetrics =
    "metrics:\n  marks: {of: late_s, stat: count}\n  total: {of: late_s, stat: sum}\n"
    "  first: {of: late_s, stat: min}\n";

TEST(MetricsTest, CountersAndCountsAreZeroInRunsThatRecordNothing) {
  auto f = make(1, kProgram, kMetrics);
  ASSERT_TRUE(f.study);
  int with = 0, without = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const auto m = run(f, seed).metrics;
    ASSERT_TRUE(m.count("retried")) << "seed " << seed << ": a counter is in every run";
    ASSERT_TRUE(m.count("marks") && m.count("total"));
    if (m.at("retried") == 0) {
      ++without;
      EXPECT_EQ(m.at("marks"), 0.0);
      EXPECT_EQ(m.at("total"), 0.0);
      EXPECT_FALSE(m.count("first")) << "a minimum of no sample is not 0";
      EXPECT_FALSE(m.count("late_s"));
    } else {
      ++with;
      EXPECT_EQ(m.at("marks"), 1.0);
      EXPECT_EQ(m.at("first"), 1.0);
    }
  }
  EXPECT_GT(with, 5);
  EXPECT_GT(without, 5);
}

TEST(MetricsTest, ModelAndFaultCountersAreDeclaredToo) {
  auto f = make(2, "  - collective: {op: all_reduce, comm: world, bytes: 1MiB}\n",
                "faults: [{name: slow, kind: straggler, on: 1, probability: 0, factor: 3}]\n");
  ASSERT_TRUE(f.study);
  const auto m = run(f).metrics;
  EXPECT_EQ(m.at("faults.slow"), 0.0);
  EXPECT_EQ(m.at("faults.slow.hits"), 0.0);
  EXPECT_EQ(m.at("collective.count"), 1.0);
  const MetricNames& names = f.study->programs[0]->metric_names;
  EXPECT_TRUE(names.counters.count("collective.wait_s"));
  EXPECT_FALSE(names.counters.count("device.peak_bytes")) << "no step here uses a device";
}

TEST(MetricsTest, AUnknownSeriesIsALocatedErrorWithTheNearestName) {
  const std::string errors = compile_errors(1, kProgram, "metrics:\n  m: {of: lates_s, stat: max}\n");
  EXPECT_THAT(errors, HasSubstr("t.yaml:5:11: error: metric 'm': no strategy records a series 'lates_s' "
                                "(did you mean 'late_s'? series here: none; marks here: late;"));
}

TEST(MetricsTest, ACounterIsNotASeries) {
  EXPECT_THAT(compile_errors(1, kProgram, "metrics:\n  m: {of: retried, stat: mean}\n"),
              HasSubstr("metric 'm': 'retried' is a run's total (a counter or a model's metric), not a "
                        "per-rank series; name it directly in checks or expect"));
}

TEST(MetricsTest, ChecksAndExpectationsNameMetricsTheStrategyRecords) {
  EXPECT_THAT(compile_errors(1, kProgram, "checks: [{metric: retired, max: 1}]\n"),
              HasSubstr("checks: metric 'retired' is not recorded by strategy 'only' (did you mean 'retried'?"));
  EXPECT_THAT(compile_errors(1, kProgram, "", "strategies: {a: {}}\nexpect:\n  a: {metric: {name: collective.wait_s, max: 1}}\n"),
              HasSubstr("t.yaml:9:22: error: expect.a: metric 'collective.wait_s' is not recorded by this strategy"));
  EXPECT_EQ(compile_errors(1, kProgram, "checks: [{metric: retried, max: 1}]\n"), "");
}

TEST(MetricsTest, ASeriesOnlySomeStrategiesRecordMayBeDerived) {
  // Only strategy b marks 'done'; the metric is absent in a's runs (reported as n of N), not an
  // error, and still checked when only a is compiled.
  const std::string program = "  - slot: s\n";
  const std::string strategies = "strategies:\n  a: {s: [{sleep: 1s}]}\n  b: {s: [{mark: done}]}\n";
  EXPECT_EQ(compile_errors(1, program, "metrics:\n  d: {of: done_s, stat: max}\n", strategies), "");
  Diagnostics d;
  auto only_a = compile_study({.path = "t.yaml",
                               .text = "name: t\nranks: 1\nmetrics:\n  d: {of: done_s, stat: max}\nprogram:\n" +
                                       program + strategies,
                               .strategies = {"a"}},
                              d);
  EXPECT_TRUE(only_a) << d.to_string();
}

TEST(MetricsTest, BetweenPairsEachRanksMarksInOrder) {
  // Three steps per rank; rank r's step k takes (r + 1) * (k + 1) * 100 ms.
  auto f = make(2,
                "  - for_each: {var: k, range: 3, do: [{mark: step_start}, {sleep: \"${(rank + 1) * (k + 1) * 100ms}\"}, "
                "{mark: step_end}]}\n",
                "metrics:\n  step_max: {between: [step_start, step_end], stat: max}\n"
                "  steps: {between: [step_start, step_end], stat: count}\n"
                "  step_total: {between: [step_start, step_end], stat: sum}\n");
  ASSERT_TRUE(f.study);
  const auto m = run(f).metrics;
  EXPECT_DOUBLE_EQ(m.at("step_max"), 0.6);
  EXPECT_EQ(m.at("steps"), 6.0);
  EXPECT_NEAR(m.at("step_total"), 0.6 + 1.2, 1e-9);
  EXPECT_THAT(compile_errors(1, "  - mark: step_start\n", "metrics:\n  d: {between: [step_start, step_ed], stat: max}\n"),
              HasSubstr("between: no strategy sets a mark 'step_ed' (marks here: step_start)"));
}

TEST(MetricsTest, ARatioToAnotherStrategyIsPairedSeedBySeed) {
  // b sleeps exactly twice as long as a on every seed (the same draw: paired seeds).
  const std::string extra = "params:\n  t: {uniform: {min: 1s, max: 9s}}\n";
  const std::string program = "  - slot: work\n";
  const std::string strategies =
      "strategies:\n  a: {work: [{sleep: \"${t}\"}]}\n  b: {work: [{sleep: \"${t * 2}\"}]}\n"
      "expect:\n  b:\n    - metric: {name: makespan_s, stat: max, ratio_to: a, min: 1.999, max: 2.001}\n"
      "    - metric: {name: makespan_s, stat: p50, ratio_to: a, max: 1.5}\n";
  auto f = make(1, program, extra, strategies);
  ASSERT_TRUE(f.study);
  std::vector<run::RunRecord> records;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    for (const auto& p : f.study->programs) records.push_back(run::run_one(*p, seed, {}));
  }
  const auto v = report::check_expectations(f.study->scenario, report::summarize(records), &records);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].passed) << v[0].detail;
  EXPECT_EQ(v[0].detail, "max(makespan_s / a's) = 2, paired over 20 of 20 seeds");
  EXPECT_FALSE(v[1].passed);
  EXPECT_FALSE(report::check_expectations(f.study->scenario, report::summarize(records))[0].passed)
      << "without the runs a paired expectation fails";
  EXPECT_THAT(compile_errors(1, program, extra, "strategies:\n  a: {work: []}\nexpect:\n  a: {metric: {name: makespan_s, ratio_to: c, max: 1}}\n"),
              HasSubstr("ratio_to: 'c' is not a strategy (strategies: a)"));
}

}  // namespace
}  // namespace racesim::scenario
