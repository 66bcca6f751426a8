#include "sim/kernel/time.h"

#include <gtest/gtest.h>

#include <cmath>

namespace racesim::kernel {
namespace {

using namespace time_literals;

TEST(TimeTest, LiteralsScaleToNanoseconds) {
  EXPECT_EQ(5_ns, 5);
  EXPECT_EQ(5_us, 5'000);
  EXPECT_EQ(5_ms, 5'000'000);
  EXPECT_EQ(2_s, 2'000'000'000);
  EXPECT_EQ(1_min, 60'000'000'000);
  EXPECT_EQ(1_h, 3'600'000'000'000);
}

TEST(TimeTest, ParsesEveryUnitAndFractions) {
  EXPECT_EQ(*parse_duration("200ms"), 200_ms);
  EXPECT_EQ(*parse_duration("0.2s"), 200_ms);
  EXPECT_EQ(*parse_duration("1.5 us"), 1500);
  EXPECT_EQ(*parse_duration("  40s "), 40_s);
  EXPECT_EQ(*parse_duration("3min"), 180_s);
  EXPECT_EQ(*parse_duration("2h"), 7200_s);
  EXPECT_EQ(*parse_duration("7ns"), 7);
  EXPECT_EQ(*parse_duration(".5ms"), 500_us);
  // Rounds half up to the nearest nanosecond.
  EXPECT_EQ(*parse_duration("1.5ns"), 2);
  EXPECT_EQ(*parse_duration("0.0000000004s"), 0);
  EXPECT_EQ(*parse_duration("1836s"), 1836_s);  // HCCL_EXEC_TIMEOUT default
}

TEST(TimeTest, RejectsBadDurationsWithAReason) {
  auto no_unit = parse_duration("200");
  ASSERT_FALSE(no_unit.is_ok());
  EXPECT_NE(no_unit.message().find("no unit"), std::string::npos) << no_unit.message();
  auto bad_unit = parse_duration("5 parsecs");
  ASSERT_FALSE(bad_unit.is_ok());
  EXPECT_NE(bad_unit.message().find("unknown unit 'parsecs'"), std::string::npos);
  EXPECT_FALSE(parse_duration("").is_ok());
  EXPECT_FALSE(parse_duration("ms").is_ok());
  auto neg = parse_duration("-1s");
  ASSERT_FALSE(neg.is_ok());
  EXPECT_NE(neg.message().find("non-negative"), std::string::npos);
  auto big = parse_duration("300000000000h");
  ASSERT_FALSE(big.is_ok());
  EXPECT_NE(big.message().find("out of range"), std::string::npos);
}

TEST(TimeTest, FormatsReadablyAndRoundTrips) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(1500_us), "1.5ms");
  EXPECT_EQ(format_duration(40_s), "40s");
  EXPECT_EQ(format_duration(90_s), "90s");
  EXPECT_EQ(format_duration(7), "7ns");
  EXPECT_EQ(format_duration(-2_ms), "-2ms");
  EXPECT_EQ(format_duration(kTimeMax), "9223372036.854775807s");
  for (Time t : {Time{1}, Time{999}, 1_us + 1, 123456789_ns, 41_s + 3_ms, kTimeMax}) {
    auto back = parse_duration(format_duration(t));
    ASSERT_TRUE(back.is_ok()) << format_duration(t);
    EXPECT_EQ(*back, t) << format_duration(t);
  }
}

// One rounding rule for work at a rate: up to the next nanosecond, so a transfer never ends before
// its last byte and any positive amount takes at least 1 ns; beyond the clock, the clock's end.
TEST(TimeTest, TransferTimeRoundsUpToTheNextNanosecond) {
  EXPECT_EQ(transfer_time(0, 1e9), 0);
  EXPECT_EQ(transfer_time(1, 1e9), 1);           // exactly 1 ns
  EXPECT_EQ(transfer_time(1, 3e9), 1);           // 0.33 ns: at least 1 ns
  EXPECT_EQ(transfer_time(10, 3e9), 4);          // 3.33 ns -> 4
  EXPECT_EQ(transfer_time(180.0 * (1 << 20), 2e9), 94'371'840);  // 180 MiB at 2 GB/s: exact
  EXPECT_EQ(transfer_time(1e30, 1), kTimeMax);
  EXPECT_EQ(duration_of_seconds(0), 0);
  EXPECT_EQ(duration_of_seconds(1.0000000001), kSecond + 1);
  EXPECT_EQ(duration_of_seconds(2.5e-9), 3);
}

// Sums and products of times saturate at kTimeMax ("beyond any limit"), never wrap.
TEST(TimeTest, SumsAndProductsOfTimesSaturate) {
  EXPECT_EQ(add_time(1_s, 2_s), 3_s);
  EXPECT_EQ(add_time(kTimeMax - 1, 1), kTimeMax);
  EXPECT_EQ(add_time(kTimeMax - 1, 2), kTimeMax);
  EXPECT_EQ(add_time(kTimeMax, kTimeMax), kTimeMax);
  EXPECT_EQ(scale_time(3_s, 1), 3_s);
  EXPECT_EQ(scale_time(3_s, 2.5), 7500_ms);
  EXPECT_EQ(scale_time(2400_h, 1e6), kTimeMax);
  EXPECT_EQ(scale_time(kTimeMax, 1.0000001), kTimeMax);
  EXPECT_EQ(scale_time(5_s, 0), 0);
}

// `exact` says whether a fraction of a nanosecond was rounded away (the scenario layer refuses it).
TEST(TimeTest, ParseDurationSaysWhetherItRounded) {
  bool exact = false;
  EXPECT_EQ(*parse_duration("1.5us", &exact), 1500);
  EXPECT_TRUE(exact);
  EXPECT_EQ(*parse_duration("0.5ns", &exact), 1);
  EXPECT_FALSE(exact);
  EXPECT_EQ(*parse_duration("1.0000000001s", &exact), kSecond);
  EXPECT_FALSE(exact);
  EXPECT_EQ(*parse_duration("0.000000001s", &exact), 1);
  EXPECT_TRUE(exact);
}

TEST(TimeTest, CeilToTimeIsCeilWithoutACall) {
  for (double ns : {0.0, 0.25, 1.0, 1.5, 2.0 - 1e-12, 1e6 + 0.5, 4503599627370495.5, 9007199254740992.0, 1e18}) {
    EXPECT_EQ(ceil_to_time(ns), static_cast<Time>(std::ceil(ns))) << ns;
  }
  EXPECT_EQ(ceil_to_time(9.3e18), kTimeMax);
  EXPECT_EQ(ceil_to_time(std::nan("")), kTimeMax);
}

}  // namespace
}  // namespace racesim::kernel
