// Results side by side: the difference's interval against a published reference, labels kept
// apart, and tables that mark a difference only where the interval excludes 0.
#include "src/report/comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// n runs of `strategy`, the first `failed` of them failing, with a makespan and a metric.
std::vector<run::RunRecord> runs(const std::string& strategy, int n, int failed, double makespan_s) {
  std::vector<run::RunRecord> out;
  for (int s = 0; s < n; ++s) {
    run::RunRecord r;
    r.strategy = strategy;
    r.seed = static_cast<std::uint64_t>(s);
    r.outcome = s < failed ? run::Outcome::kFail : run::Outcome::kPass;
    r.metrics = {{"makespan_s", makespan_s}, {"ready_p50_s", makespan_s / 2}};
    out.push_back(r);
  }
  return out;
}

Experiment experiment(const std::string& policy, std::uint64_t seeds) {
  Experiment e;
  e.scenario = "x";
  e.policy = policy;
  e.seeds = seeds;
  e.version = "test";
  return e;
}

// Newcombe (1998), Statistics in Medicine 17:873, table II, example (a): 56/70 against 48/80,
// method 10: the difference 0.2000 with 95% interval 0.0524 to 0.3339.
TEST(ComparisonTest, TheDifferenceIntervalIsNewcombesHybridScore) {
  const Interval d = difference_interval(48, 80, 56, 70);
  EXPECT_NEAR(d.lo, 0.0524, 5e-5);
  EXPECT_NEAR(d.hi, 0.3339, 5e-5);
  const Interval reverse = difference_interval(56, 70, 48, 80);
  EXPECT_NEAR(reverse.lo, -0.3339, 5e-5);
  EXPECT_NEAR(reverse.hi, -0.0524, 5e-5);
  const Interval none = difference_interval(0, 300, 0, 300);
  EXPECT_LT(none.lo, 0);
  EXPECT_GT(none.hi, 0);
}

TEST(ComparisonTest, SidesAreLabelledByModeAndFileSystemAndKeptApart) {
  std::vector<Side> sides = {side_of(experiment("fifo", 4), runs("a", 4, 0, 10)),
                             side_of(experiment("live:scale=0.01:fs=tmpfs", 4), runs("a", 4, 0, 10)),
                             side_of(experiment("live:scale=0.01:fs=ext4", 4), runs("a", 4, 0, 10)),
                             side_of(experiment("live:scale=0.01:fs=tmpfs", 4), runs("a", 4, 0, 10)),
                             side_of(experiment("random", 4), runs("a", 4, 0, 10))};
  label_sides(sides);
  EXPECT_EQ(sides[0].label, "sim");
  EXPECT_EQ(sides[1].label, "live tmpfs");
  EXPECT_EQ(sides[2].label, "live ext4");
  EXPECT_EQ(sides[3].label, "live tmpfs #2");
  EXPECT_EQ(sides[4].label, "sim #2");
  EXPECT_EQ(sides[1].setup, "live runs on tmpfs at time scale 0.01, 4 seeds from 0, racesim test");
}

TEST(ComparisonTest, TablesMarkADifferenceOnlyWhereTheIntervalExcludesZero) {
  auto sim = runs("flaky", 300, 0, 100);
  auto more = runs("safe", 300, 0, 120);
  sim.insert(sim.end(), more.begin(), more.end());
  auto live = runs("flaky", 300, 30, 110);
  more = runs("safe", 300, 1, 180);
  live.insert(live.end(), more.begin(), more.end());
  more = runs("live_only", 10, 0, 5);
  live.insert(live.end(), more.begin(), more.end());
  std::vector<Side> sides = {side_of(experiment("fifo", 300), sim),
                             side_of(experiment("live:scale=0.01:fs=tmpfs", 300), live)};
  label_sides(sides);
  const std::string md = format_comparison_markdown(sides, {"ready_p50_s"});
  EXPECT_THAT(md, HasSubstr("| flaky | 0 of 300 | 0.0% (0.0%-1.3%) | 30 of 300 | 10.0% (7.1%-13.9%) | +10.0 pts ("));
  EXPECT_THAT(md, testing::ContainsRegex("\\| flaky \\|[^\n]*\\*\\*differ\\*\\*"));
  EXPECT_THAT(md, testing::ContainsRegex("\\| safe \\|[^\n]*\\| \\+0.3 pts \\(-[0-9.]+ to \\+[0-9.]+\\) \\|\n"));
  EXPECT_THAT(md, HasSubstr("| live_only | not run | - | 0 of 10 |"));
  EXPECT_THAT(md, HasSubstr("1 of 2 comparisons agree"));
  // Paired by seed: seeds 0-29 of flaky fail live only; the simulation ran no live_only seeds.
  EXPECT_THAT(md, HasSubstr("| flaky | 300 | 0 | 0 | 30 | 270 |"));
  EXPECT_THAT(md, HasSubstr("| safe | 300 | 0 | 0 | 1 | 299 |"));
  EXPECT_THAT(md, HasSubstr("| live_only | 0 | - | - | - | - |"));
  EXPECT_THAT(md, HasSubstr("| safe | makespan (passed) | 120 s (n 300) | 180 s (n 299) | 1.5x |"));
  EXPECT_THAT(md, HasSubstr("| flaky | ready_p50_s | 50 s (n 300) | 55 s (n 300) | 1.1x |"));
  const std::string csv = format_comparison_csv(sides, {"ready_p50_s"});
  EXPECT_THAT(csv, HasSubstr("\n,flaky,sim,300,0,0,0,0.0126"));
  EXPECT_THAT(csv, testing::ContainsRegex("\n,flaky,live tmpfs,300,30,0.1,0.07[0-9]+,0.13[0-9]+,0.06[0-9]+,0.13[0-9]+,110,55,300\n"));
  EXPECT_THAT(csv, Not(HasSubstr("live_only,sim")));
}

}  // namespace
}  // namespace racesim::report
