// Where a report chart puts a sweep axis's values, how it keeps identical series apart, and how
// it fits a title (src/report/chart_axis.h).
#include "src/report/chart_axis.h"

#include <gtest/gtest.h>

namespace racesim::report {
namespace {

TEST(ChartAxisTest, QuantitiesOfOneUnitAreNumericAndLogarithmicWhenTheySpanDecades) {
  const AxisScale d = axis_scale({"100ms", "1s", "5s"});
  EXPECT_TRUE(d.numeric);
  EXPECT_TRUE(d.log);
  EXPECT_EQ(d.positions, (std::vector<double>{1e8, 1e9, 5e9}));
  EXPECT_LT(d.lo, 1e8);
  EXPECT_GT(d.hi, 5e9);
  // Bandwidths in file order are placed by value, not by order.
  const AxisScale b = axis_scale({"10GB/s", "1GB/s", "5GB/s"});
  EXPECT_TRUE(b.numeric);
  EXPECT_FALSE(b.log);
  EXPECT_GT(b.positions[0], b.positions[2]);
  EXPECT_GT(b.positions[2], b.positions[1]);
  // Counts and plain numbers are one kind; a zero keeps a scale linear.
  const AxisScale p = axis_scale({"0", "0.5", "1"});
  EXPECT_TRUE(p.numeric);
  EXPECT_FALSE(p.log);
  EXPECT_TRUE(axis_scale({"8", "64", "512", "4096"}).log);
}

TEST(ChartAxisTest, TextMixedUnitsRepeatsAndSingleValuesAreCategories) {
  for (const std::vector<std::string>& labels :
       std::vector<std::vector<std::string>>{{"local", "nfs"}, {"1s", "1GiB"}, {"1s", "1000ms"}, {"1s"}}) {
    const AxisScale s = axis_scale(labels);
    EXPECT_FALSE(s.numeric) << labels.front();
    for (std::size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(s.positions[i], static_cast<double>(i));
  }
}

TEST(ChartAxisTest, SeriesAreDrawnSideBySideSymmetricallyAndALoneOneStays) {
  const AxisScale cat = axis_scale({"a", "b"});
  EXPECT_EQ(dodge(cat, 1, 0, 1), 1);
  EXPECT_LT(dodge(cat, 1, 0, 3), 1);
  EXPECT_DOUBLE_EQ(dodge(cat, 1, 1, 3), 1);
  EXPECT_GT(dodge(cat, 1, 2, 3), 1);
  EXPECT_DOUBLE_EQ(dodge(cat, 1, 0, 3) + dodge(cat, 1, 2, 3), 2);
  EXPECT_LE(dodge(cat, 1, 11, 12) - dodge(cat, 1, 0, 12), 0.41) << "within the slot";
  const AxisScale log = axis_scale({"100ms", "10s"});
  EXPECT_NEAR(dodge(log, 1e9, 0, 2) * dodge(log, 1e9, 1, 2), 1e18, 1e6) << "a factor either side";
}

TEST(ChartAxisTest, LongTitlesBreakAtSpacesAndQuotesAreEscaped) {
  EXPECT_EQ(fit_title("short \"q\"", 600), "short \\\"q\\\"");
  const std::string t = fit_title(std::string(60, 'a') + " " + std::string(60, 'b'), 600);
  EXPECT_EQ(t, std::string(60, 'a') + "\\n" + std::string(60, 'b'));
  // A word longer than a line stays whole.
  EXPECT_EQ(fit_title(std::string(200, 'x'), 300), std::string(200, 'x'));
}

}  // namespace
}  // namespace racesim::report
