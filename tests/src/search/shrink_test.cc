// The shrinker (shrink.h): a 64-rank failure of the cache race shrinks to a run of a few ranks
// that is 1-minimal (removing any one rank no longer fails the same way); a tape shrinks to one
// in which no single choice can be lowered; a fault the failure does not need is turned off; the
// budget is kept; a passing run is refused.
#include "src/search/shrink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "src/search/explore.h"
#include "tests/src/search/looks_apart.h"

namespace racesim::search {
namespace {

using ::testing::HasSubstr;

CompileFn compiler(const std::string& path, const std::optional<std::string>& text, const std::string& strategy,
                   const std::vector<std::string>& base, const std::vector<std::string>& points = {}) {
  return [=](const std::vector<std::string>& extra) {
    scenario::StudyRequest r;
    r.path = path;
    r.text = text;
    r.overrides = base;
    r.overrides.insert(r.overrides.end(), extra.begin(), extra.end());
    r.strategies = {strategy};
    r.points = points;
    scenario::Diagnostics d;
    return scenario::compile_study(r, d);
  };
}

// Replays `res`'s run with `streams` for its ranks and `tape`: whether it still fails the same way.
bool fails_same(const ShrinkResult& res, const CompileFn& compile, const std::vector<std::string>& overrides,
                const std::vector<int>& streams, const std::vector<kernel::Choice>& tape) {
  auto study = compile(overrides);
  if (!study) return false;
  run::RunOptions o;
  o.policy = kernel::PolicySpec::replay(tape);
  o.rank_streams = streams;
  const run::RunRecord r = run::run_one(*study->programs[0], res.record.seed, o);
  return run::failed(r.outcome) && failure_signature(r) == res.signature;
}

TEST(ShrinkTest, A64RankCacheRaceShrinksToAFewRanksAndIs1Minimal) {
  const CompileFn compile =
      compiler(std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml", std::nullopt, "exists_check",
               {"ranks=64", "platform.ranks_per_node=64"}, {"faults.stall.probability=0"});
  std::string error;
  auto res = shrink(compile, 0, {}, {}, {}, error);
  ASSERT_TRUE(res) << error;
  EXPECT_EQ(res->ranks_before, 64);
  const int ranks = res->study->programs[0]->scenario->ranks;
  EXPECT_LE(ranks, 3);
  EXPECT_TRUE(res->complete);
  EXPECT_LE(res->replays, 500u);
  EXPECT_EQ(res->record.check, "model_loads_intact");
  // The result replays exactly.
  run::RunOptions again = res->options;
  EXPECT_EQ(run::run_one(*res->study->programs[0], 0, again).trace_hash, res->record.trace_hash);
  // 1-minimal: without any one of its ranks it no longer fails the same way.
  const std::vector<int>& streams = res->options.rank_streams;
  ASSERT_EQ(streams.size(), static_cast<std::size_t>(ranks));
  for (std::size_t drop = 0; drop < streams.size() && ranks > 1; ++drop) {
    std::vector<int> fewer = streams;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(drop));
    EXPECT_FALSE(fails_same(*res, compile, {"ranks=" + std::to_string(ranks - 1)}, fewer, {})) << drop;
  }
}

const std::string kSplit = test::looks_apart(3, 5, R"(faults:
  - {kind: straggler, name: slow, on: 0, factor: 2}
)");

TEST(ShrinkTest, ATapeShrinksUntilNoSingleChoiceCanBeLoweredAndUnneededFaultsGoOff) {
  const CompileFn compile = compiler("x.yaml", kSplit, "split", {});
  auto study = compile({});
  ASSERT_TRUE(study);
  ExploreOptions eo;
  eo.mode = *Mode::parse("random");
  eo.budget_runs = 5000;
  const ExploreResult found = explore(*study->programs[0], eo);
  ASSERT_EQ(found.findings.size(), 1u);
  std::string error;
  auto res = shrink(compile, found.findings[0].record.seed, found.findings[0].record.tape, {}, {}, error);
  ASSERT_TRUE(res) << error;
  EXPECT_TRUE(res->complete);
  EXPECT_LE(res->nonzero_after, res->nonzero_before);
  // (Its ranks stay: without one, the schedule's ties have other options and the tape no longer
  // says which process runs: the shrinker does not move a tape across rank counts.)
  bool fault_off = false;
  for (const auto& [k, v] : res->overrides) fault_off |= k == "faults.slow.probability" && v == "0";
  EXPECT_TRUE(fault_off);
  const auto overrides = override_texts(res->overrides);
  const std::vector<kernel::Choice>& tape = res->record.tape;
  EXPECT_TRUE(fails_same(*res, compile, overrides, res->options.rank_streams, tape));
  for (std::size_t i = 0; i < tape.size(); ++i) {
    if (tape[i].value == 0) continue;
    std::vector<kernel::Choice> lower = tape;
    --lower[i].value;
    EXPECT_FALSE(fails_same(*res, compile, overrides, res->options.rank_streams, lower)) << "choice " << i;
  }
}

TEST(ShrinkTest, AParamTheFailureDoesNotNeedBecomesItsMedian) {
  const CompileFn compile = compiler("p.yaml", std::string(R"(name: p
ranks: 4
params:
  work: {uniform: {min: 1s, max: 3s}}
  pick: {choice: {values: [1, 2, 3]}}
program:
  - compute: ${work}
  - if: {rank: 2, then: [{fail: "rank 2 always fails"}]}
strategies:
  only: {}
)"), "only", {});
  std::string error;
  auto res = shrink(compile, 5, {}, {}, {}, error);
  ASSERT_TRUE(res) << error;
  EXPECT_TRUE(res->complete);
  EXPECT_EQ(res->study->programs[0]->scenario->ranks, 3);  // rank 2 needs ranks 0 to 2 to exist
  std::map<std::string, std::string> set(res->overrides.begin(), res->overrides.end());
  EXPECT_EQ(set["params.work"], "2s");
  EXPECT_EQ(set["params.pick"], "1");
}

// Rank 1 looks for a file 0.5 ms after rank 0 starts creating it: the failure needs the create to
// take time (a latency or a jitter), not the attribute caches' timeouts. The platform durations
// the failure does not need become 0, and each one left, made 0, no longer fails the same way.
TEST(ShrinkTest, PlatformDurationsTheFailureDoesNotNeedBecomeZero) {
  const CompileFn compile = compiler("p.yaml", std::string(R"(name: p
ranks: 2
platform:
  storage:
    c: {kind: nfs, mount: /c, meta_latency: 1ms, meta_jitter: 2ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB, acregmin: 3s, acdirmin: 30s}
program:
  - if:
      rank: 0
      then: [{write_file: {path: /c/f, size: 1MiB}}]
      else:
        - sleep: 500us
        - if: {exists: /c/f, then: [], else: [{fail: "not there yet"}]}
strategies:
  only: {}
)"), "only", {});
  std::string error;
  auto res = shrink(compile, 1, {}, {}, {}, error);
  ASSERT_TRUE(res) << error;
  EXPECT_TRUE(res->complete);
  std::map<std::string, std::string> set(res->overrides.begin(), res->overrides.end());
  EXPECT_EQ(set["platform.storage.c.acregmin"], "0s");
  EXPECT_EQ(set["platform.storage.c.acdirmin"], "0s");
  const std::vector<std::string> timing = {"platform.storage.c.meta_latency", "platform.storage.c.meta_jitter"};
  EXPECT_LT(std::count_if(timing.begin(), timing.end(), [&](const std::string& k) { return set[k] == "0s"; }), 2);
  for (const std::string& key : timing) {
    if (set[key] == "0s") continue;
    std::vector<std::string> more = override_texts(res->overrides);
    more.push_back(key + "=0s");
    EXPECT_FALSE(fails_same(*res, compile, more, res->options.rank_streams, res->record.tape)) << key;
  }
}

TEST(ShrinkTest, TheBudgetIsKeptAndAPassingRunIsRefused) {
  const CompileFn compile =
      compiler(std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml", std::nullopt, "exists_check",
               {"ranks=64", "platform.ranks_per_node=64"}, {"faults.stall.probability=0"});
  std::string error;
  auto res = shrink(compile, 0, {}, {}, {.max_replays = 4}, error);
  ASSERT_TRUE(res) << error;
  EXPECT_EQ(res->replays, 4u);
  EXPECT_FALSE(res->complete);
  const CompileFn passing =
      compiler(std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml", std::nullopt, "tmp_rename", {});
  EXPECT_FALSE(shrink(passing, 0, {}, {}, {}, error));
  EXPECT_THAT(error, HasSubstr("the run passes"));
}

}  // namespace
}  // namespace racesim::search
