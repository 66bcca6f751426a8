// Honest metrics: a counter is 0 in a run that never adds to it, a count or sum over no sample
// is 0, and a metric name that no program records (a typo, a counter used as a series) is a
// located error when the scenario is compiled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
                                "(did you mean 'late_s'? series here: late_s;"));
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

}  // namespace
}  // namespace racesim::scenario
