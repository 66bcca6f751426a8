#include "src/scenario/language/distribution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "sim/kernel/time.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

std::optional<Distribution> parse(const std::string& yaml, std::optional<Unit> unit,
                                  Diagnostics& diags) {
  return parse_distribution(Value::from_yaml(YAML::Load(yaml)), unit, "s.yaml", diags);
}

TEST(DistributionTest, ParsesEveryKind) {
  Diagnostics d;
  auto c = parse("40s", std::nullopt, d);
  ASSERT_TRUE(c) << d.to_string();
  EXPECT_TRUE(c->is_constant());
  EXPECT_EQ(c->unit, Unit::kDuration);
  EXPECT_DOUBLE_EQ(c->a, 40e9);

  auto ln = parse("{lognormal: {median: 40s, sigma: 0.25}}", std::nullopt, d);
  ASSERT_TRUE(ln) << d.to_string();
  EXPECT_EQ(ln->kind, Distribution::Kind::kLognormal);
  EXPECT_EQ(ln->describe(), "lognormal(median 40s, sigma 0.25)");

  auto u = parse("{uniform: {min: 1MiB, max: 3MiB}}", Unit::kBytes, d);
  ASSERT_TRUE(u) << d.to_string();
  EXPECT_EQ(u->describe(), "uniform(1MiB, 3MiB)");

  auto ch = parse("{choice: {values: [1s, 2s], weights: [3, 1]}}", std::nullopt, d);
  ASSERT_TRUE(ch) << d.to_string();
  EXPECT_EQ(ch->values.size(), 2u);
  EXPECT_EQ(ch->weights[0], 3.0);

  auto ex = parse("{exponential: {mean: 2s}}", Unit::kDuration, d);
  auto no = parse("{normal: {mean: 10, sd: 2}}", Unit::kNumber, d);
  auto k = parse("{constant: 5GB/s}", Unit::kBandwidth, d);
  EXPECT_TRUE(ex && no && k) << d.to_string();
  EXPECT_TRUE(d.ok()) << d.to_string();
}

TEST(DistributionTest, ErrorsNameTheLineColumnAndWhatWasExpected) {
  Diagnostics d;
  // "200ms" starts at line 2, column 20.
  EXPECT_FALSE(parse("uniform:\n  {min: 1MiB, max: 200ms}", Unit::kBytes, d));
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.to_string(),
            "s.yaml:2:20: error: uniform max: expected a size in bytes like '180MiB', got '200ms' "
            "(a duration)\n");
}

TEST(DistributionTest, ReportsUnknownKindsKeysAndMissingFields) {
  Diagnostics d;
  EXPECT_FALSE(parse("{gamma: {k: 2}}", std::nullopt, d));
  EXPECT_THAT(d.to_string(), HasSubstr("s.yaml:1:2: error: unknown distribution 'gamma'"));
  Diagnostics d2;
  EXPECT_FALSE(parse("{lognormal: {median: 40s, sigm: 0.25}}", std::nullopt, d2));
  EXPECT_THAT(d2.to_string(), HasSubstr("unknown key 'sigm' in lognormal (expected one of: "
                                        "median, sigma)"));
  EXPECT_THAT(d2.to_string(), HasSubstr("lognormal: missing 'sigma'"));
  Diagnostics d3;
  EXPECT_FALSE(parse("{uniform: {min: 3s, max: 1s}}", std::nullopt, d3));
  EXPECT_THAT(d3.to_string(), HasSubstr("max must be >= min"));
  Diagnostics d4;
  EXPECT_FALSE(parse("{choice: {values: [1s, 2s], weights: [1]}}", std::nullopt, d4));
  EXPECT_THAT(d4.to_string(), HasSubstr("as long as values (2)"));
  Diagnostics d5;
  EXPECT_FALSE(parse("[1, 2]", std::nullopt, d5));
  EXPECT_THAT(d5.to_string(), HasSubstr("expected a quantity or a distribution"));
  Diagnostics d6;
  EXPECT_FALSE(parse("{lognormal: {median: 40s, sigma: 2s}}", std::nullopt, d6));
  EXPECT_THAT(d6.to_string(), HasSubstr("lognormal sigma: expected a number"));
}

TEST(DistributionTest, SamplesMatchTheirParametersAndClampDurations) {
  Diagnostics d;
  auto ln = *parse("{lognormal: {median: 40s, sigma: 0.25}}", std::nullopt, d);
  auto no = *parse("{normal: {mean: 1s, sd: 2s}}", std::nullopt, d);
  auto ch = *parse("{choice: {values: [1, 5], weights: [3, 1]}}", std::nullopt, d);
  kernel::RandomStream rng(11, "dist");
  const int n = 100000;
  double log_sum = 0, fives = 0;
  int negative = 0;
  for (int i = 0; i < n; ++i) {
    const double x = ln.sample(rng);
    ASSERT_EQ(x, std::round(x));  // whole nanoseconds
    log_sum += std::log(x);
    negative += no.sample(rng) < 0;
    fives += ch.sample(rng) == 5;
  }
  EXPECT_NEAR(std::exp(log_sum / n), 40e9, 0.2e9);
  EXPECT_EQ(negative, 0);  // clamped at 0
  EXPECT_NEAR(fives / n, 0.25, 0.01);
}

// Draws stay in the unit's range: a duration beyond 100 days is beyond any limit (kTimeMax as a
// Time, which ends a run as a timeout), a size beyond 4 PiB is 4 PiB, so no conversion to an
// integer overflows. A sigma above 10 is refused: it used to draw infinities.
TEST(DistributionTest, DrawsStayInTheUnitsRangeAndSigmaIsBounded) {
  Diagnostics d;
  auto wide = *parse("{lognormal: {median: 2400h, sigma: 10}}", Unit::kDuration, d);
  auto big = *parse("{lognormal: {median: 4096TiB, sigma: 10}}", Unit::kBytes, d);
  ASSERT_EQ(d.count(), 0u) << d.to_string();
  kernel::RandomStream rng(5, "dist");
  int beyond = 0;
  for (int i = 0; i < 1000; ++i) {
    const double t = wide.sample(rng);
    ASSERT_TRUE(t <= max_of(Unit::kDuration) || kernel::to_time(t) == kernel::kTimeMax) << t;
    beyond += t > max_of(Unit::kDuration);
    ASSERT_LE(big.sample(rng), max_of(Unit::kBytes));
  }
  EXPECT_GT(beyond, 300);  // half the draws are above the median, 100 days
  EXPECT_FALSE(parse("{lognormal: {median: 1s, sigma: 1000}}", Unit::kDuration, d));
  EXPECT_THAT(d.to_string(), HasSubstr("sigma from 0 to 10"));
}

TEST(DistributionTest, RepresentativesAreTheLowEndMedianAndHighEnd) {
  Diagnostics d;
  auto u = parse("{uniform: {min: 1s, max: 3s}}", Unit::kDuration, d);
  ASSERT_TRUE(u) << d.to_string();
  EXPECT_EQ(u->representative(1), 1e9);
  EXPECT_EQ(u->representative(2), 2e9);
  EXPECT_EQ(u->representative(3), 3e9);
  auto ln = parse("{lognormal: {median: 40s, sigma: 0.25}}", Unit::kDuration, d);
  ASSERT_TRUE(ln);
  EXPECT_EQ(ln->representative(2), 40e9);
  // The 1st and 99th percentiles: median * exp(-+2.326 sigma).
  EXPECT_NEAR(*ln->representative(1), 40e9 * std::exp(-0.25 * 2.3263478740408408), 1);
  EXPECT_NEAR(*ln->representative(3), 40e9 * std::exp(0.25 * 2.3263478740408408), 1);
  auto ex = parse("{exponential: {mean: 10s}}", Unit::kDuration, d);
  ASSERT_TRUE(ex);
  EXPECT_NEAR(*ex->representative(2), 10e9 * std::log(2.0), 1);
  EXPECT_LT(*ex->representative(1), *ex->representative(2));
  auto n = parse("{normal: {mean: 1s, sd: 1s}}", Unit::kDuration, d);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->representative(1), 0);  // clamped at 0, as a sampled duration is
  auto c = parse("{choice: {values: [5, 1, 9]}}", std::nullopt, d);
  ASSERT_TRUE(c) << d.to_string();
  EXPECT_EQ(c->representative(1), 1);
  EXPECT_EQ(c->representative(2), 5);
  EXPECT_EQ(c->representative(3), 9);
  EXPECT_FALSE(parse("40s", std::nullopt, d)->representative(2));
}

TEST(DiagnosticsTest, IsBoundedAndSaysHowManyWereDropped) {
  Diagnostics d;
  for (int i = 0; i < 150; ++i) d.error({"f.yaml", i + 1, 1}, "bad");
  EXPECT_EQ(d.count(), 150u);
  EXPECT_EQ(d.all().size(), Diagnostics::kMaxErrors);
  EXPECT_THAT(d.to_string(), HasSubstr("... and 50 more errors"));
}

}  // namespace
}  // namespace racesim::scenario
