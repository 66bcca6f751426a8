// The profiler model: torch.profiler.schedule's actions, when a trace is ready and what it
// holds, and the files a flush and an analysis write.
#include "sim/runtime/profiler.h"

#include <numeric>
#include <set>

#include <gtest/gtest.h>

namespace racesim::runtime {
namespace {

using A = ProfilerSchedule::Action;

TEST(ProfilerScheduleTest, TheSeedsScheduleRecordsSteps1And2AndSavesAtStep2) {
  const ProfilerSchedule s{.skip_first = 1, .wait = 0, .warmup = 0, .active = 2, .repeat = 1};
  const std::vector<A> expected = {A::kNone, A::kRecord, A::kRecordAndSave, A::kNone, A::kNone, A::kNone};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s.action(i), expected[static_cast<std::size_t>(i)]) << i;
}

TEST(ProfilerScheduleTest, CyclesOfWaitWarmupActiveRepeatAsTorchComputesThem) {
  // torch's docstring example: schedule(wait=1, warmup=1, active=3, repeat=2) after skip_first 10.
  const ProfilerSchedule s{.skip_first = 10, .wait = 1, .warmup = 1, .active = 3, .repeat = 2};
  const std::vector<A> cycle = {A::kNone, A::kWarmup, A::kRecord, A::kRecord, A::kRecordAndSave};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.action(i), A::kNone);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.action(10 + i), cycle[static_cast<std::size_t>(i % 5)]) << i;
  EXPECT_EQ(s.action(20), A::kNone);  // repeat 2: done
  const ProfilerSchedule forever{.wait = 0, .warmup = 0, .active = 1, .repeat = 0};
  EXPECT_EQ(forever.action(1000), A::kRecordAndSave);
}

TEST(ProfilerTest, TheTraceIsReadyAtTheStepAfterItsLastActiveStepWithTheRecordedVolume) {
  Profiler p({.skip_first = 1, .wait = 0, .warmup = 0, .active = 2, .repeat = 1});
  EXPECT_FALSE(p.step(100));  // step 0: skipped, its volume not recorded
  EXPECT_FALSE(p.step(20));   // step 1: recorded
  EXPECT_TRUE(p.step(30));    // step 2: recorded and saved
  EXPECT_EQ(p.trace_bytes(), 50u);
  EXPECT_EQ(p.trace_steps(), 2);
  EXPECT_FALSE(p.step(40));
  EXPECT_FALSE(p.step(40));
  EXPECT_EQ(p.traces(), 1);
}

TEST(ProfilerFilesTest, RawDataIsManySmallFilesUnderFrameworkAndProfDirectories) {
  const ProfileLayout layout;  // 48 device slices
  const std::uint64_t raw = 600ull << 20;
  const auto files = raw_files(layout, 3, raw);
  EXPECT_EQ(files.size(), 2u + 6 + 1 + 8 + 2 + 48);
  std::uint64_t sum = 0;
  std::set<std::string> names;
  for (const auto& f : files) {
    sum += f.bytes;
    names.insert(f.path);
  }
  EXPECT_EQ(names.size(), files.size());      // no file twice
  EXPECT_EQ(sum, raw + 5 * 4096);             // the volume, plus five 4 KiB metadata files
  EXPECT_TRUE(names.count("profiler_info_3.json"));
  EXPECT_TRUE(names.count("PROF_000001/device_3/data/ts_track.data.3.slice_47"));
  // Every file's directory is one raw_dirs makes (or the trace's own).
  const auto dirs = raw_dirs(3);
  const std::set<std::string> made(dirs.begin(), dirs.end());
  for (const auto& f : files) {
    const auto slash = f.path.rfind('/');
    if (slash != std::string::npos) {
      EXPECT_TRUE(made.count(f.path.substr(0, slash))) << f.path;
    }
  }
  EXPECT_EQ(trace_dir(3), "rank3_ascend_pt");
}

TEST(ProfilerFilesTest, TheAnalysisWritesFourteenTextResultsOrTwoDatabases) {
  const std::uint64_t raw = 1000ull << 20;
  const auto text = result_files(0, raw, ExportType::kText);
  const auto db = result_files(0, raw, ExportType::kDb);
  EXPECT_EQ(text.size(), 14u);
  EXPECT_EQ(db.size(), 2u);
  EXPECT_EQ(text[0].path, "ASCEND_PROFILER_OUTPUT/trace_view.json");
  EXPECT_EQ(text[0].bytes, raw);
  EXPECT_EQ(db[0].path, "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
  auto total = [](const std::vector<ProfileFile>& v) {
    return std::accumulate(v.begin(), v.end(), std::uint64_t{0}, [](std::uint64_t s, const ProfileFile& f) { return s + f.bytes; });
  };
  EXPECT_LT(total(db), total(text) / 3);
}

TEST(ProfilerFilesTest, AnalysisTimeIsTheRawVolumeOverTheRatePlusAFixedPart) {
  const ProfileLayout layout{.device_slices = 48, .analysis_rate = 100e6, .analysis_fixed = 2 * kernel::kSecond};
  EXPECT_EQ(analysis_time(layout, 0), 2 * kernel::kSecond);
  EXPECT_EQ(analysis_time(layout, 500'000'000), 7 * kernel::kSecond);
}

}  // namespace
}  // namespace racesim::runtime
