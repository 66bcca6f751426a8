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
  // Medians, and their ratios over the seeds both sides recorded: live's failed seed 0 of safe
  // has no passed makespan.
  EXPECT_THAT(md, HasSubstr("| safe | makespan (passed) | 120 s (n 300) | 180 s (n 299) | 1.5x (n 299) |"));
  EXPECT_THAT(md, HasSubstr("| flaky | ready_p50_s | 50 s (n 300) | 55 s (n 300) | 1.1x (n 300) |"));
  const std::string csv = format_comparison_csv(sides, {"ready_p50_s"});
  EXPECT_THAT(csv, HasSubstr("\n,flaky,sim,300,0,0,0,0.0126"));
  EXPECT_THAT(csv, testing::ContainsRegex("\n,flaky,live tmpfs,300,30,0.1,0.07[0-9]+,0.13[0-9]+,0.06[0-9]+,0.13[0-9]+,110,55,300\n"));
  EXPECT_THAT(csv, Not(HasSubstr("live_only,sim")));
}

// A metric that runs cut short by their failure never record: each side's p50 is over the runs
// that recorded it, and the ratio over the seeds both recorded, never over different sets.
TEST(ComparisonTest, MedianRatiosAreOverTheSeedsBothSidesRecorded) {
  // The simulation records `ready_s` on seeds 0-9 (1 s to 10 s); live on seeds 5-9 only
  // (1.1 times the simulation's), and far earlier on seeds 20-29, which the simulation lacks.
  auto record = [](std::uint64_t seed, double ready_s) {
    run::RunRecord r;
    r.strategy = "s";
    r.seed = seed;
    r.metrics = {{"makespan_s", 100}, {"ready_s", ready_s}};
    return r;
  };
  std::vector<run::RunRecord> sim, live;
  for (std::uint64_t seed = 0; seed < 10; ++seed) sim.push_back(record(seed, static_cast<double>(seed + 1)));
  for (std::uint64_t seed = 5; seed < 10; ++seed) live.push_back(record(seed, 1.1 * static_cast<double>(seed + 1)));
  for (std::uint64_t seed = 20; seed < 30; ++seed) live.push_back(record(seed, 0.5));
  std::vector<Side> sides = {side_of(experiment("fifo", 30), sim),
                             side_of(experiment("live:scale=0.01:fs=tmpfs", 30), live)};
  label_sides(sides);
  const std::string md = format_comparison_markdown(sides, {"ready_s"});
  EXPECT_THAT(md, HasSubstr("| live tmpfs / sim, same seeds |"));
  // Unpaired, the p50s are 5.5 s (seeds 0-9) and 0.5 s (mostly seeds 20-29): 0.09x. Over seeds
  // 5-9 both sides recorded: 8 s and 8.8 s.
  EXPECT_THAT(md, HasSubstr("| s | ready_s | 5.5 s (n 10) | 0.5 s (n 15) | 1.1x (n 5) |"));
  EXPECT_THAT(md, HasSubstr("| s | makespan (passed) | 100 s (n 10) | 100 s (n 15) | 1x (n 5) |"));
}

// The CPU of a mount's reads and writes joins the medians where every side recorded it: the
// model's charges beside the live threads' clocks; a measure one side lacks is left out.
TEST(ComparisonTest, TheCpuOfAMountsReadsAndWritesIsComparedWhereEverySideRecordedIt) {
  auto record = [](std::uint64_t seed, double read_cpu_s, bool writes) {
    run::RunRecord r;
    r.strategy = "s";
    r.seed = seed;
    r.metrics = {{"makespan_s", 100}, {"fs.c.read_cpu_s", read_cpu_s}, {"fs.c.bytes_read", 1e6}};
    if (writes) r.metrics["fs.c.write_cpu_s"] = 2;
    return r;
  };
  std::vector<run::RunRecord> sim, live, plain;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    sim.push_back(record(seed, 1.0, true));
    live.push_back(record(seed, 1.2, false));
    run::RunRecord p = record(seed, 0, false);
    p.metrics.erase("fs.c.read_cpu_s");
    plain.push_back(p);
  }
  std::vector<Side> sides = {side_of(experiment("fifo", 4), sim), side_of(experiment("live:scale=0.01:fs=tmpfs", 4), live)};
  label_sides(sides);
  EXPECT_EQ(cpu_measures_of_every_side(sides), std::vector<std::string>{"fs.c.read_cpu_s"});
  const std::string md = format_comparison_markdown(sides, cpu_measures_of_every_side(sides));
  EXPECT_THAT(md, HasSubstr("| s | fs.c.read_cpu_s | 1 s (n 4) | 1.2 s (n 4) | 1.2x (n 4) |"));
  EXPECT_THAT(md, Not(HasSubstr("write_cpu_s")));
  sides.push_back(side_of(experiment("random", 4), plain));
  EXPECT_TRUE(cpu_measures_of_every_side(sides).empty()) << "a side without a CPU model records none";
}

// Two sides can fail as often and in different places: the failed runs by kind, each kind's share
// of its side's runs and the difference's interval, at most kFailureKindsListed kinds a program.
TEST(ComparisonTest, WhereTheRunsFailedComparesEachKindsShareOfTheRuns) {
  // `n` runs of "s" from seed `first`: seeds below first + failed fail loading shard k, cycling
  // over `shards` shards (the first `failed` seeds), the rest pass.
  auto records = [](std::uint64_t n, std::uint64_t failed, int shards, const std::string& how) {
    std::vector<run::RunRecord> out;
    for (std::uint64_t seed = 0; seed < n; ++seed) {
      run::RunRecord r;
      r.strategy = "s";
      r.seed = seed;
      r.metrics = {{"makespan_s", 10}};
      if (seed < failed) {
        r.outcome = run::Outcome::kFail;
        r.check = "model_loads_intact";
        r.diagnosis = "rank 8 loaded /ckpt/shard" + std::to_string(seed % static_cast<std::uint64_t>(shards)) +
                      ".pt at " + std::to_string(seed) + ".5 s: " + how + " (x.yaml:46:40)";
      }
      out.push_back(r);
    }
    return out;
  };
  // The simulation: 120 of 400 fail, 60 on each of shards 0 and 1. Live: 60 of 200 (the same
  // rate), 20 on each of shards 0-2, described as a live run sees them.
  std::vector<Side> sides = {
      side_of(experiment("fifo", 400), records(400, 120, 2, "24 MiB of 64 MiB written by rank 1")),
      side_of(experiment("live:scale=0.01:fs=tmpfs", 200), records(200, 60, 3, "4 MiB holding no model (no content identity)"))};
  label_sides(sides);
  std::string md = format_comparison_markdown(sides, {});
  EXPECT_THAT(md, HasSubstr("| s | 120 of 400 | 30.0% ("));
  EXPECT_THAT(md, HasSubstr("### Where the runs failed"));
  EXPECT_THAT(md, HasSubstr("| strategy | failure | sim | live tmpfs | live tmpfs - sim (95% CI) |\n"));
  // Shards 0 and 1: 15.0% in the model against 10.0% live; shard 2 fails live only.
  EXPECT_THAT(md, testing::ContainsRegex(
                      "\\| s \\| model_loads_intact: /ckpt/shard0.pt \\(x.yaml:46:40\\) \\| 60 \\(15.0%\\) \\| 20 \\(10.0%\\) "
                      "\\| -5.0 pts \\(-[0-9.]+ to \\+[0-9.]+\\) \\|\n"));
  EXPECT_THAT(md, testing::ContainsRegex(
                      "\\| s \\| model_loads_intact: /ckpt/shard2.pt \\(x.yaml:46:40\\) \\| 0 \\(0.0%\\) \\| 20 \\(10.0%\\) "
                      "\\| \\+10.0 pts \\(\\+[0-9.]+ to \\+[0-9.]+\\) \\*\\*differ\\*\\* \\|\n"));
  // The kinds come most frequent first (by share of each side's runs), then by name.
  EXPECT_LT(md.find("/ckpt/shard0.pt ("), md.find("/ckpt/shard1.pt ("));
  EXPECT_LT(md.find("/ckpt/shard1.pt ("), md.find("/ckpt/shard2.pt ("));

  // Twelve shards, each as frequent: the first eight by name are listed, the other four summed.
  sides = {side_of(experiment("fifo", 240), records(240, 120, 12, "1 MiB of 2 MiB written by rank 1")),
           side_of(experiment("live:scale=0.01:fs=tmpfs", 240), records(240, 120, 12, "1 MiB of 2 MiB written by rank 1"))};
  label_sides(sides);
  md = format_comparison_markdown(sides, {});
  EXPECT_THAT(md, HasSubstr("/ckpt/shard10.pt ("));
  EXPECT_THAT(md, HasSubstr("/ckpt/shard5.pt ("));
  EXPECT_THAT(md, Not(HasSubstr("/ckpt/shard6.pt (")));
  EXPECT_THAT(md, HasSubstr("| s | any other (4 kinds) | 40 (16.7%) | 40 (16.7%) | +0.0 pts ("));

  // No failure on any side: no such table.
  sides = {side_of(experiment("fifo", 10), records(10, 0, 1, "")),
           side_of(experiment("live:scale=0.01:fs=tmpfs", 10), records(10, 0, 1, ""))};
  EXPECT_THAT(format_comparison_markdown(sides, {}), Not(HasSubstr("Where the runs failed")));
}

}  // namespace
}  // namespace racesim::report
