#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace racesim::run {
namespace {

std::vector<std::pair<std::uint64_t, std::string>> key(const std::vector<RunRecord>& v) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (const auto& r : v) {
    out.emplace_back(r.trace_hash, r.strategy + "/" + std::to_string(r.seed) + "/" + to_string(r.outcome));
  }
  return out;
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scenario::Diagnostics d;
    study_ = scenario::compile_study({.path = "r.yaml", .text = R"(name: r
ranks: 4
program:
  - compute: {lognormal: {median: 1s, sigma: 0.5}}
  - slot: s
strategies:
  a: {s: [{if: {chance: 0.3, then: [{fail: x}]}}]}
  b: {s: [{mark: ok}]}
)"},
                                     d);
    ASSERT_TRUE(study_) << d.to_string();
    ptrs_ = study_->program_pointers();
  }
  std::unique_ptr<scenario::Study> study_;
  std::vector<const scenario::CompiledProgram*> ptrs_;
};

TEST_F(RunnerTest, ResultsDoNotDependOnTheNumberOfThreads) {
  Plan one{.seed_start = 10, .seeds = 60, .jobs = 1};
  Plan four = one;
  four.jobs = 4;
  const auto a = run_all(ptrs_, one), b = run_all(ptrs_, four);
  ASSERT_EQ(a.size(), 120u);
  EXPECT_EQ(key(a), key(b));
  EXPECT_EQ(a.front().strategy, "a");
  EXPECT_EQ(a.front().seed, 10u);
  EXPECT_EQ(a.back().strategy, "b");
  EXPECT_EQ(a.back().seed, 69u);
}

TEST_F(RunnerTest, ShardsPartitionTheSeedsAndMergeToTheSameResults) {
  Plan all{.seed_start = 0, .seeds = 30, .jobs = 2};
  const auto full = run_all(ptrs_, all);
  std::vector<RunRecord> merged;
  for (int i = 0; i < 3; ++i) {
    Plan shard = all;
    shard.shard_index = i;
    shard.shard_count = 3;
    auto part = run_all(ptrs_, shard);
    EXPECT_EQ(part.size(), 20u);
    merged.insert(merged.end(), part.begin(), part.end());
  }
  auto order = [](const RunRecord& x, const RunRecord& y) {
    return std::tie(x.strategy, x.seed) < std::tie(y.strategy, y.seed);
  };
  std::sort(merged.begin(), merged.end(), order);
  EXPECT_EQ(key(merged), key(full));
}

TEST_F(RunnerTest, ProgressIsMonotonicAndEndsAtTheTotal) {
  std::vector<std::size_t> seen;
  std::size_t total_seen = 0;
  Plan plan{.seed_start = 0, .seeds = 400, .jobs = 3};
  plan.progress = [&](std::size_t done, std::size_t total) {
    seen.push_back(done);
    total_seen = total;
  };
  run_all(ptrs_, plan);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(total_seen, 800u);
  EXPECT_EQ(seen.back(), 800u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.size(), 100u);  // about every 0.5%
}

TEST_F(RunnerTest, SeedsArePairedAcrossStrategies) {
  const auto r = run_all(ptrs_, Plan{.seed_start = 0, .seeds = 50, .jobs = 2});
  int fails_a = 0, fails_b = 0;
  for (const auto& x : r) (x.strategy == "a" ? fails_a : fails_b) += failed(x.outcome);
  EXPECT_GT(fails_a, 0);  // P(no failure over 4 ranks and 50 seeds) is negligible
  EXPECT_EQ(fails_b, 0);
}

// Runs a resumed results file holds are skipped; the rest are the same records a whole run gives.
TEST_F(RunnerTest, SkippedRunsAreLeftOutAndTheRestAreUnchanged) {
  const Plan whole{.seed_start = 0, .seeds = 20, .jobs = 2};
  const auto all = run_all(ptrs_, whole);
  Plan rest = whole;
  for (std::uint64_t s = 0; s < 20; s += 3) rest.skip.insert({1, s});  // b's seeds 0, 3, ..., 18
  const auto part = run_all(ptrs_, rest);
  ASSERT_EQ(part.size(), 40u - 7u);
  std::vector<RunRecord> expected;
  for (const auto& r : all) {
    if (!(r.strategy == "b" && r.seed % 3 == 0)) expected.push_back(r);
  }
  EXPECT_EQ(key(part), key(expected));
}

// Every finished run reaches on_record once; returning false, or the stop flag, starts no further
// run, and what finished is returned in run order.
TEST_F(RunnerTest, OnRecordSeesEveryRunAndAStopStartsNoMore) {
  std::mutex m;
  std::set<std::pair<std::string, std::uint64_t>> seen;
  Plan plan{.seed_start = 0, .seeds = 30, .jobs = 3};
  plan.on_record = [&](const RunRecord& r) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_TRUE(seen.insert({r.strategy, r.seed}).second);
    return true;
  };
  EXPECT_EQ(run_all(ptrs_, plan).size(), 60u);
  EXPECT_EQ(seen.size(), 60u);

  std::atomic<int> calls{0};
  plan.on_record = [&](const RunRecord&) { return ++calls < 5; };
  const auto refused = run_all(ptrs_, plan);
  EXPECT_GE(refused.size(), 5u);
  EXPECT_LE(refused.size(), 5u + 2u) << "at most the runs under way on the other threads finish";
  EXPECT_EQ(calls.load(), 5) << "not called again once it refused";
  for (std::size_t i = 1; i < refused.size(); ++i) {
    EXPECT_TRUE(refused[i - 1].strategy < refused[i].strategy ||
                (refused[i - 1].strategy == refused[i].strategy && refused[i - 1].seed < refused[i].seed));
  }

  std::atomic<bool> stop{false};
  plan.on_record = [&](const RunRecord&) {
    stop = true;
    return true;
  };
  plan.stop = &stop;
  plan.jobs = 1;
  EXPECT_EQ(run_all(ptrs_, plan).size(), 1u);
}

#ifndef RACESIM_SANITIZED  // ASan reserves terabytes of shadow: it cannot run under an address-space limit
// A run the system refuses memory for (fiber stacks past an address-space limit) is an error
// result that says so, not a crash; the process goes on. (A wait for a mark runs on a fiber: a
// program of sleeps alone would run stackless, with no stacks to refuse.)
TEST(RunnerMemoryTest, ARunThatRunsOutOfMemoryIsAnErrorResult) {
  scenario::Diagnostics d;
  auto study = scenario::compile_study({.path = "m.yaml", .text = R"(name: m
ranks: 40000
program: [{sleep: 1s}, {wait: {marked: go, timeout: 1s}}]
strategies: {a: {}}
)"}, d);
  ASSERT_TRUE(study) << d.to_string();
  EXPECT_EXIT(
      {
        rlimit as{};
        getrlimit(RLIMIT_AS, &as);
        as.rlim_cur = std::size_t{1} << 30;  // 40,000 stacks of 68 KiB need 2.6 GiB
        setrlimit(RLIMIT_AS, &as);
        const auto rec = run_one(*study->programs[0], 0, {});
        std::fprintf(stderr, "%s %s: %s\n", to_string(rec.outcome), rec.check.c_str(), rec.diagnosis.c_str());
        std::exit(rec.outcome == Outcome::kError && rec.check == "memory" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "error memory: out of memory: cannot map .* KiB for fiber stacks");
}

// The same for stackless ranks, which have no stacks to refuse: 2,000,000 of them need some
// 1.4 GB, and the allocation refused is an error result too.
TEST(RunnerMemoryTest, AStacklessRunThatRunsOutOfMemoryIsAnErrorResult) {
  scenario::Diagnostics d;
  auto study = scenario::compile_study({.path = "m.yaml", .text = R"(name: m
ranks: 2000000
program: [{compute: 1s}, {barrier: b}]
strategies: {a: {}}
)"}, d);
  ASSERT_TRUE(study) << d.to_string();
  ASSERT_TRUE(study->programs[0]->stackless);
  EXPECT_EXIT(
      {
        rlimit as{};
        getrlimit(RLIMIT_AS, &as);
        as.rlim_cur = std::size_t{1} << 30;
        setrlimit(RLIMIT_AS, &as);
        const auto rec = run_one(*study->programs[0], 0, {});
        std::fprintf(stderr, "%s %s: %s\n", to_string(rec.outcome), rec.check.c_str(), rec.diagnosis.c_str());
        std::exit(rec.outcome == Outcome::kError && rec.check == "memory" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "error memory: out of memory: ");
}
#endif

}  // namespace
}  // namespace racesim::run
