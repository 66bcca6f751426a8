#include "src/report/aggregate.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/language/overrides.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace racesim::report {
namespace {

using ::testing::HasSubstr;

TEST(AggregateTest, WilsonIntervalMatchesReferenceValues) {
  // Reference values from an independent implementation of the Wilson score interval.
  struct Case {
    std::uint64_t k, n;
    double lo, hi;
  } cases[] = {{0, 10, 0.0, 0.2775327999},
               {5, 10, 0.2365930905, 0.7634069095},
               {1, 100, 0.0017674321, 0.0544861962},
               {316, 400, 0.7474205945, 0.8270622748},
               {10, 10, 0.7224672001, 1.0}};
  for (const Case& c : cases) {
    const Interval i = wilson_interval(c.k, c.n);
    EXPECT_NEAR(i.lo, c.lo, 1e-9) << c.k << "/" << c.n;
    EXPECT_NEAR(i.hi, c.hi, 1e-9) << c.k << "/" << c.n;
  }
  EXPECT_EQ(wilson_interval(0, 0).hi, 1.0);
}

TEST(AggregateTest, PercentilesInterpolateLinearly) {
  const std::vector<double> v = {4, 1, 10, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 50), 3.0);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 7.6);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 9.76);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 10.0);
  EXPECT_DOUBLE_EQ(percentile({5}, 99), 5.0);
  const Quantiles q = quantiles(v);
  EXPECT_DOUBLE_EQ(q.mean, 4.0);
  EXPECT_DOUBLE_EQ(q.max, 10.0);
}

// 2 strategies x 10 seeds; naive fails on seeds 0-2.
std::vector<run::RunRecord> records() {
  std::vector<run::RunRecord> r;
  for (int s = 0; s < 10; ++s) {
    run::RunRecord a{"naive", "", static_cast<std::uint64_t>(s), s < 3 ? run::Outcome::kFail : run::Outcome::kPass,
                     s < 3 ? "fail" : "", s < 3 ? "torn read" : "", 0, 0, {{"makespan_s", 10.0 + s}}, 0, ""};
    run::RunRecord b{"safe", "", static_cast<std::uint64_t>(s), run::Outcome::kPass, "", "", 0, 0,
                     {{"makespan_s", 20.0 + 2 * s}}, 0, ""};
    r.push_back(a);
    r.push_back(b);
  }
  return r;
}

TEST(AggregateTest, SummariesCountOutcomesAndCompareToTheFirstStrategy) {
  const auto s = summarize(records());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].strategy, "naive");
  EXPECT_EQ(s[0].failures, 3u);
  EXPECT_DOUBLE_EQ(s[0].failure_rate, 0.3);
  EXPECT_EQ(s[0].outcomes.at("fail"), 3u);
  EXPECT_EQ(s[0].example_seed, 0u);
  EXPECT_EQ(s[0].example_failure, "torn read");
  EXPECT_DOUBLE_EQ(s[0].metrics.at("makespan_s").p50, 14.5);
  // Over passed runs: naive's seeds 3-9 (p50 16 s), not its failures (which ended early).
  EXPECT_DOUBLE_EQ(*s[1].makespan_ratio, 29.0 / 16.0);
  const std::string table = format_table(s);
  EXPECT_THAT(table, HasSubstr("30.0% (10.8%-60.3%)"));
  EXPECT_THAT(table, HasSubstr("naive: e.g. seed 0: torn read"));
  // JSON outputs parse and carry the numbers.
  const auto j = nlohmann::json::parse(format_json("x", s));
  EXPECT_EQ(j["strategies"][0]["failures"], 3);
  EXPECT_THAT(format_csv(s), HasSubstr("\n,naive,10,3,0.3,"));
}

TEST(AggregateTest, ExpectationsPassAndFailOnTheCounts) {
  scenario::Scenario sc;
  auto expect = [&sc](const std::string& strategy) -> scenario::Expectation& {
    sc.expect.emplace_back();
    sc.expect.back().strategy = strategy;
    return sc.expect.back();
  };
  expect("naive").fails = true;
  expect("naive").never_fails = true;
  expect("safe").never_fails = true;
  auto& rate = expect("naive");
  rate.failure_rate_min = 0.4;
  rate.failure_rate_max = 1.0;
  // naive's makespans are 10..19 (p50 14.5); safe's 20..38.
  expect("naive").metrics.push_back({"makespan_s", "p50", 14.0, 15.0});
  auto& safe = expect("safe");
  safe.metrics.push_back({"makespan_s", "max", std::nullopt, 30.0});
  safe.metrics.push_back({"ready_s", "p99", 0.0, std::nullopt});
  const auto v = check_expectations(sc, summarize(records()));
  ASSERT_EQ(v.size(), 7u);
  EXPECT_TRUE(v[4].passed) << v[4].detail;   // p50(makespan_s) = 14.5 in [14, 15]
  EXPECT_EQ(v[4].expectation, "p50(makespan_s) in [14, 15]");
  EXPECT_FALSE(v[5].passed);                 // max 38 > 30
  EXPECT_EQ(v[5].detail, "max(makespan_s) = 38 over 10 of 10 runs");
  EXPECT_FALSE(v[6].passed);                 // never recorded
  EXPECT_THAT(v[6].detail, HasSubstr("'ready_s' was recorded in only 0 of 10 runs"));
  EXPECT_TRUE(v[0].passed);   // naive fails
  EXPECT_FALSE(v[1].passed);  // naive never_fails: wrong
  EXPECT_TRUE(v[2].passed);   // safe never fails
  EXPECT_FALSE(v[3].passed);  // 0.3 not in [0.4, 1]
  EXPECT_THAT(v[1].detail, HasSubstr("3 of 10 seeds failed"));
}

TEST(AggregateTest, AMetricRecordedInSomeRunsIsReportedWithItsCountAndFailsAnExpectation) {
  // ready_s is recorded only by the runs that got there: naive's 7 passed runs.
  auto recs = records();
  for (run::RunRecord& r : recs) {
    if (!run::failed(r.outcome)) r.metrics["ready_s"] = 1.0;
  }
  const auto s = summarize(recs);
  EXPECT_EQ(s[0].metrics.at("ready_s").n, 7u);
  EXPECT_EQ(s[1].metrics.at("ready_s").n, 10u);
  const std::string md = format_markdown("x", s);
  EXPECT_THAT(md, HasSubstr("| metric | naive | safe |\n|---|---:|---:|\n"));
  EXPECT_THAT(md, HasSubstr("| ready_s | 1 s (1 s), 7 of 10 | 1 s (1 s) |"));
  EXPECT_EQ(nlohmann::json::parse(format_json("x", s))["strategies"][0]["metrics"]["ready_s"]["n"], 7);
  scenario::Scenario sc;
  sc.expect.emplace_back();
  sc.expect.back().strategy = "naive";
  sc.expect.back().metrics.push_back({"ready_s", "max", std::nullopt, 2.0});
  const auto v = check_expectations(sc, s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].passed) << "max 1 <= 2 over the 7 runs that got there is not the strategy's max";
  EXPECT_EQ(v[0].detail, "metric 'ready_s' was recorded in only 7 of 10 runs (3 failed)");
}

TEST(AggregateTest, MetricsAreShownInTheUnitsTheirNamesSay) {
  auto recs = records();
  for (run::RunRecord& r : recs) {
    r.metrics["device.peak_bytes"] = 2147483648.0;
    r.metrics["fs.c.bytes_written"] = 1536.0;
    r.metrics["peak_gib"] = 1.5;
    r.metrics["compiles"] = 3;
  }
  const std::string md = format_markdown("x", summarize(recs));
  EXPECT_THAT(md, HasSubstr("| device.peak_bytes | 2 GiB (2 GiB) |"));
  EXPECT_THAT(md, HasSubstr("| fs.c.bytes_written | 1.5 KiB (1.5 KiB) |"));
  EXPECT_THAT(md, HasSubstr("| peak_gib | 1.5 GiB (1.5 GiB) |"));
  EXPECT_THAT(md, HasSubstr("| compiles | 3 (3) |"));
  EXPECT_THAT(md, HasSubstr("| makespan_s | 14.5 s (18.91 s) |"));
}

// The records of records() at two sweep points: at "w=slow" naive fails every seed.
std::vector<run::RunRecord> swept() {
  std::vector<run::RunRecord> out;
  for (const char* point : {"w=fast", "w=slow"}) {
    for (run::RunRecord r : records()) {
      r.point = point;
      if (r.strategy == "naive" && std::string(point) == "w=slow") r.outcome = run::Outcome::kFail;
      if (r.strategy == "safe") r.metrics["makespan_s"] *= 2;
      out.push_back(r);
    }
  }
  return out;
}

TEST(AggregateTest, SweepPointsAreSummarisedAndJudgedSeparately) {
  const auto s = summarize(swept());
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].point, "w=fast");
  EXPECT_EQ(s[2].point, "w=slow");
  EXPECT_EQ(s[2].failures, 10u);
  EXPECT_DOUBLE_EQ(*s[1].makespan_ratio, 58.0 / 16.0) << "the baseline is naive at the same point";
  // At w=slow naive passes no run: it has no makespan and no ratio (the time its runs took to
  // fail is not a speed), and the baseline there is safe, the first strategy that passes.
  EXPECT_FALSE(s[2].makespan_ratio);
  EXPECT_EQ(s[2].makespan_passed.n, 0u);
  EXPECT_EQ(s[3].baseline, "safe");
  EXPECT_DOUBLE_EQ(*s[3].makespan_ratio, 1.0);
  EXPECT_THAT(format_csv(s), HasSubstr("\nw=slow,naive,10,10,1,0.722467,1,,,,,14.5,18.91,10\n"));
  // With the sweep's axes: a column per axis, and every metric's p50, p99 and n.
  const std::string csv = format_csv(s, {"w"});
  EXPECT_THAT(csv, HasSubstr("w,point,strategy,runs,"));
  EXPECT_THAT(csv, HasSubstr(",makespan_ratio,makespan_s_p50,makespan_s_p99,makespan_s_n\n"));
  EXPECT_THAT(csv, HasSubstr("\nslow,w=slow,naive,10,10,"));
  EXPECT_THAT(format_markdown("x", s), HasSubstr("| w=slow | naive | 10 | 10 | 100.0% | 72.2% - 100.0% | - | - | - | - |"));
  EXPECT_THAT(format_table(s), HasSubstr("w=slow  naive"));
  EXPECT_THAT(format_csv(s), HasSubstr("\nw=slow,naive,10,10,1,"));
  EXPECT_THAT(format_markdown("x", s), HasSubstr("| w=slow | naive | 10 | 10 | 100.0% |"));

}

TEST(AggregateTest, ExpectationsWithAtApplyOnlyAtMatchingPoints) {
  scenario::Scenario sc;
  scenario::SweepAxis axis;
  axis.key = "w";
  axis.values = {scenario::Value::scalar_of("fast"), scenario::Value::scalar_of("slow")};
  axis.labels = {"fast", "slow"};
  sc.sweep.push_back(axis);
  auto add = [&sc](const std::string& strategy) -> scenario::Expectation& {
    sc.expect.emplace_back();
    sc.expect.back().strategy = strategy;
    return sc.expect.back();
  };
  auto& at_fast = add("naive");
  at_fast.failure_rate_max = 0.5;
  at_fast.at = {{"w", "fast"}};
  add("naive").fails = true;
  add("safe").never_fails = true;
  // Records labelled as sweep_points labels them.
  auto recs = swept();
  for (auto& r : recs) r.point = r.point == "w=fast" ? "w=fast" : "w=slow";
  const auto v = check_expectations(sc, summarize(recs));
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].point, "w=fast");
  EXPECT_TRUE(v[0].passed) << v[0].detail;  // 30% <= 50% at fast; slow is not judged
  EXPECT_TRUE(v[1].passed);
  EXPECT_EQ(v[2].point, "w=slow");
  EXPECT_TRUE(v[2].passed);
  EXPECT_TRUE(v[3].passed && v[4].passed);
  // An expectation whose point was never run fails, saying so.
  sc.expect[0].at = {{"w", "medium"}};
  EXPECT_FALSE(check_expectations(sc, summarize(recs))[0].passed);
}

}  // namespace
}  // namespace racesim::report

namespace racesim::report {
namespace {

// The terminal table names the checks that failed and how often, per strategy: what a live
// campaign's reader needs to tell a torn read from an I/O error.
TEST(AggregateTest, TheTableNamesTheChecksThatFailed) {
  std::vector<run::RunRecord> records(4);
  for (std::size_t i = 0; i < records.size(); ++i) {
    records[i].strategy = "s";
    records[i].seed = i;
    records[i].outcome = i == 3 ? run::Outcome::kPass : run::Outcome::kFail;
    records[i].check = i == 0 ? "no_io_errors" : i < 3 ? "model_loads_intact" : "";
  }
  const auto summaries = summarize(records);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].failed_checks.at("model_loads_intact"), 2u);
  EXPECT_EQ(summaries[0].failed_checks.at("no_io_errors"), 1u);
  const std::string table = format_table(summaries);
  EXPECT_THAT(table, HasSubstr("failed checks\n"));
  EXPECT_THAT(table, HasSubstr("fail:3 pass:1  model_loads_intact:2 no_io_errors:1\n"));
}

}  // namespace
}  // namespace racesim::report
