// How often a param's distribution is drawn (`per: use | rank | run`, distribution.h's
// DrawScope): each rank's marks show the values its sleeps drew.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// Four ranks sleep the param d twice, marking after each: a<rank>_s is the first draw, b<rank>_s
// the sum of both. Rank 1 first draws from the rank's own stream (a param drawn per use), so a
// value drawn per run or per rank must not move with it.
Fixture four_ranks_sleeping(const std::string& d) {
  return make(4,
              "  - if: {rank: 1, then: [{sleep: \"${other}\"}]}\n"
              "  - mark: {name: \"start${rank}\", metric: true}\n"
              "  - sleep: \"${d}\"\n"
              "  - mark: {name: \"a${rank}\", metric: true}\n"
              "  - sleep: \"${d}\"\n"
              "  - mark: {name: \"b${rank}\", metric: true}\n",
              "params:\n  other: {uniform: {min: 1s, max: 2s}}\n  d: " + d + "\n");
}

struct Draws {
  double first[4];
  double second[4];
};

Draws draws_of(const run::RunRecord& r) {
  Draws d{};
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    const double start = r.metrics.at("start" + n + "_s");
    d.first[i] = r.metrics.at("a" + n + "_s") - start;
    d.second[i] = r.metrics.at("b" + n + "_s") - r.metrics.at("a" + n + "_s");
  }
  return d;
}

TEST(DrawScopeTest, PerRunIsOneValueForEveryRankAndEveryUse) {
  const Fixture f = four_ranks_sleeping("{uniform: {min: 1s, max: 100s}, per: run}");
  ASSERT_TRUE(f.study);
  const Draws d = draws_of(run(f, 7));
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(d.first[i], d.first[0], 1e-9) << "rank " << i;
    EXPECT_NEAR(d.second[i], d.first[0], 1e-9) << "rank " << i;
  }
  EXPECT_GE(d.first[0], 1.0);
  EXPECT_LT(d.first[0], 100.0);
  // Another seed, another value; the same seed, the same value.
  EXPECT_NE(draws_of(run(f, 8)).first[0], d.first[0]);
  EXPECT_EQ(draws_of(run(f, 7)).first[0], d.first[0]);
}

TEST(DrawScopeTest, PerRankIsOneValueForEveryUseOnARankAndDiffersBetweenRanks) {
  const Fixture f = four_ranks_sleeping("{uniform: {min: 1s, max: 100s}, per: rank}");
  ASSERT_TRUE(f.study);
  const Draws d = draws_of(run(f, 7));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(d.second[i], d.first[i], 1e-9) << "rank " << i;
  for (int i = 1; i < 4; ++i) EXPECT_NE(d.first[i], d.first[0]) << "rank " << i;
}

TEST(DrawScopeTest, PerUseIsTheDefaultAndDrawsAtEachUse) {
  for (const std::string d : {"{uniform: {min: 1s, max: 100s}}", "{uniform: {min: 1s, max: 100s}, per: use}"}) {
    const Fixture f = four_ranks_sleeping(d);
    ASSERT_TRUE(f.study);
    const Draws x = draws_of(run(f, 7));
    for (int i = 0; i < 4; ++i) EXPECT_NE(x.second[i], x.first[i]) << d << ", rank " << i;
    EXPECT_NE(x.first[1], x.first[0]) << d;
  }
}

TEST(DrawScopeTest, AnExpressionOverAParamDrawnPerRunSeesItsOneValue) {
  const Fixture f = make(2,
                         "  - sleep: \"${twice}\"\n"
                         "  - mark: {name: \"a${rank}\", metric: true}\n"
                         "  - sleep: \"${d}\"\n"
                         "  - mark: {name: \"b${rank}\", metric: true}\n",
                         "params:\n  d: {exponential: {mean: 10s}, per: run}\n  twice: \"${d * 2}\"\n");
  ASSERT_TRUE(f.study);
  const run::RunRecord r = run(f, 3);
  const double a = r.metrics.at("a0_s");
  EXPECT_NEAR(r.metrics.at("a1_s"), a, 1e-9);
  EXPECT_NEAR(r.metrics.at("b0_s") - a, a / 2, 1e-6);
}

TEST(DrawScopeTest, ABadScopeAConstantAndAScopeAloneAreLocatedErrors) {
  EXPECT_THAT(compile_errors(2, "  - sleep: \"${d}\"\n", "params:\n  d: {uniform: {min: 1s, max: 2s}, per: step}\n"),
              HasSubstr("t.yaml:5:41: error: param 'd': per: expected use (a draw at each use, the default), rank "
                        "(one per rank) or run (one per run, shared by every rank), got 'step'"));
  EXPECT_THAT(compile_errors(2, "  - sleep: \"${d}\"\n", "params:\n  d: {constant: 2s, per: run}\n"),
              HasSubstr("param 'd': per: run draws a value, but 2s is a constant"));
  EXPECT_THAT(compile_errors(2, "  - sleep: \"${d}\"\n", "params:\n  d: {per: rank}\n"),
              HasSubstr("param 'd': per: rank needs a distribution beside it"));
  EXPECT_THAT(compile_errors(2, "  - sleep: \"${d}\"\n",
                             "params:\n  d: {uniform: {min: 1s, max: 2s}, exponential: {mean: 1s}, per: run}\n"),
              HasSubstr("with 2 keys"));
}

}  // namespace
}  // namespace racesim::scenario
