// A mount's costs fitted to what live runs paid call by call: the least-squares line of each kind
// of read and write, its sums read back from runs' metrics, and the override lines.
#include "src/live/cost_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::live {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kMiB = 1024.0 * 1024.0;

// Calls of `mib` MiB that each took fixed + bytes / rate seconds, plus `noise` (alternately + and
// -).
storage::CostSums on_a_line(std::vector<double> mib, double fixed_s, double rate,
                            double noise = 0) {
  storage::CostSums s;
  for (std::size_t i = 0; i < mib.size(); ++i) {
    const double b = mib[i] * kMiB;
    s.add(b, fixed_s + b / rate + (i % 2 ? noise : -noise));
  }
  return s;
}

// The source of a fit to `runs` live on tmpfs at time scale 0.01, of mount ckpt.
CostSource tmpfs_runs(const std::string& runs) {
  CostSource src;
  src.command = "racesim live --fit-costs runs --mount ckpt";
  src.runs = runs + " (live:scale=0.01:fs=tmpfs)";
  src.scale = 0.01;
  return src;
}

TEST(CostFitTest, CallsOnALineGiveItsFixedPartAndRate) {
  // Loads of 32 to 272 MiB at 2.5 ms + 1.8 GB/s (virtual time: x 100 at scale 0.01).
  const CostLine l = fit_cost_line(on_a_line({32, 112, 192, 272, 32, 112, 192, 272}, 2.5, 18e6));
  ASSERT_TRUE(l.fitted) << l.note;
  EXPECT_EQ(l.count, 8u);
  EXPECT_NEAR(l.fixed_s, 2.5, 1e-9);
  EXPECT_NEAR(l.bytes_per_s, 18e6, 1e-3);
  EXPECT_NEAR(l.fixed_se_s, 0, 1e-6) << "no scatter: no error";
  EXPECT_NEAR(l.bytes_mean, 152 * kMiB, 1e-3);
}

TEST(CostFitTest, ScatterGivesTheFixedPartAStandardError) {
  // +-0.1 s about the line: the fit is still the line (the scatter is balanced at each size), and
  // its fixed part has an error of about 0.1 / sqrt(n) scaled by the sizes' spread.
  const CostLine l = fit_cost_line(on_a_line({32, 32, 272, 272}, 2.5, 18e6, 0.1));
  ASSERT_TRUE(l.fitted);
  EXPECT_NEAR(l.fixed_s, 2.5, 1e-9);
  EXPECT_GT(l.fixed_se_s, 0.05);
  EXPECT_LT(l.fixed_se_s, 0.2);
}

TEST(CostFitTest, AnotherRunsCallsPoolByAddingTheirSums) {
  storage::CostSums a = on_a_line({32, 112}, 2.5, 18e6);
  const storage::CostSums b = on_a_line({192, 272}, 2.5, 18e6);
  for (const storage::CostField& f : storage::kCostFields) a.*f.value += b.*f.value;
  const CostLine l = fit_cost_line(a);
  ASSERT_TRUE(l.fitted);
  EXPECT_EQ(l.count, 4u);
  EXPECT_NEAR(l.fixed_s, 2.5, 1e-9);
  EXPECT_NEAR(l.bytes_per_s, 18e6, 1e-3);
}

TEST(CostFitTest, ATextsCostIsItsMeanAsTheFixedPart) {
  storage::CostSums s;
  for (double t : {1.2, 1.4, 1.3, 1.5}) s.add(5, t);
  const CostLine l = fit_cost_line(s);
  ASSERT_TRUE(l.fitted);
  EXPECT_NEAR(l.fixed_s, 1.35, 1e-12);
  EXPECT_EQ(l.bytes_per_s, 0) << "no rate: a text's bytes cost nothing to speak of";
  // The standard error of the mean: sd 0.129 over sqrt(4).
  EXPECT_NEAR(l.fixed_se_s, 0.0645, 1e-3);
}

TEST(CostFitTest, OneSizeCannotTellTheFixedPartFromTheRate) {
  const CostLine l = fit_cost_line(on_a_line({180, 180, 180}, 0.5, 18e6, 0.01));
  EXPECT_FALSE(l.fitted);
  EXPECT_THAT(l.note, HasSubstr("all of one size (180.0 MiB)"));
}

TEST(CostFitTest, ATimeThatFallsWithTheBytesIsNotFitted) {
  storage::CostSums s;
  s.add(32 * kMiB, 3);
  s.add(64 * kMiB, 2);
  const CostLine l = fit_cost_line(s);
  EXPECT_FALSE(l.fitted);
  EXPECT_THAT(l.note, HasSubstr("does not grow"));
}

TEST(CostFitTest, ALineBelowNothingAtNoBytesHasNoFixedPart) {
  // 1 s for 32 MiB, 3 s for 64 MiB: the line is -1 s + 16 MiB/s; no fixed part, the mean's rate.
  storage::CostSums s;
  s.add(32 * kMiB, 1);
  s.add(64 * kMiB, 3);
  const CostLine l = fit_cost_line(s);
  ASSERT_TRUE(l.fitted);
  EXPECT_EQ(l.fixed_s, 0);
  EXPECT_NEAR(l.bytes_per_s, 48 * kMiB / 2, 1e-6);
  EXPECT_THAT(l.note, HasSubstr("no fixed part"));
}

run::RunRecord with_costs(std::uint64_t seed, const std::string& mount, const std::string& kind,
                          const storage::CostSums& s) {
  run::RunRecord r;
  r.seed = seed;
  r.strategy = "s";
  for (const storage::CostField& f : storage::kCostFields) {
    r.metrics["fs." + mount + ".cost." + kind + "." + f.name] = s.*f.value;
  }
  return r;
}

TEST(CostFitTest, ARunsSumsAreReadBackFromItsMetricsAndPooled) {
  std::vector<run::RunRecord> runs = {
      with_costs(0, "ckpt", "read", on_a_line({32, 112}, 2.5, 18e6)),
      with_costs(1, "ckpt", "read", on_a_line({192, 272}, 2.5, 18e6)),
      with_costs(1, "other", "write", on_a_line({1, 2}, 1, 1e6))};
  runs[1].metrics["fs.ckpt.cost.text_read.count"] = 0;  // not a whole kind: refused below
  std::map<std::string, storage::CostSums> sums;
  std::string error;
  EXPECT_FALSE(cost_sums_of(runs, "ckpt", sums, error));
  EXPECT_THAT(error, HasSubstr("seed 1 of s: fs.ckpt.cost.text_read.*: 1 of its 6 fields"));
  runs[1].metrics.erase("fs.ckpt.cost.text_read.count");
  ASSERT_TRUE(cost_sums_of(runs, "ckpt", sums, error)) << error;
  ASSERT_EQ(sums.size(), 1u) << "only the mount asked for, and only the kinds its runs had";
  const CostLine l = fit_cost_line(sums.at("read"));
  EXPECT_EQ(l.count, 4u);
  EXPECT_NEAR(l.fixed_s, 2.5, 1e-9);
}

// Each program's calls apart, for the comments: three loads at once cost more each than one alone,
// and one line would hide it.
TEST(CostFitTest, EachProgramsMeanCostIsGivenApart) {
  std::vector<run::RunRecord> runs = {
      with_costs(0, "ckpt", "read", on_a_line({64, 64}, 0.02, 1e9)),
      with_costs(1, "ckpt", "read", on_a_line({64}, 0.02, 1e9)),
      with_costs(0, "ckpt", "read", on_a_line({64, 64, 64}, 0.03, 1e9))};
  runs[0].point = runs[1].point = runs[2].point = "p=0";
  runs[2].strategy = "together";
  CostSumsByKind sums;
  std::map<std::string, CostSumsByKind> by_program;
  std::string error;
  ASSERT_TRUE(cost_sums_of(runs, "ckpt", sums, error, &by_program)) << error;
  EXPECT_EQ(sums.at("read").count, 6);
  ASSERT_EQ(by_program.size(), 2u);
  EXPECT_EQ(by_program.at("p=0 / s").at("read").count, 3) << "seeds 0 and 1 of one program pool";
  EXPECT_EQ(by_program.at("p=0 / together").at("read").count, 3);
  CostSource src;
  src.scale = 0.01;
  const std::map<std::string, CostLine> lines = {{"read", fit_cost_line(sums.at("read"))}};
  // 64 MiB at 1e9 B/s is 67.1 ms of virtual time, plus 20 or 30 ms: 0.871 and 0.971 ms real.
  const std::string text = format_cost_overrides("ckpt", src, lines, by_program);
  EXPECT_THAT(text, HasSubstr("#   reads of a file with a content identity (a model's load):\n"
                              "#     p=0 / s: 3, 64.0 MiB, 0.871 ms (0.014 ms per MiB)\n"
                              "#     p=0 / together: 3, 64.0 MiB, 0.971 ms (0.015 ms per MiB)\n"));
  EXPECT_THAT(format_cost_overrides("ckpt", src, lines, {{"p=0 / s", by_program.at("p=0 / s")}}),
              Not(HasSubstr("by program")))
      << "one program: the line is its own";
}

TEST(CostFitTest, SumsNoSetOfCallsGivesAreRefused) {
  storage::CostSums s = on_a_line({32, 64}, 1, 1e6);
  s.bytes_squared = 1;  // under (sum of bytes)^2 / count
  std::map<std::string, storage::CostSums> sums;
  std::string error;
  EXPECT_FALSE(cost_sums_of({with_costs(3, "ckpt", "write", s)}, "ckpt", sums, error));
  EXPECT_THAT(error,
              HasSubstr("seed 3 of s: fs.ckpt.cost.write.*: sums that no set of calls gives"));
  // More calls than a count holds exactly (and than converts to an integer) is no record either.
  storage::CostSums many = on_a_line({32, 64}, 1, 1e6);
  many.count = 1e20;
  EXPECT_FALSE(cost_sums_of({with_costs(4, "ckpt", "write", many)}, "ckpt", sums, error));
  EXPECT_THAT(error,
              HasSubstr("seed 4 of s: fs.ckpt.cost.write.*: sums that no set of calls gives"));
}

TEST(CostFitTest, TheOverridesSetEachFittedKindAndSayWhyAnotherIsNot) {
  std::map<std::string, CostLine> lines;
  lines["read"] = fit_cost_line(on_a_line({32, 112, 192, 272}, 3.4, 19e6));
  storage::CostSums texts;
  texts.add(5, 1.4);
  lines["text_read"] = fit_cost_line(texts);
  lines["write"] = fit_cost_line(on_a_line({32, 112, 192, 272}, 1.9, 15e6));
  lines["text_write"] = fit_cost_line(on_a_line({180, 180}, 1, 1e6));  // one size: not fitted
  CostSource src = tmpfs_runs("600 runs of 2 programs");
  const std::string text = format_cost_overrides("ckpt", src, lines);
  EXPECT_THAT(text, HasSubstr("# racesim live --fit-costs runs --mount ckpt\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.file_overhead.read=3400000000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.read_bandwidth=19000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.file_overhead.text_read=1400000000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.file_overhead.write=1900000000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.client_bandwidth=15000000B/s\n"))
      << "tmpfs: a write's copy is a local mount's one stream";
  EXPECT_THAT(text, Not(HasSubstr("file_overhead.text_write=")));
  EXPECT_THAT(
      text,
      HasSubstr(
          "# writes of a text: 2 of them, 180.0 MiB on average: not fitted, all of one size"));
  // In real time at the runs' scale: 34 ms and 1812 MiB/s.
  EXPECT_THAT(
      text,
      HasSubstr(
          "# reads of a file with a content identity (a model's load): 4 of them, 152.0 MiB on "
          "average: 34.000 ms + 1811.981 MiB/s\n"));
  src.write_back = true;
  EXPECT_THAT(format_cost_overrides("ckpt", src, lines),
              HasSubstr("\nplatform.storage.ckpt.page_cache_stream_bandwidth=15000000B/s\n"))
      << "a write-back file system: the copy into the page cache";
}


TEST(CostFitTest, CallsBesideOthersGiveTheRateCopiesAtOnceShare) {
  // Alone: 2.5 s + 18 MB/s. Beside others, two at once: 1 s more than that line at 152 MiB.
  const CostLine alone = fit_cost_line(on_a_line({32, 112, 192, 272}, 2.5, 18e6));
  storage::CostSums b = on_a_line({152, 152}, 3.5, 18e6);
  b.running = 4;
  const CostLine beside = fit_cost_line(b);
  EXPECT_FALSE(beside.fitted) << "one size";
  EXPECT_DOUBLE_EQ(beside.running_mean, 2);
  const SharedRate r = fit_shared_rate(alone, beside);
  const double bytes = 152 * kMiB;
  EXPECT_NEAR(r.extra_s, 1.0, 1e-9);
  EXPECT_NEAR(r.each_bytes_per_s, bytes / (bytes / 18e6 + 1.0), 1.0);
  EXPECT_NEAR(r.bytes_per_s, 2 * r.each_bytes_per_s, 1e-6);
  // No slower beside others than alone (noise): the rate alone, times those at once.
  const SharedRate same = fit_shared_rate(alone, fit_cost_line(on_a_line({152, 152}, 2.4, 18e6)));
  EXPECT_EQ(same.extra_s, 0);
  EXPECT_NEAR(same.each_bytes_per_s, 18e6, 1e-6);
  EXPECT_NEAR(same.bytes_per_s, 18e6, 1e-6) << "no count of those at once: one";
}

TEST(CostFitTest, CopiesCountedByCompanyTakeTheirLineFromThoseAlone) {
  // Loads alone at 2.5 s + 18 MB/s; beside others 1 s more at 152 MiB, two at once. All of them
  // pooled give a steeper line, which would count the company's cost in every load.
  const storage::CostSums alone = on_a_line({32, 112, 192, 272}, 2.5, 18e6);
  storage::CostSums beside = on_a_line({152, 152, 152, 152}, 3.5, 18e6);
  beside.running = 8;
  storage::CostSums all = alone;
  for (const storage::CostField& f : storage::kCostFields) all.*f.value += beside.*f.value;
  // Writes: the ones alone all of one size, so no line of their own.
  const storage::CostSums writes_alone = on_a_line({100, 100}, 1.9, 15e6);
  storage::CostSums writes_beside = on_a_line({32, 272}, 2.9, 15e6);
  writes_beside.running = 4;
  storage::CostSums writes = writes_alone;
  for (const storage::CostField& f : storage::kCostFields) writes.*f.value += writes_beside.*f.value;
  std::map<std::string, CostLine> lines;
  lines["read"] = fit_cost_line(all);
  lines["read_alone"] = fit_cost_line(alone);
  lines["read_beside"] = fit_cost_line(beside);
  lines["write"] = fit_cost_line(writes);
  lines["write_alone"] = fit_cost_line(writes_alone);
  lines["write_beside"] = fit_cost_line(writes_beside);
  CostSource src = tmpfs_runs("8 runs of 1 program");
  const std::string text = format_cost_overrides("ckpt", src, lines);
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.file_overhead.read=2500000000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.read_bandwidth=18000000B/s\n"));
  const double bytes = 152 * kMiB;
  const long long shared = std::llround(2 * bytes / (bytes / 18e6 + 1.0));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.read_shared_bandwidth=" + std::to_string(shared) + "B/s\n"));
  EXPECT_THAT(text, HasSubstr("#   alone (no other read running at any moment): 4, 152.0 MiB on average: "
                              "25.000 ms + 1716.614 MiB/s: the fixed part and the rate below\n"));
  EXPECT_THAT(text, HasSubstr("#   beside others: 4, 152.0 MiB on average, 123.546 ms each, 2.00 running at "
                              "once on average: 10.000 ms more than the line alone"));
  // The writes alone give no line: the line of all of them stands, and it already holds what
  // running beside others cost, so the sharing takes no more from two at once than it gives.
  EXPECT_THAT(text, HasSubstr("#   alone (no other read or write running at any moment): 2, 100.0 MiB on "
                              "average: no line (all of one size"));
  EXPECT_THAT(text, HasSubstr(": the line of all of them stands below, and holds what running beside "
                              "others cost\n"));
  EXPECT_THAT(text, HasSubstr("2.00 running at once on average: the sharing set to take no more than the "
                              "line gives, its rate x 2.00 (bandwidth)\n"));
  const CostLine pooled = fit_cost_line(writes);
  ASSERT_TRUE(pooled.fitted && pooled.bytes_per_s > 0);
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.client_bandwidth=" +
                              std::to_string(std::llround(pooled.bytes_per_s)) + "B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.bandwidth=" +
                              std::to_string(std::llround(2 * pooled.bytes_per_s)) + "B/s\n"));
  // Writes of one size only: no line at all, and no sharing; the calibration's stand.
  std::map<std::string, CostLine> one_size = lines;
  one_size["write"] = fit_cost_line(on_a_line({64, 64, 64}, 1.9, 15e6));
  one_size["write_alone"] = fit_cost_line(on_a_line({64, 64}, 1.9, 15e6));
  one_size["write_beside"] = fit_cost_line(on_a_line({64}, 2.9, 15e6));
  const std::string calibrated = format_cost_overrides("ckpt", src, one_size);
  EXPECT_THAT(calibrated, HasSubstr("a fixed part and a rate cannot be told apart): the calibration's stand\n"));
  EXPECT_THAT(calibrated, HasSubstr("no line to set against; the calibration's bandwidth stands\n"));
  EXPECT_THAT(calibrated, Not(HasSubstr("ckpt.bandwidth=")));
  EXPECT_THAT(calibrated, Not(HasSubstr("ckpt.client_bandwidth=")));
  // Nor with none of them alone: no line anywhere, the calibration's stand.
  one_size.erase("write_alone");
  const std::string none_alone = format_cost_overrides("ckpt", src, one_size);
  EXPECT_THAT(none_alone, HasSubstr("#   alone (no other read or write running at any moment): none: the "
                                    "calibration's stand\n"));
  EXPECT_THAT(none_alone, HasSubstr("no line to set against; the calibration's bandwidth stands\n"));
  EXPECT_THAT(none_alone, Not(HasSubstr("ckpt.client_bandwidth=")));
  // On a write-back file system the writes' sharing is the page cache's.
  lines["write_alone"] = fit_cost_line(on_a_line({32, 272}, 1.9, 15e6));
  src.write_back = true;
  EXPECT_THAT(format_cost_overrides("ckpt", src, lines),
              testing::ContainsRegex("\nplatform.storage.ckpt.page_cache_bandwidth=[0-9]+B/s\n"));
}

// Where the runs counted the reads amid writes (a part of the reads alone), a read's line comes
// from the reads that had no copy beside them, and the rate of a read amid writes from the rest
// of the reads alone: quiet loads at 2.5 s + 18 MB/s, loads amid writes 1 s more at 152 MiB.
TEST(CostFitTest, ReadsAmidWritesTakeTheirRateFromTheReadsWithNoCopyBeside) {
  const storage::CostSums quiet = on_a_line({32, 112, 192, 272}, 2.5, 18e6);
  const storage::CostSums amid = on_a_line({152, 152}, 3.5, 18e6);
  storage::CostSums alone = quiet;
  for (const storage::CostField& f : storage::kCostFields) alone.*f.value += amid.*f.value;
  // Two runs: the first's reads alone hold its reads amid writes; the second had none amid.
  const storage::CostSums first_alone = [&] {
    storage::CostSums a = on_a_line({32, 112}, 2.5, 18e6);
    for (const storage::CostField& f : storage::kCostFields) a.*f.value += amid.*f.value;
    return a;
  }();
  run::RunRecord first = with_costs(0, "ckpt", "read_alone", first_alone);
  for (const storage::CostField& f : storage::kCostFields)
    first.metrics[std::string("fs.ckpt.cost.read_amid_writes.") + f.name] = amid.*f.value;
  const run::RunRecord second = with_costs(1, "ckpt", "read_alone", on_a_line({192, 272}, 2.5, 18e6));
  CostSumsByKind sums;
  std::map<std::string, CostSumsByKind> by_program;
  std::string error;
  ASSERT_TRUE(cost_sums_of({first, second}, "ckpt", sums, error, &by_program)) << error;
  ASSERT_EQ(sums.count(kQuietReads), 1u);
  EXPECT_EQ(sums.at(kQuietReads).count, 4);
  EXPECT_NEAR(sums.at(kQuietReads).bytes, quiet.bytes, 1);
  EXPECT_EQ(by_program.at("s").at(kQuietReads).count, 4) << "each program's quiet reads too";
  const CostLine quiet_line = fit_cost_line(sums.at(kQuietReads));
  EXPECT_NEAR(quiet_line.fixed_s, 2.5, 1e-6);
  EXPECT_NEAR(quiet_line.bytes_per_s, 18e6, 1);

  std::map<std::string, CostLine> lines;
  lines["read"] = fit_cost_line(alone);
  for (const auto& [kind, sum] : sums) lines[kind] = fit_cost_line(sum);
  const std::string text = format_cost_overrides("ckpt", tmpfs_runs("2 runs of 1 program"), lines);
  EXPECT_THAT(text, HasSubstr("#   alone (no other read or write running at any moment): 4, 152.0 MiB on "
                              "average: 25.000 ms + 1716.614 MiB/s: the fixed part and the rate below\n"));
  EXPECT_THAT(text, HasSubstr("#   amid writes (no other read, a write running at some moment): 2, 152.0 MiB "
                              "on average, 123.546 ms each: 10.000 ms more than the line alone"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.file_overhead.read=2500000000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.read_bandwidth=18000000B/s\n"));
  // 152 MiB took 1 s more than the line's 8.855 s: the bytes' part 9.855 s, on a rate of its own.
  const double bytes = 152 * kMiB;
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.read_amid_writes_bandwidth=" +
                              std::to_string(std::llround(bytes / (bytes / 18e6 + 1.0))) + "B/s\n"));
  // Every read alone was amid writes: no line of the quiet ones, and the line of the reads alone
  // holds them; no rate amid writes is set.
  std::map<std::string, CostLine> no_quiet;
  no_quiet["read"] = fit_cost_line(on_a_line({32, 272}, 3.5, 18e6));
  no_quiet["read_alone"] = fit_cost_line(on_a_line({32, 272}, 3.5, 18e6));
  no_quiet["read_amid_writes"] = no_quiet["read_alone"];
  const std::string held = format_cost_overrides("ckpt", tmpfs_runs("1 run of 1 program"), no_quiet);
  EXPECT_THAT(held, HasSubstr("#   alone (no other read running at any moment): 2, "));
  EXPECT_THAT(held, HasSubstr("no line of the reads with no copy beside them (none) to set them against; the line "
                              "above holds them\n"));
  EXPECT_THAT(held, Not(HasSubstr("read_amid_writes_bandwidth=")));
  EXPECT_THAT(held, HasSubstr("\nplatform.storage.ckpt.file_overhead.read=3500000000ns\n"));
}

// Reads amid writes are a part of the reads alone: a record with more of them is damaged.
TEST(CostFitTest, ReadsAmidWritesBeyondTheReadsAloneAreRefused) {
  run::RunRecord r = with_costs(7, "ckpt", "read_alone", on_a_line({32, 64}, 1, 1e6));
  for (const storage::CostField& f : storage::kCostFields)
    r.metrics[std::string("fs.ckpt.cost.read_amid_writes.") + f.name] = on_a_line({32, 64, 64}, 1, 1e6).*f.value;
  CostSumsByKind sums;
  std::string error;
  EXPECT_FALSE(cost_sums_of({r}, "ckpt", sums, error));
  EXPECT_THAT(error, HasSubstr("seed 7 of s: fs.ckpt.cost.read_amid_writes.count (3.000) is above "
                               "fs.ckpt.cost.read_alone.count (2.000): the reads amid writes are a part of the "
                               "reads alone"));
}

// The disk's rates from the runs' fsyncs, on a file system that writes back: one fsync's rate from
// those alone, what fsyncs at once share from those beside others, each a line through 0 (the
// model's fsync costs its bytes at the disk's rate; the cache race's fsyncs are all of one size).
TEST(CostFitTest, FsyncsGiveTheDisksRatesAloneAndAtOnce) {
  // Alone: 180 MiB each at 15 MB/s. Beside others: 10 MB/s each, three at once.
  storage::CostSums alone = on_a_line({180, 180}, 0, 15e6);
  storage::CostSums beside = on_a_line({180, 180, 180, 180}, 0, 10e6);
  beside.running = 12;
  storage::CostSums all = alone;
  for (const storage::CostField& f : storage::kCostFields) all.*f.value += beside.*f.value;
  std::map<std::string, CostLine> lines;
  lines["sync"] = fit_cost_line(all);
  lines["sync_alone"] = fit_cost_line(alone);
  lines["sync_beside"] = fit_cost_line(beside);
  EXPECT_FALSE(lines["sync"].fitted) << "one size: no line with a fixed part";
  EXPECT_NEAR(lines["sync_alone"].origin_bytes_per_s, 15e6, 1e-3);
  CostSource src = tmpfs_runs("600 runs of 2 programs");
  src.write_back = true;
  const std::string text = format_cost_overrides("ckpt", src, lines);
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.disk_stream_bandwidth=15000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.client_bandwidth=30000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.ckpt.bandwidth=30000000B/s\n"));
  // In real time at the runs' scale: 180 MiB at 15 MB/s is 125.829 ms.
  EXPECT_THAT(text, HasSubstr("# fsyncs (real time: the caller sleeps while the disk works): 6 of them, 180.0 MiB "
                              "on average, "));
  EXPECT_THAT(text, HasSubstr("#   alone (no other fsync running at any moment): 2, 180.0 MiB on average: "
                              "1430.511 MiB/s (disk_stream_bandwidth)\n"));
  EXPECT_THAT(text, HasSubstr("#   beside others: 4, 180.0 MiB on average, 3.00 running at once on average: "
                              "953.674 MiB/s each x 3.00, at least one's rate: 2861.023 MiB/s (client_bandwidth, "
                              "bandwidth)\n"));
  // Slower all together than one alone (noise): what they share is at least one's rate.
  lines["sync_beside"] = fit_cost_line([] {
    storage::CostSums s = on_a_line({180, 180}, 0, 4e6);
    s.running = 4;
    return s;
  }());
  EXPECT_THAT(format_cost_overrides("ckpt", src, lines), HasSubstr("\nplatform.storage.ckpt.bandwidth=15000000B/s\n"));
  // None alone: one fsync's rate is the line of all of them; none beside: what they share is one's.
  lines.erase("sync_alone");
  lines.erase("sync_beside");
  const std::string pooled = format_cost_overrides("ckpt", src, lines);
  const std::string one = std::to_string(std::llround(lines["sync"].origin_bytes_per_s)) + "B/s\n";
  EXPECT_THAT(pooled, HasSubstr("\nplatform.storage.ckpt.disk_stream_bandwidth=" + one));
  EXPECT_THAT(pooled, HasSubstr("\nplatform.storage.ckpt.bandwidth=" + one));
  EXPECT_THAT(pooled, HasSubstr("the runs did not count the fsyncs at once"));
  // tmpfs: an fsync has no disk to wait for, and sets nothing.
  src.write_back = false;
  const std::string tmpfs = format_cost_overrides("ckpt", src, lines);
  EXPECT_THAT(tmpfs, HasSubstr("no disk behind this file system (no write-back); nothing set\n"));
  EXPECT_THAT(tmpfs, Not(HasSubstr("disk_stream_bandwidth=")));
  EXPECT_THAT(tmpfs, Not(HasSubstr("ckpt.bandwidth=")));
}

TEST(CostFitTest, FsyncsThatMovedNoBytesGiveNoRate) {
  storage::CostSums empty;
  empty.add(0, 0.002);
  empty.add(0, 0.003);
  std::map<std::string, CostLine> lines;
  lines["sync"] = fit_cost_line(empty);
  EXPECT_EQ(lines["sync"].origin_bytes_per_s, 0);
  CostSource src = tmpfs_runs("2 runs of 1 program");
  src.write_back = true;
  const std::string text = format_cost_overrides("ckpt", src, lines);
  EXPECT_THAT(text, HasSubstr("no bytes to fit a rate to; the calibration's disk stands\n"));
  EXPECT_THAT(text, Not(HasSubstr("disk_stream_bandwidth=")));
}

}  // namespace
}  // namespace racesim::live
