#include "sim/kernel/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace racesim::kernel {
namespace {

TEST(RandomTest, XoshiroMatchesTheReferenceVector) {
  // xoshiro256** 1.0 reference output for state {1, 2, 3, 4}.
  auto r = RandomStream::from_state(1, 2, 3, 4);
  EXPECT_EQ(r.next_u64(), 11520u);
  EXPECT_EQ(r.next_u64(), 0u);
  EXPECT_EQ(r.next_u64(), 1509978240u);
  EXPECT_EQ(r.next_u64(), 1215971899390074240u);
}

TEST(RandomTest, SplitmixAndFnvMatchReferences) {
  std::uint64_t s = 0;
  EXPECT_EQ(splitmix64(s), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(s), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(RandomTest, NamedStreamValuesArePinned) {
  // Values computed by an independent implementation of the derivation in random.h.
  RandomStream r(42, "compile");
  EXPECT_EQ(r.next_u64(), 0xce02a797a8b51b66ULL);
  EXPECT_EQ(r.next_u64(), 0xa31a2a392f46e829ULL);
  EXPECT_EQ(r.next_u64(), 0x7a241a0eec905a68ULL);
  RandomStream u(42, "compile");
  EXPECT_DOUBLE_EQ(u.uniform01(), 0.8047280068646682);
}

TEST(RandomTest, StreamsAreIndependentByNameAndSeed) {
  RandomStream a(7, "storage"), b(7, "network"), c(8, "storage"), a2(7, "storage");
  const auto va = a.next_u64();
  EXPECT_NE(va, b.next_u64());
  EXPECT_NE(va, c.next_u64());
  EXPECT_EQ(va, a2.next_u64());
}

// Pins each distribution's first values for one stream, so an accidental change of algorithm
// (or a platform whose libm differs) is caught.
TEST(RandomTest, DistributionOutputsArePinned) {
  RandomStream r(2026, "pins");
  std::vector<double> got = {static_cast<double>(r.uniform_u64(1000)),
                             r.uniform(10.0, 20.0),
                             r.exponential(2.0),
                             r.normal(0.0, 1.0),
                             r.lognormal(40.0, 0.25),
                             r.bernoulli(0.5) ? 1.0 : 0.0};
  const double weights[] = {1.0, 0.0, 3.0};
  got.push_back(static_cast<double>(r.weighted_choice(weights)));
  const std::vector<double> want = {275.0, 11.18344175218632, 0.8113718334330919, -0.3382257234223951, 43.4544639192655, 0.0, 0.0};
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << "index " << i;
}

TEST(RandomTest, UniformIntegerIsUnbiasedAndInRange) {
  RandomStream r(1, "u");
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const auto v = r.uniform_u64(6);
    ASSERT_LT(v, 6u);
    ++counts[v];
  }
  // Each bucket expects 10000 with sd ~91; 5 sd bounds.
  for (int c : counts) EXPECT_NEAR(c, 10000, 460);
  EXPECT_EQ(r.uniform_u64(1), 0u);
}

TEST(RandomTest, MomentsMatchTheDistributions) {
  RandomStream r(3, "moments");
  const int n = 200000;
  double se = 0, sn = 0, sn2 = 0, logs = 0;
  int heads = 0;
  for (int i = 0; i < n; ++i) {
    se += r.exponential(2.0);
    const double x = r.normal(5.0, 2.0);
    sn += x;
    sn2 += x * x;
    logs += std::log(r.lognormal(40.0, 0.25));
    heads += r.bernoulli(0.3);
  }
  EXPECT_NEAR(se / n, 2.0, 0.03);
  const double mean = sn / n;
  EXPECT_NEAR(mean, 5.0, 0.03);
  EXPECT_NEAR(std::sqrt(sn2 / n - mean * mean), 2.0, 0.03);
  // The median of a lognormal is exp(mean of its log).
  EXPECT_NEAR(std::exp(logs / n), 40.0, 0.1);
  EXPECT_NEAR(heads / double(n), 0.3, 0.005);
  EXPECT_FALSE(r.bernoulli(0.0));
  EXPECT_TRUE(r.bernoulli(1.0));
}

TEST(RandomTest, WeightedChoiceFollowsWeightsAndSkipsZeros) {
  RandomStream r(9, "w");
  const double w[] = {1.0, 0.0, 3.0};
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 40000; ++i) ++counts[r.weighted_choice(w)];
  EXPECT_EQ(counts[1], 0);
  EXPECT_NEAR(counts[0] / 40000.0, 0.25, 0.01);
  EXPECT_NEAR(counts[2] / 40000.0, 0.75, 0.01);
}

}  // namespace
}  // namespace racesim::kernel
