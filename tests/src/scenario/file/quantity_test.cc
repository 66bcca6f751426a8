#include "src/scenario/file/quantity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

TEST(QuantityTest, ParsesSizesInDecimalAndBinaryUnits) {
  EXPECT_EQ(*parse_bytes("512B"), 512);
  EXPECT_EQ(*parse_bytes("180MiB"), 180LL * 1024 * 1024);
  EXPECT_EQ(*parse_bytes("1GB"), 1000000000);
  EXPECT_EQ(*parse_bytes("1.5 KiB"), 1536);
  EXPECT_EQ(*parse_bytes("2TiB"), 2LL << 40);
  EXPECT_EQ(*parse_bytes("0B"), 0);
}

TEST(QuantityTest, RejectsBadSizesWithAReason) {
  EXPECT_THAT(parse_bytes("180").message(), HasSubstr("has no unit"));
  EXPECT_THAT(parse_bytes("180mb").message(), HasSubstr("unknown unit 'mb'"));
  EXPECT_THAT(parse_bytes("-1MiB").message(), HasSubstr("non-negative"));
  EXPECT_THAT(parse_bytes("lots").message(), HasSubstr("expected a size like '180MiB'"));
  EXPECT_THAT(parse_bytes("100000TB").message(), HasSubstr("too large"));
}

TEST(QuantityTest, ParsesBandwidthAsBytesPerSecond) {
  EXPECT_DOUBLE_EQ(*parse_bandwidth("5GB/s"), 5e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("100MiB/s"), 100.0 * 1048576);
  EXPECT_THAT(parse_bandwidth("5GB").message(), HasSubstr("a size per second"));
  EXPECT_THAT(parse_bandwidth("0B/s").message(), HasSubstr("must be positive"));
  EXPECT_THAT(parse_bandwidth("5Gb/s").message(), HasSubstr("unknown unit 'Gb'"));
}

TEST(QuantityTest, ParsesEachUnitAndChecksTheKind) {
  EXPECT_DOUBLE_EQ(*parse_quantity("200ms", Unit::kDuration), 2e8);
  EXPECT_DOUBLE_EQ(*parse_quantity("4KiB", Unit::kBytes), 4096);
  EXPECT_DOUBLE_EQ(*parse_quantity("8", Unit::kCount), 8);
  EXPECT_DOUBLE_EQ(*parse_quantity("-0.5", Unit::kNumber), -0.5);
  EXPECT_DOUBLE_EQ(*parse_quantity("1e3", Unit::kNumber), 1000);
  EXPECT_FALSE(parse_quantity("200ms", Unit::kBytes).is_ok());
  EXPECT_FALSE(parse_quantity("2.5", Unit::kCount).is_ok());
  EXPECT_FALSE(parse_quantity("-3", Unit::kCount).is_ok());
  EXPECT_FALSE(parse_quantity("3 apples", Unit::kNumber).is_ok());
}

// One range check for every source of a value: the unit's largest value, named in the error,
// and its grain (a fraction of a nanosecond or of a byte is refused, not rounded to 0 or 1).
TEST(QuantityTest, ValuesBeyondTheUnitsRangeOrBelowItsGrainAreRefused) {
  EXPECT_DOUBLE_EQ(*parse_quantity("2400h", Unit::kDuration), 2400.0 * 3600 * 1e9);
  EXPECT_THAT(parse_quantity("2401h", Unit::kDuration).message(),
              HasSubstr("duration '2401h' is beyond the largest a scenario takes, 100 days (8640000s)"));
  EXPECT_THAT(parse_quantity("9223372036854775807ns", Unit::kDuration).message(), HasSubstr("beyond the largest"));
  EXPECT_THAT(parse_quantity("4097TiB", Unit::kBytes).message(), HasSubstr("beyond the largest a scenario takes, 4096TiB"));
  EXPECT_THAT(parse_quantity("1001TB/s", Unit::kBandwidth).message(), HasSubstr("1000TB/s"));
  EXPECT_THAT(parse_quantity("-2e15", Unit::kNumber).message(), HasSubstr("1e15"));
  EXPECT_THAT(parse_quantity("0.5ns", Unit::kDuration).message(), HasSubstr("not a whole number of nanoseconds"));
  EXPECT_THAT(parse_quantity("0.5B", Unit::kBytes).message(), HasSubstr("'0.5B' is not a whole number of bytes"));
  EXPECT_THAT(parse_quantity("1.5B/s", Unit::kBandwidth).message(), HasSubstr("not a whole number of bytes"));
  EXPECT_DOUBLE_EQ(*parse_quantity("1.1KB", Unit::kBytes), 1100);  // 1100.0000000000002 as a product
  EXPECT_DOUBLE_EQ(*parse_quantity("0.1us", Unit::kDuration), 100);
  EXPECT_DOUBLE_EQ(*parse_quantity("4096TiB", Unit::kBytes), max_of(Unit::kBytes));
}

TEST(QuantityTest, InfersTheUnitOfALiteral) {
  EXPECT_EQ(*infer_unit("200ms"), Unit::kDuration);
  EXPECT_EQ(*infer_unit("180MiB"), Unit::kBytes);
  EXPECT_EQ(*infer_unit("5GB/s"), Unit::kBandwidth);
  EXPECT_EQ(*infer_unit("8"), Unit::kCount);
  EXPECT_EQ(*infer_unit("0.25"), Unit::kNumber);
  EXPECT_EQ(*infer_unit("-2"), Unit::kNumber);
  EXPECT_THAT(infer_unit("5 parsecs").message(), HasSubstr("unknown unit 'parsecs'"));
  EXPECT_FALSE(infer_unit("fast").is_ok());
}

TEST(QuantityTest, FormatsForReports) {
  EXPECT_EQ(format_quantity(2e11, Unit::kDuration), "200s");
  EXPECT_EQ(format_quantity(180.0 * 1048576, Unit::kBytes), "180MiB");
  EXPECT_EQ(format_quantity(1.5 * 1073741824, Unit::kBandwidth), "1.5GiB/s");
  EXPECT_EQ(format_quantity(12, Unit::kCount), "12");
}

}  // namespace
}  // namespace racesim::scenario
