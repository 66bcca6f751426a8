// Numbers as report text (number_text.h): replay's exact metric values, with the unit a name says.
#include "src/report/number_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace racesim::report {
namespace {

// replay printed metrics through a stream's default precision: sizes came out as 1.04858e+06,
// neither exact nor readable.
TEST(NumberTextTest, ReplayShowsAMetricExactlyAndInTheUnitItsNameSays) {
  EXPECT_EQ(exact_number(41943040), "41943040");
  EXPECT_EQ(exact_number(1048576), "1048576");
  EXPECT_EQ(exact_number(0.1), "0.1");
  EXPECT_EQ(exact_number(2663411712), "2663411712");
  EXPECT_EQ(std::stod(exact_number(1.0 / 3)), 1.0 / 3);  // reads back exactly
  EXPECT_EQ(metric_exact_text("fs.cache.bytes_read", 41943040), "41943040 (40 MiB)");
  EXPECT_EQ(metric_exact_text("device.peak_bytes", 2663411712), "2663411712 (2.48 GiB)");
  EXPECT_EQ(metric_exact_text("ready_s", 41.3), "41.3 (41.3 s)");
  EXPECT_EQ(metric_exact_text("loads", 3), "3");
  EXPECT_EQ(metric_exact_text("torn_reads", 0), "0");
}

}  // namespace
}  // namespace racesim::report
