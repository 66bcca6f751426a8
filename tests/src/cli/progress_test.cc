// Progress while runs are made (src/cli/progress.h), on a clock of the test's own.
#include "src/cli/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace racesim::cli {
namespace {

using ::testing::HasSubstr;

// What `f` holds so far.
std::string contents(std::FILE* f) {
  std::fflush(f);
  const long end = std::ftell(f);
  std::string s(static_cast<std::size_t>(end), '\0');
  std::rewind(f);
  const std::size_t n = std::fread(s.data(), 1, s.size(), f);
  s.resize(n);
  std::fseek(f, 0, SEEK_END);
  return s;
}

TEST(ProgressTest, ALineSaysRunsRateAndTimeLeft) {
  EXPECT_EQ(progress_line(1200, 5000, 4), "1200/5000 runs (24%), 300 runs/s, 13s left");
  EXPECT_EQ(progress_line(100, 1000, 10), "100/1000 runs (10%), 10 runs/s, 1min 30s left");
  EXPECT_EQ(progress_line(1, 10000, 60), "1/10000 runs (0%), 0.0167 runs/s, 166h 39min left");
  EXPECT_EQ(progress_line(36091, 60000, 10), "36091/60000 runs (60%), 3609 runs/s, 7s left");
  EXPECT_EQ(progress_line(0, 50, 0), "0/50 runs (0%)");
}

TEST(ProgressTest, AutoIsABarOnATerminalAndLinesElsewhere) {
  EXPECT_EQ(parse_progress("auto", true), ProgressMode::kBar);
  EXPECT_EQ(parse_progress("auto", false), ProgressMode::kLines);
  EXPECT_EQ(parse_progress("none", true), ProgressMode::kNone);
  EXPECT_EQ(parse_progress("lines", true), ProgressMode::kLines);
  EXPECT_FALSE(parse_progress("dots", true).has_value());
}

// A log gets a line every 10 s, and nothing at all from a command shorter than that.
TEST(ProgressTest, LinesComeEveryTenSecondsAndNotBefore) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 100;
  Progress p(ProgressMode::kLines, f, [&] { return now; });
  now = 109.9;
  p.update(10, 100);
  EXPECT_EQ(contents(f), "");
  now = 110;
  p.update(20, 100);
  EXPECT_EQ(contents(f), "racesim: 20/100 runs (20%), 2 runs/s, 40s left\n");
  now = 115;
  p.update(30, 100);
  now = 120;
  p.update(100, 100);
  EXPECT_EQ(contents(f), "racesim: 20/100 runs (20%), 2 runs/s, 40s left\n"
                         "racesim: 100/100 runs (100%), 5 runs/s, 0s left\n");
  std::fclose(f);
}

// A terminal's bar is redrawn in place at most every 0.1 s, and cleared at the end.
TEST(ProgressTest, TheBarIsRedrawnInPlaceAndClearedAtTheEnd) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  Progress p(ProgressMode::kBar, f, [&] { return now; });
  now = 0.05;
  p.update(1, 4);
  EXPECT_EQ(contents(f), "");
  now = 1;
  p.update(2, 4);
  EXPECT_EQ(contents(f), "\r2/4 runs (50%), 2 runs/s, 1s left\033[K");
  now = 1.01;
  p.update(4, 4);
  EXPECT_THAT(contents(f), testing::EndsWith("\r4/4 runs (100%), 3.96 runs/s, 0s left\033[K\r\033[K"));
  std::FILE* g = std::tmpfile();
  Progress none(ProgressMode::kNone, g, [&] { return now += 100; });
  none.update(1, 2);
  none.update(2, 2);
  EXPECT_EQ(contents(g), "");
  std::fclose(f);
  std::fclose(g);
}

}  // namespace
}  // namespace racesim::cli
