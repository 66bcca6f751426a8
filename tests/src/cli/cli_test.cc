// The racesim command's exit codes and outputs (0 ok; 1 expectation failed; 2 usage or scenario
// error), run as a real process.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <regex>
#include <string>

#include "tests/src/cli/cli_process.h"

namespace {

using ::testing::HasSubstr;
using cli_process::kExamples;
using cli_process::Result;
using cli_process::racesim;
using cli_process::racesim_env;
using cli_process::shell;
using cli_process::test_dir;
using cli_process::write_temp;

TEST(CliTest, RunPrintsTheComparisonTable) {
  auto r = racesim("run " + kExamples + "publish_race.yaml --seeds 50 --jobs 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("visible_while_writing"));
  EXPECT_THAT(r.out, HasSubstr("write_then_publish"));
  EXPECT_THAT(r.out, HasSubstr("failure rate (95% CI)"));
}

TEST(CliTest, RunOutputIsTheSameForAnyJobs) {
  auto a = racesim("run " + kExamples + "publish_race.yaml --seeds 80 --jobs 1 --format json");
  auto b = racesim("run " + kExamples + "publish_race.yaml --seeds 80 --jobs 3 --format json");
  EXPECT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(CliTest, CheckPassesOnTheExamplesAndFailsOnAWrongExpectation) {
  auto ok = racesim("check " + kExamples + "publish_race.yaml " + kExamples + "wait_cycle.yaml");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("5 passed, 0 failed"));
  const std::string wrong = write_temp("wrong.yaml", R"(name: wrong
ranks: 2
seeds: 5
program: [{wait: never}]
strategies: {s: }
expect: {s: {never_fails: true}}
)");
  auto bad = racesim("check " + wrong);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("FAIL " + wrong + " s never_fails: 5 of 5 seeds failed"));
  EXPECT_THAT(bad.out, HasSubstr("0 passed, 1 failed"));
}

// Number of failed seeds of the first strategy in `racesim run --format csv` output.
int first_failures(const std::string& csv) {
  const auto line = csv.find('\n') + 1;  // skip the header
  // point,strategy,runs,failures,...
  auto c = csv.find(',', line);
  for (int i = 0; i < 2; ++i) c = csv.find(',', c + 1);
  const auto end = csv.find(',', c + 1);
  return std::stoi(csv.substr(c + 1, end - c - 1));
}

TEST(CliTest, SetOverridesParamsAndTheFailureRateFollowsTheMechanism) {
  const std::string base = "run " + kExamples + "publish_race.yaml --seeds 300 --format csv";
  auto normal = racesim(base);
  auto instant = racesim(base + " --set params.write_time=1ns");
  auto slow = racesim(base + " --set 'params.write_time={uniform: {min: 20s, max: 30s}}'");
  ASSERT_EQ(normal.code, 0) << normal.out;
  ASSERT_EQ(instant.code, 0) << instant.out;
  ASSERT_EQ(slow.code, 0) << slow.out;
  // A write that takes no time leaves no window to read a prefix; a long one widens it.
  EXPECT_EQ(first_failures(instant.out), 0);
  EXPECT_GT(first_failures(slow.out), first_failures(normal.out));
  auto ranks = racesim(base + " --set ranks=1");  // only the writer: nobody can read early
  EXPECT_EQ(first_failures(ranks.out), 0);
}

TEST(CliTest, BadOverridesExitTwoAndSayWhy) {
  auto r = racesim("run " + kExamples + "publish_race.yaml --set params.pol=2s --set bogus=1 --set seeds");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr("--set params.pol: error: no param 'pol' in the scenario (params: compile_time, poll, write_time)"));
  EXPECT_THAT(r.out, HasSubstr("--set bogus: error: cannot override 'bogus'"));
  EXPECT_THAT(r.out, HasSubstr("--set seeds: error: expected KEY=VALUE"));
  auto unit = racesim("run " + kExamples + "publish_race.yaml --set params.poll=5MiB");
  EXPECT_EQ(unit.code, 2);
  EXPECT_THAT(unit.out, HasSubstr("poll_until interval: param 'poll' is a size in bytes (5MiB), expected a duration"));
}

TEST(CliTest, AFaultOnOthersFollowsTheRankCountOfTheRun) {
  // `on: others` stays symbolic until compile, so --set ranks=8 on a 4-rank file arms 7 ranks.
  const std::string f = write_temp("others.yaml", R"(name: others
ranks: 4
seeds: 1
faults: [{kind: straggler, on: others, probability: 1}]
program: [{compute: 1s}]
strategies: {only: }
)");
  auto r = racesim("run " + f + " --set ranks=8 --format json");
  EXPECT_EQ(r.code, 0) << r.out;
  auto armed = [](const std::string& json) {
    return nlohmann::json::parse(json)["strategies"][0]["metrics"]["faults.straggler"]["max"].get<double>();
  };
  EXPECT_EQ(armed(r.out), 7);
  auto four = racesim("run " + f + " --format json");
  EXPECT_EQ(armed(four.out), 3);
}

// Every option that takes one of a few values lists them in its help.
TEST(CliTest, OptionsOfAFewValuesListThemInTheirHelp) {
  for (const char* command : {"run", "check", "replay", "shrink", "live"}) {
    const std::string help = racesim(std::string(command) + " --help").out;
    if (help.find("--policy") == std::string::npos) continue;
    EXPECT_THAT(help, testing::ContainsRegex("--policy[^\n]*fifo, random, pct\\[:DEPTH\\[:STEPS\\]\\]")) << command;
  }
  EXPECT_THAT(racesim("explore --help").out, testing::ContainsRegex("--mode[^\n]*random, pct\\[:DEPTH\\], swarm or exhaustive"));
  EXPECT_THAT(racesim("run --help").out, testing::ContainsRegex("--format[^\n]*table,json,csv"));
}

// A --set of a sweep axis is neither an error nor silently replaced at every point: it pins the
// axis to its value, and says so.
TEST(CliTest, SettingASweepAxisPinsItAndSaysSo) {
  auto r = racesim("run " + kExamples + "slow_writer_sweep.yaml --seeds 5 --set params.write_time=3s");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("racesim: note: --set params.write_time pins sweep axis params.write_time to 3s"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nfaults.slow_writer.probability=0 +visible_while_writing"))
      << "the points are the other axis's alone";
  EXPECT_THAT(r.out, Not(testing::ContainsRegex("\n[^\n]*params.write_time=[^\n]* +write_then_publish")));
}

TEST(CliTest, CheckWritesJUnitXml) {
  const std::string wrong = write_temp("wrong2.yaml", R"(name: wrong2
ranks: 2
seeds: 3
program: [{wait: never}]
strategies: {s: }
expect: {s: {never_fails: true}}
)");
  const std::string xml_path = test_dir() + "junit.xml";
  auto r = racesim("check " + kExamples + "wait_cycle.yaml " + wrong + " --junit " + xml_path);
  EXPECT_EQ(r.code, 1);
  std::ifstream in(xml_path);
  std::string xml((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"racesim check\" tests=\"4\" failures=\"1\" skipped=\"0\">"));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"" + kExamples + "wait_cycle.yaml\" name=\"rank0_first never_fails\"/>"));
  EXPECT_THAT(xml, HasSubstr("name=\"s never_fails\">\n      <failure message=\"3 of 3 seeds failed"));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// check --point and a scenario's `ci:` subset: expectations at points that were not run are
// neither passed nor failed but reported as not run (JUnit <skipped>).
TEST(CliTest, CheckRunsChosenPointsAndReportsExpectationsElsewhereAsNotRun) {
  const std::string text = R"(name: subset
ranks: 2
seeds: 5
params: {t: 1s}
program: [{sleep: "${t}"}, {mark: done}]
strategies: {s: , u: }
sweep: {params.t: [1s, 2s, 3s]}
expect:
  s:
    - {metric: {name: done_s, stat: max, max: 1.5}, at: {params.t: 1s}}
    - {metric: {name: done_s, stat: max, min: 2.5}, at: {params.t: 3s}}
  u: {metric: {name: done_s, stat: p50, ratio_to: s, max: 1}, at: {params.t: 1s}}
)";
  const std::string file = write_temp("subset.yaml", text + "ci: {points: [\"params.t=1s\"], seeds: 2}\n");
  const std::string xml_path = test_dir() + "subset.xml";
  auto ci = racesim("check " + file + " --ci --junit " + xml_path);
  EXPECT_EQ(ci.code, 0) << ci.out;
  EXPECT_THAT(ci.out, HasSubstr("2 passed, 0 failed, 1 not run (points or strategies not selected)"));
  EXPECT_THAT(ci.out, HasSubstr("SKIP " + file + " s at its points: not run: params.t=3s were not selected"));
  EXPECT_THAT(ci.out, HasSubstr("over 2 of 2 runs"));  // the ci section's seeds
  EXPECT_THAT(racesim("check " + file + " --ci --seeds 1").out, HasSubstr("over 1 of 1 runs"));  // fewer asked
  EXPECT_THAT(racesim("check " + file + " --ci --seeds 9").out, HasSubstr("over 2 of 2 runs"));  // capped
  EXPECT_THAT(read_file(xml_path), HasSubstr("skipped=\"1\""));
  EXPECT_THAT(read_file(xml_path), HasSubstr("<skipped message=\"not run: params.t=3s were not selected\"/>"));
  // Without --ci every point runs and both hold; --point picks by hand.
  auto all = racesim("check " + file);
  EXPECT_EQ(all.code, 0) << all.out;
  EXPECT_THAT(all.out, HasSubstr("3 passed, 0 failed\n"));
  auto two = racesim("check " + file + " --point params.t=3s");
  EXPECT_THAT(two.out, HasSubstr("1 passed, 0 failed, 2 not run"));
  // --strategy: the others' expectations, and a ratio to one left out, are not run.
  auto only_u = racesim("check " + file + " --strategy u");
  EXPECT_EQ(only_u.code, 1) << only_u.out;  // nothing judged is not a pass
  EXPECT_THAT(only_u.out, HasSubstr("no expectation was judged"));
  EXPECT_THAT(only_u.out, HasSubstr("0 passed, 0 failed, 3 not run"));
  EXPECT_THAT(only_u.out, HasSubstr("not run: its reference 's' was not selected"));
  EXPECT_THAT(only_u.out, HasSubstr("SKIP " + file + " s at its points: not run: the strategy was not selected"));
}

// check --results: expectations judged on stored runs (shards of one long run, say) give the
// verdicts a check that runs them gives; results of another version of the file, of an
// unfinished run or with a shard missing are refused, naming what is wrong.
TEST(CliTest, CheckJudgesStoredResultsAsItJudgesItsOwnRuns) {
  const std::string text = R"(name: stored
ranks: 2
seeds: 6
params: {t: 1s}
program: [{sleep: "${t}"}, {mark: done}]
strategies: {s: , u: }
sweep: {params.t: [1s, 3s]}
expect:
  s: {metric: {name: done_s, stat: max, max: 1.5}, at: {params.t: 1s}}
  u: {metric: {name: done_s, stat: max, max: 1.5}}
)";
  const std::string file = write_temp("stored.yaml", text);
  const std::string dir = test_dir() + "stored_";
  ASSERT_EQ(racesim("run " + file + " --shard 0/2 --out " + dir + "s0").code, 0);
  ASSERT_EQ(racesim("run " + file + " --shard 1/2 --out " + dir + "s1").code, 0);
  auto ran = racesim("check " + file);
  auto judged = racesim("check " + file + " --results " + dir + "s0 --results " + dir + "s1");
  EXPECT_EQ(ran.code, 1) << ran.out;  // u fails at params.t=3s
  EXPECT_EQ(judged.code, 1) << judged.out;
  EXPECT_THAT(judged.out, HasSubstr("judging 24 runs from 2 result sets: 4 programs x 6 seeds from 0"));
  EXPECT_THAT(judged.out, HasSubstr("FAIL " + file + " u @ params.t=3s max(done_s) in [-inf, 1.5]: max(done_s) = 3 over 6 of 6 runs"));
  EXPECT_THAT(judged.out, HasSubstr("2 passed, 1 failed\n"));
  // The same verdict lines, whichever way the runs were made.
  auto verdicts = [](const std::string& out) {
    std::string lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("PASS ", 0) == 0 || line.rfind("FAIL ", 0) == 0) lines += line + "\n";
    }
    return lines;
  };
  EXPECT_EQ(verdicts(judged.out), verdicts(ran.out));
  EXPECT_FALSE(verdicts(ran.out).empty());
  // A shard missing, another experiment, an unfinished file, a changed scenario: refused.
  auto missing = racesim("check " + file + " --results " + dir + "s0");
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.out, HasSubstr("shard"));
  const std::string changed = write_temp("stored.yaml", text + "# a comment changes the content\n");
  ASSERT_EQ(changed, file);
  auto stale = racesim("check " + file + " --results " + dir + "s0 --results " + dir + "s1");
  EXPECT_EQ(stale.code, 2);
  EXPECT_THAT(stale.out, HasSubstr("were run from another version of " + file + ", not from " + file + " as it is now"));
  const std::string cut = dir + "cut";
  std::filesystem::create_directories(cut);
  {
    const std::string whole = read_file(dir + "s0/results.jsonl");
    std::ofstream(cut + "/results.jsonl") << whole.substr(0, whole.rfind("{\"end\""));
  }
  auto unfinished = racesim("check " + file + " --results " + cut);
  EXPECT_EQ(unfinished.code, 2);
  EXPECT_THAT(unfinished.out, HasSubstr(cut + "/results.jsonl"));
  // --results takes the runs as they were made: no selection, one file.
  auto mixed = racesim("check " + file + " --results " + dir + "s0 --seeds 3");
  EXPECT_EQ(mixed.code, 2);
  EXPECT_THAT(mixed.out, HasSubstr("cannot be given with it"));
  auto two = racesim("check " + file + " " + file + " --results " + dir + "s0");
  EXPECT_EQ(two.code, 2);
  EXPECT_THAT(two.out, HasSubstr("judges one scenario file's stored results; 2 files were given"));
}

// live --calibrate measures a real directory and writes overrides that --set-file applies, located
// FILE:LINE in errors; it leaves nothing in the directory.
TEST(CliTest, CalibrationWritesOverridesThatSetFileApplies) {
  const std::string dir = test_dir() + "calibrate_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = test_dir() + "calibrated.set";
  auto cal = racesim("live --calibrate --dir " + dir + " --mount cache --out " + file +
                     " --stream-bytes 1048576 --samples 20 --streams 2");
  ASSERT_EQ(cal.code, 0) << cal.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "the calibration removes what it wrote";
  const std::string text = read_file(file);
  EXPECT_THAT(text, HasSubstr("# file system: "));
  EXPECT_THAT(text, HasSubstr("# metadata medians (20 each): create "));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.kind=local\n"));
  EXPECT_THAT(text, testing::ContainsRegex("\nplatform.storage.cache.meta_latency=[0-9]+ns\n"));
  EXPECT_THAT(text, testing::ContainsRegex("\nplatform.storage.cache.client_bandwidth=[1-9][0-9]*B/s\n"));
  EXPECT_THAT(text, testing::ContainsRegex("\nplatform.storage.cache.truncate_bandwidth=[1-9][0-9]*B/s\n"));
  // Reads alone and two at once, each in a process of its own, by its CPU time: the rate reads share.
  EXPECT_THAT(text, testing::ContainsRegex("\n# reads at once, each in a process of its own as live workers read "
                                           "\\(new buffers\\): a read of 1 MiB took\n#   [0-9]+\\.[0-9] ms of CPU time "
                                           "with 2 at once \\(median of 40\\) and [0-9]+\\.[0-9] ms alone \\(median of 20, rounds in turn\\)"));
  EXPECT_THAT(text, testing::ContainsRegex("\nplatform.storage.cache.read_shared_bandwidth=[1-9][0-9]*B/s\n"));
  // Two writers of one file took turns at its inode lock: the odds that one kept it.
  EXPECT_THAT(text, testing::ContainsRegex("# two writers of one file at once \\(as live runs write, 3 MiB each in "
                                           "192 KiB writes, 5 rounds\\): of [1-9][0-9]* writes that returned while both wrote, "));
  EXPECT_THAT(text, testing::ContainsRegex("\n#   as the model's odds of keeping the lock: write_lock_keep [01]\\.[0-9]{3}; "));
  // The measured mount in a scenario: its makespan follows the file, and a --set after it wins.
  const std::string scenario = write_temp("calibrated.yaml", R"(name: calibrated
ranks: 2
seeds: 3
platform:
  storage:
    cache: {kind: nfs, mount: /cache, meta_latency: 1s, bandwidth: 1MB/s, client_bandwidth: 1MB/s}
program:
  - write_file: {path: "/cache/f${rank}", size: 1MB}
  - mark: done
strategies: {s: }
)");
  auto slow = racesim("run " + scenario + " --format csv");
  auto measured = racesim("run " + scenario + " --set-file " + file + " --format csv");
  ASSERT_EQ(slow.code, 0) << slow.out;
  ASSERT_EQ(measured.code, 0) << measured.out;
  EXPECT_NE(slow.out, measured.out);
  auto both = racesim("run " + scenario + " --set-file " + file + " --set platform.storage.cache.kind=nfs " +
                      "--set platform.storage.cache.meta_latency=1s --set platform.storage.cache.bandwidth=1MB/s " +
                      "--set platform.storage.cache.client_bandwidth=1MB/s --set platform.storage.cache.meta_jitter=0s " +
                      "--format csv");
  if (text.find("page_cache_bandwidth=") == std::string::npos) {
    EXPECT_EQ(both.out, slow.out) << "a --set overrides the file's line (meta_jitter: added by the file, "
                                     "a mount's setting the scenario left at its default)";
  } else {
    // A write-back file system (ext4, xfs, ...): the file also gives the mount a page cache,
    // which an nfs mount refuses, at the file's line.
    EXPECT_EQ(both.code, 2) << both.out;
    EXPECT_THAT(both.out, testing::ContainsRegex(file + ":[0-9]+:1: error: platform.storage.cache.page_cache_bandwidth: "
                                                        "a page cache is modelled on local mounts only"));
  }
  // Errors name the file, the line and the column.
  const std::string bad = write_temp("bad.set", "# measured\n\n  platform.storage.cache.bandwith=1GB/s\n");
  auto typo = racesim("run " + scenario + " --set-file " + bad);
  EXPECT_EQ(typo.code, 2);
  EXPECT_THAT(typo.out, HasSubstr(bad + ":3:3: error: no value 'bandwith' in platform.storage.cache"));
  const std::string garbled = write_temp("garbled.set", "platform.storage.cache.kind\n");
  auto not_kv = racesim("check " + scenario + " --set-file " + garbled);
  EXPECT_EQ(not_kv.code, 2);
  EXPECT_THAT(not_kv.out, HasSubstr(garbled + ":1:1: error: expected KEY=VALUE"));
  EXPECT_EQ(racesim("run " + scenario + " --set-file " + dir + "/none.set").code, 2);
  auto nodir = racesim("live --calibrate --dir " + dir + "/missing --mount cache");
  EXPECT_EQ(nodir.code, 2);
  EXPECT_THAT(nodir.out, HasSubstr("--dir " + dir + "/missing: not a directory"));
  auto badname = racesim("live --calibrate --dir " + dir + " --mount 'a.b'");
  EXPECT_EQ(badname.code, 2);
  EXPECT_THAT(badname.out, HasSubstr("--mount 'a.b': expected the name of a mount"));
}

// A live directory where runs cannot make their files is refused before any run (every run used to
// fail, each scored as its strategy's failure, exit 0); a time scale that is not a number is
// refused (NaN passed CLI11's range check, and the workers never finished).
TEST(CliTest, LiveRefusesAnUnusableDirectoryAndATimeScaleThatIsNotANumber) {
  const std::string run = "live " + kExamples + "publish_race.yaml --runs 2 --dir ";
  for (const std::string dir : {"/proc", "/sys"}) {
    const auto r = racesim(run + dir);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr("racesim: live --dir " + dir + ": cannot create a directory in " + dir));
    EXPECT_THAT(r.out, testing::Not(HasSubstr("%")));  // no table: no run was made
  }
  for (const std::string scale : {"nan", "inf", "-1", "0"}) {
    const auto r = racesim(run + test_dir() + " --time-scale " + scale);
    EXPECT_EQ(r.code, 2) << scale;
    EXPECT_THAT(r.out, HasSubstr("--time-scale: expected a number from 1e-06 to 1000, got '" + scale + "'"));
  }
}

// Ranks are bounded by memory, sized before a run starts, not by a constant: a run that cannot
// fit is refused saying what would (every command that runs), and a run of 200,000 ranks (twice
// the old bound) runs. Under the sanitizers the run that fits is 20,000 ranks: the same code, but
// 200,000 fibers of 64 KiB took 2.5 minutes and 14.8 GB there, the largest part of CI's tests.
TEST(CliTest, ARunThatCannotFitInMemoryIsRefusedSayingWhatFits) {
#ifdef RACESIM_SANITIZED
  const std::string fitting_ranks = "20000";
#else
  const std::string fitting_ranks = "200000";
#endif
  // (The wait puts the ranks on fibers, sized at 16 KiB each: 160 GB for 10^7.)
  const std::string file = write_temp("many_ranks.yaml", "name: many\nranks: 2\nseeds: 1\n"
                                                          "program: [{compute: 1s}, {barrier: all}, {mark: m}, {wait: {marked: m}}]\n"
                                                          "strategies: {a: {}}\n");
  for (const std::string command : {"run", "replay", "explore"}) {
    const auto r = racesim(command + " " + file + " --set ranks=10000000" + (command == "run" ? "" : command == "replay" ? " -s a --seed 0" : " -s a"));
    EXPECT_EQ(r.code, 2) << command << r.out;
    EXPECT_THAT(r.out, testing::ContainsRegex("run.? of 10000000 ranks on [0-9]+ threads? would need about [0-9.]+ GiB"))
        << command;
    EXPECT_THAT(r.out, testing::ContainsRegex("what fits: .*at most [0-9]+ ranks on")) << command;
  }
  const auto big = racesim("run " + file + " --set ranks=" + fitting_ranks + " --seeds 1 --jobs 1");
  EXPECT_EQ(big.code, 0) << big.out;
  EXPECT_THAT(big.out, HasSubstr("pass:1"));
}

#ifndef RACESIM_SANITIZED  // ASan reserves terabytes of shadow: it cannot run under an address-space limit
// Stackless ranks (a program that only computes and meets barriers) are sized at a quarter of a
// fiber's: under the same 4 GiB limit, four times as many fit, and a run of them that fits runs.
TEST(CliTest, StacklessRanksAreSizedAtAQuarterOfAFibersAndRunWhereTheyFit) {
  const std::string stackless = write_temp("stackless.yaml", "name: s\nranks: 2\nseeds: 1\n"
                                                              "program: [{compute: 1s}, {barrier: all}]\nstrategies: {a: {}}\n");
  const std::string fibers = write_temp("fibers.yaml", "name: f\nranks: 2\nseeds: 1\n"
                                                        "program: [{compute: 1s}, {barrier: all}, {mark: m}, {wait: {marked: m}}]\n"
                                                        "strategies: {a: {}}\n");
  const auto limited = [](const std::string& args) {
    return cli_process::shell("ulimit -v 4194304 && " + std::string(RACESIM_CLI) + " " + args);
  };
  const auto fits = [](const std::string& out) -> long long {
    std::smatch m;
    return std::regex_search(out, m, std::regex("at most ([0-9]+) ranks on 1 thread")) ? std::stoll(m[1]) : -1;
  };
  const auto f = limited("run " + fibers + " --set ranks=1000000 --jobs 1");
  const auto s = limited("run " + stackless + " --set ranks=1000000 --jobs 1");
  EXPECT_EQ(f.code, 2) << f.out;
  EXPECT_EQ(s.code, 2) << s.out;
  ASSERT_GT(fits(f.out), 100000) << f.out;
  EXPECT_NEAR(static_cast<double>(fits(s.out)) / static_cast<double>(fits(f.out)), 4.0, 0.01) << s.out;
  const auto run = limited("run " + stackless + " --set ranks=" + std::to_string(fits(s.out)) + " --jobs 1");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("pass:1"));
}
#endif

TEST(CliTest, ShardsMergeIntoExactlyWhatOneRunGives) {
  const std::string base = "run " + kExamples + "publish_race.yaml --seeds 90 --out " + test_dir();
  ASSERT_EQ(racesim(base + "full").code, 0);
  std::string dirs;
  for (int i = 0; i < 3; ++i) {
    const std::string dir = test_dir() + "shard" + std::to_string(i);
    ASSERT_EQ(racesim("run " + kExamples + "publish_race.yaml --seeds 90 --jobs 1 --shard " +
                      std::to_string(i) + "/3 --out " + dir).code, 0);
    dirs += " " + dir;
  }
  auto merged = racesim("merge" + dirs + " --out " + test_dir() + "merged");
  ASSERT_EQ(merged.code, 0) << merged.out;
  EXPECT_THAT(merged.out, HasSubstr("merged 180 runs from 3 result sets"));
  const std::string full = read_file(test_dir() + "full/results.jsonl");
  EXPECT_FALSE(full.empty());
  EXPECT_EQ(read_file(test_dir() + "merged/results.jsonl"), full);
  EXPECT_EQ(read_file(test_dir() + "merged/summary.csv"),
            read_file(test_dir() + "full/summary.csv"));
  const std::string md = read_file(test_dir() + "full/report.md");
  EXPECT_THAT(md, HasSubstr("# publish_race\n\n| strategy | runs | failed | failure rate | 95% CI |"));
  EXPECT_THAT(md, HasSubstr("| write_then_publish | 90 | 0 | 0.0% | 0.0% - 4.1% |"));
  EXPECT_THAT(md, HasSubstr("## Example failures"));
  EXPECT_THAT(md, HasSubstr("| metric | visible_while_writing | write_then_publish |\n"));
  EXPECT_THAT(md, HasSubstr("| loaded_1_s | 48.5 s (65.61 s), 20 of 90 |"));
  EXPECT_EQ(read_file(test_dir() + "merged/report.md"), md);
  // Overlapping shards and bad shard specs are errors.
  auto twice = racesim("merge" + dirs + dirs + " --out " + test_dir() + "twice");
  EXPECT_EQ(twice.code, 2);
  EXPECT_THAT(twice.out, HasSubstr("are both shard 0/3"));
  // An output that is an input (however spelled) is refused before anything is read or written:
  // it used to overwrite the shard.
  const std::string shard0_before = read_file(test_dir() + "shard0/results.jsonl");
  auto onto = racesim("merge" + dirs + " --out " + test_dir() + "./shard0/");
  EXPECT_EQ(onto.code, 2);
  EXPECT_THAT(onto.out, HasSubstr("merge: --out " + test_dir() + "./shard0/ is the input " + test_dir() + "shard0"));
  EXPECT_EQ(read_file(test_dir() + "shard0/results.jsonl"), shard0_before);
  auto report_onto = racesim("report " + kExamples + "publish_race.yaml --results " + test_dir() + "shard0 --out " +
                             test_dir() + "shard0");
  EXPECT_EQ(report_onto.code, 2);
  EXPECT_THAT(report_onto.out, HasSubstr("report --results: --out " + test_dir() + "shard0 is the input"));
  // Results of another experiment, a missing shard, a cut or an empty file are refused by name.
  const std::string other = test_dir() + "other_seeds";
  ASSERT_EQ(racesim("run " + kExamples + "publish_race.yaml --seeds 91 --jobs 1 --shard 1/3 --out " + other).code, 0);
  const std::string s0 = test_dir() + "shard0", s2 = test_dir() + "shard2";
  auto mixed = racesim("merge " + s0 + " " + other + " " + s2 + " --out " + test_dir() + "mixed");
  EXPECT_EQ(mixed.code, 2);
  EXPECT_THAT(mixed.out, HasSubstr("shard 1/3 missing: the merge would leave out seeds (" + other +
                                   " is of another experiment: --seeds differs: '91' and '90')"));
  auto gap = racesim("merge " + s0 + " " + s2 + " --out " + test_dir() + "gap");
  EXPECT_EQ(gap.code, 2);
  EXPECT_THAT(gap.out, HasSubstr("shard 1/3 missing"));
  // A shard directory named but not there (its task has not run), or not a run's.
  auto absent = racesim("merge " + s0 + " " + test_dir() + "shard_never " + s2 + " --out " + test_dir() + "gap");
  EXPECT_EQ(absent.code, 2);
  EXPECT_THAT(absent.out, HasSubstr(test_dir() + "shard_never: no such directory (a shard that has not run yet?)"));
  std::filesystem::create_directories(test_dir() + "not_a_run");
  EXPECT_THAT(racesim("merge " + s0 + " " + test_dir() + "not_a_run --out " + test_dir() + "gap").out,
              HasSubstr(test_dir() + "not_a_run/results.jsonl: no such file (" + test_dir() + "not_a_run is not a run's --out)"));
  const std::string cut = test_dir() + "cut";
  std::filesystem::create_directories(cut);
  const std::string whole = read_file(s2 + "/results.jsonl");
  std::ofstream(cut + "/results.jsonl") << whole.substr(0, whole.rfind('\n', whole.size() - 2) + 1);
  auto cut_merge = racesim("merge " + s0 + " " + cut + " --out " + test_dir() + "cutm");
  EXPECT_EQ(cut_merge.code, 2);
  EXPECT_THAT(cut_merge.out, HasSubstr(cut + "/results.jsonl: cut short"));
  std::ofstream(cut + "/results.jsonl").flush();
  EXPECT_THAT(racesim("merge " + s0 + " " + cut + " --out " + test_dir() + "cutm").out,
              HasSubstr(cut + "/results.jsonl: empty"));
  EXPECT_EQ(racesim("run " + kExamples + "publish_race.yaml --shard 3/3").code, 2);
  EXPECT_EQ(racesim("run " + kExamples + "publish_race.yaml --shard x").code, 2);
}

// Every output is written whole or not at all; a write that fails is an error naming the file.
TEST(CliTest, OutputsThatCannotBeWrittenAreErrorsNamingTheFile) {
  auto trace = racesim("replay " + kExamples + "wait_cycle.yaml --strategy ring --seed 3 --trace /proc/version");
  EXPECT_EQ(trace.code, 2);
  EXPECT_THAT(trace.out, HasSubstr("cannot write /proc/version.tmp"));
  EXPECT_THAT(trace.out, ::testing::Not(HasSubstr("Chrome trace written")));
  const std::string file = write_temp("not_a_dir", "x");
  auto out = racesim("run " + kExamples + "publish_race.yaml --seeds 5 --out " + file + "/sub");
  EXPECT_EQ(out.code, 2);
  EXPECT_THAT(out.out, HasSubstr("cannot create " + file + "/sub"));
  auto junit = racesim("check " + kExamples + "publish_race.yaml --seeds 5 --junit " + file + "/j.xml");
  EXPECT_EQ(junit.code, 2);
  EXPECT_THAT(junit.out, HasSubstr("cannot write " + file + "/j.xml.tmp"));
}

// A long run keeps its results as runs finish: Ctrl-C (SIGINT) stops it saying what it kept, a
// kill -9 loses at most the last moments, and `--resume DIR` runs only what is missing, ending
// with the very files an uninterrupted run writes.
TEST(CliTest, InterruptedRunsKeepWhatRanAndResumeToTheSameFiles) {
#ifdef RACESIM_SANITIZED
  const int seeds = 30;  // runs take several times longer under the sanitizers
#else
  const int seeds = 100;
#endif
  // About 6 ms per run in the Release tree: 200,000 events each.
  const std::string file = write_temp("long_runs.yaml", R"(name: long_runs
ranks: 2
seeds: 10
program: [{repeat: {times: 100000, do: [{sleep: 1ms}]}}]
strategies: {a: {}, b: {}}
)");
  const std::string dir = test_dir() + "interrupted/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string run = std::string(RACESIM_CLI) + " run " + file + " --seeds " + std::to_string(seeds) + " --jobs 2";
  ASSERT_EQ(racesim("run " + file + " --seeds " + std::to_string(seeds) + " --jobs 2 --out " + dir + "full").code, 0);
  // SIGINT once the run has started, then SIGKILL once the resumed run has written some records.
  const std::string script = "cd " + dir + " && { " + run + " --out part > /dev/null 2> int.err & pid=$!; "
      "until [ -s part/results.jsonl ] || ! kill -0 $pid 2> /dev/null; do sleep 0.005; done; "
      "kill -INT $pid; wait $pid; echo \"int=$?\"; n=$(wc -l < part/results.jsonl); echo \"after_int=$n\"; " +
      run + " --resume part > /dev/null 2> kill.err & pid=$!; "
      "until [ $(wc -l < part/results.jsonl) -gt $n ] || ! kill -0 $pid 2> /dev/null; do sleep 0.005; done; "
      "kill -KILL $pid; wait $pid; echo \"kill=$?\"; echo \"after_kill=$(wc -l < part/results.jsonl)\"; }";
  auto r = shell(script);
  EXPECT_THAT(r.out, HasSubstr("int=130")) << "the run finished before SIGINT reached it?\n" << r.out;
  EXPECT_THAT(r.out, HasSubstr("kill=137")) << r.out;
  const std::string int_err = read_file(dir + "int.err");
  EXPECT_THAT(int_err, HasSubstr("racesim: interrupted; part/results.jsonl keeps "));
  EXPECT_THAT(int_err, HasSubstr(" of " + std::to_string(2 * seeds) + " runs; to run the rest, repeat the command with --resume part in place of --out"));
  EXPECT_THAT(read_file(dir + "kill.err"), HasSubstr("racesim: resuming part/results.jsonl: "));
  EXPECT_FALSE(std::filesystem::exists(dir + "part/summary.csv")) << "no summary of a part of the runs";
  // merge will not take the partial results.
  auto partial = racesim("merge " + dir + "part --out " + dir + "merged");
  EXPECT_EQ(partial.code, 2);
  EXPECT_THAT(partial.out, HasSubstr("cut short"));
  // The rest, then the very files of the uninterrupted run.
  auto rest = racesim("run " + file + " --seeds " + std::to_string(seeds) + " --jobs 2 --resume " + dir + "part");
  ASSERT_EQ(rest.code, 0) << rest.out;
  EXPECT_THAT(rest.out, HasSubstr("racesim: resuming " + dir + "part/results.jsonl: "));
  for (const char* f : {"/results.jsonl", "/summary.csv", "/report.md"}) {
    EXPECT_EQ(read_file(dir + "part" + f), read_file(dir + "full" + f)) << f;
  }
  // Resuming with other options is refused, naming the difference.
  auto other = racesim("run " + file + " --seeds " + std::to_string(seeds + 1) + " --resume " + dir + "part");
  EXPECT_EQ(other.code, 2);
  EXPECT_THAT(other.out, HasSubstr("holds another experiment than this command runs: --seeds differs"));
  EXPECT_EQ(racesim("run " + file + " --out " + dir + "x --resume " + dir + "part").code, 2);
}

// A write that fails during a run (here: the file-size limit) stops the run with an error naming
// the file and what it kept, which --resume then completes.
TEST(CliTest, AResultsFileThatCannotGrowStopsTheRunNamingIt) {
  const std::string dir = test_dir() + "fsize";
  std::filesystem::remove_all(dir);
  const std::string args = kExamples + "publish_race.yaml --seeds 500 --jobs 2";
  auto r = shell("trap '' XFSZ; ulimit -f 8; " + std::string(RACESIM_CLI) + " run " + args + " --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("racesim: cannot write " + dir + "/results.jsonl: File too large; " + dir +
                               "/results.jsonl keeps "));
  auto rest = racesim("run " + args + " --resume " + dir);
  EXPECT_EQ(rest.code, 0) << rest.out;
  auto whole = racesim("run " + args + " --out " + dir + "_whole");
  EXPECT_EQ(read_file(dir + "/results.jsonl"), read_file(dir + "_whole/results.jsonl"));
}

// Work that cannot fit in memory is refused before it starts, saying what would fit; more
// threads than runs is not an error.
TEST(CliTest, WorkIsSizedBeforeItStarts) {
  auto huge = racesim("run " + std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml --seeds 10000000");
  EXPECT_EQ(huge.code, 2);
  EXPECT_THAT(huge.out, HasSubstr("220000000 runs of 8 ranks on"));
  EXPECT_THAT(huge.out, HasSubstr("split the work with --shard I/N"));
  auto many = racesim("run " + kExamples + "publish_race.yaml --seeds 3 --jobs 1000");
  EXPECT_EQ(many.code, 0) << many.out;
}

// Runs from another working directory, with the path spelled otherwise, or of the same scenario
// under another file name (a copy, a symlink), give the same results: a run names the scenario
// by its content and `name:` (its diagnoses say publish_race.yaml:LINE:COL), so shards run under
// both names merge into the bytes of one run.
TEST(CliTest, ResultsDoNotDependOnThePathsSpellingOrTheFilesName) {
  const std::string a = test_dir() + "spell_a", b = test_dir() + "spell_b", c = test_dir() + "spell_c",
                    d = test_dir() + "spell_d";
  ASSERT_EQ(racesim("run " + kExamples + "publish_race.yaml --seeds 20 --out " + a).code, 0);
  ASSERT_EQ(racesim("run " + kExamples + "../examples/./publish_race.yaml --seeds 20 --out " + b).code, 0);
  EXPECT_EQ(read_file(a + "/results.jsonl"), read_file(b + "/results.jsonl"));
  const std::string copy = write_temp("copy_of_the_race.yaml", read_file(kExamples + "publish_race.yaml"));
  const std::string link = test_dir() + "linked_race.yaml";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(std::filesystem::absolute(kExamples + "publish_race.yaml"), link);
  ASSERT_EQ(racesim("run " + copy + " --seeds 20 --out " + c).code, 0);
  EXPECT_EQ(read_file(c + "/results.jsonl"), read_file(a + "/results.jsonl"));
  EXPECT_THAT(read_file(c + "/results.jsonl"), HasSubstr("(publish_race.yaml:"));
  EXPECT_THAT(read_file(c + "/results.jsonl"), testing::Not(HasSubstr("copy_of_the_race")));
  const std::string s0 = test_dir() + "spell_s0", s1 = test_dir() + "spell_s1";
  ASSERT_EQ(racesim("run " + copy + " --seeds 20 --shard 0/2 --out " + s0).code, 0);
  ASSERT_EQ(racesim("run " + link + " --seeds 20 --shard 1/2 --out " + s1).code, 0);
  ASSERT_EQ(racesim("merge " + s0 + " " + s1 + " --out " + d).code, 0);
  EXPECT_EQ(read_file(d + "/results.jsonl"), read_file(a + "/results.jsonl"));
}

TEST(CliTest, ScenarioErrorsExitTwoWithLocations) {
  const std::string broken = write_temp("broken.yaml", "name: b\nranks: 2\nprogram: [{slep: 1s}]\nstrategies: {s: }\n");
  auto r = racesim("validate " + broken);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr(broken + ":3:12: error: unknown primitive 'slep'"));
  auto missing = racesim("run /nonexistent/x.yaml");
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent/x.yaml: error: cannot open it (No such file or directory)"));
}

TEST(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(racesim("").code, 2);
  EXPECT_EQ(racesim("run").code, 2);
  EXPECT_EQ(racesim("run " + kExamples + "publish_race.yaml --jobs 0").code, 2);
  auto strat = racesim("run " + kExamples + "publish_race.yaml --strategy nope");
  EXPECT_EQ(strat.code, 2);
  EXPECT_THAT(strat.out, HasSubstr("--strategy 'nope' is not defined"));
  auto pol = racesim("run " + kExamples + "publish_race.yaml --policy lifo");
  EXPECT_EQ(pol.code, 2);
  EXPECT_THAT(pol.out, HasSubstr("expected a schedule policy"));
}

// A seed is a whole number from 0 to 2^64 - 1 and a run's seeds never wrap past it: a negative
// or a huge seed is refused (not taken modulo 2^64 or clamped), and so is a range that would
// wrap to 0; the last seeds themselves run.
TEST(CliTest, SeedsAreWholeNumbersAndRangesNeverWrap) {
  const std::string file = kExamples + "publish_race.yaml";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"run " + file + " --seed-start -5 --seeds 1", "--seed-start: expected a seed, a whole number from 0 to 18446744073709551615, got '-5'"},
           {"run " + file + " --seed-start 99999999999999999999 --seeds 1", "got 99999999999999999999"},
           {"replay " + file + " -s visible_while_writing --seed 1e3", "--seed: expected a seed"},
           {"shrink " + file + " -s visible_while_writing --seed -1", "--seed: expected a seed"},
           {"run " + file + " --seed-start 18446744073709551615 --seeds 2",
            "2 seeds from 18446744073709551615 run past the largest seed, 18446744073709551615 (they would wrap to 0): "
            "start at most 18446744073709551614"},
           {"check " + file + " --seed-start 18446744073709551610 --seeds 10", "start at most 18446744073709551606"},
           {"explore " + file + " -s visible_while_writing --seed-start 18446744073709551610 --budget 100",
            "start at most 18446744073709551516"},
           {"check --determinism " + file + " --seed-start 18446744073709551615 --seeds 2", "start at most"},
       }) {
    const auto r = racesim(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << args;
  }
  const auto last = racesim("run " + file + " --seed-start 18446744073709551614 --seeds 2 -j 1");
  EXPECT_EQ(last.code, 0) << last.out;
  EXPECT_THAT(last.out, HasSubstr("2 seeds from 18446744073709551614"));
  EXPECT_THAT(last.out, HasSubstr("e.g. seed 18446744073709551615"));  // a failure of the last seed
}

// --set-file reads a regular text file of bounded size: a directory or a device is an error (it
// used to apply nothing, and /dev/zero was read to 2 GB), and so is a NUL byte; an error quotes
// at most 80 characters of a line.
TEST(CliTest, SetFileIsABoundedRegularTextFile) {
  const std::string run = "run " + kExamples + "publish_race.yaml --seeds 1 --set-file ";
  const std::string big = write_temp("big.set", std::string(2 * 1024 * 1024, 'a'));
  const std::string nul = write_temp("nul.set", std::string("params.x=1") + '\0' + "\n");
  const std::string longer = write_temp("long.set", std::string(3000, 'b') + "\n");
  for (const auto& [file, message] : std::vector<std::pair<std::string, std::string>>{
           {test_dir(), "a directory, not an override file"},
           {"/dev/zero", "not a regular file (a device, a pipe or a socket), not an override file"},
           {big, "larger than 1 MiB, not an override file"},
           {nul, "nul.set:1:11: error: a NUL byte"},
           {longer, "got '" + std::string(80, 'b') + "...'"},
       }) {
    const auto r = racesim(run + file);
    EXPECT_EQ(r.code, 2) << file << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << file;
    EXPECT_LT(r.out.size(), 1000u) << file;
  }
}

TEST(CliTest, ReplayExplainsADeadlockAndWritesAChromeTrace) {
  const std::string trace = test_dir() + "cycle.json";
  auto r = racesim("replay " + kExamples + "wait_cycle.yaml --strategy ring --seed 3 --trace " + trace);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("deadlock at 0s"));
  EXPECT_THAT(r.out, HasSubstr("rank 2: wait on event 'mark 'done_0''"));
  std::ifstream in(trace);
  std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_THAT(json, HasSubstr("\"traceEvents\""));
  // list names the families' platform sections and every condition an `if` takes.
  const auto list = racesim("list");
  EXPECT_EQ(list.code, 0);
  EXPECT_THAT(list.out, HasSubstr("  host: {memory: BYTES, pin_bandwidth: BW, pageable_bandwidth: BW, cores: N, "
                                "scheduler: cfs|eevdf, sched_latency: D, sched_min_granularity: D, "
                                "sched_wakeup_granularity: D, sched_base_slice: D, sched_tick: D, run_queues: shared|per_core, "
                                "sched_balance_interval: D, sched_load_half_life: D, compute: cores|sleep} - each node's host "
                                "memory, and its cores (Linux's fair scheduler for host work, CFS or EEVDF (6.6 and later); "
                                "off unless cores are set; run_queues: per_core gives each core its own queue, balanced by "
                                "load every sched_balance_interval, as Linux; compute: sleep keeps "
                                "compute steps off them, as live runs sleep through them)\n"));
  EXPECT_THAT(list.out, HasSubstr("text: {path: P, equals: TEXT} | expr: \"${A == B}\", then: [steps]"));
}

// --shard auto takes the shard from a Slurm job array's variables (an array that starts at 4
// here), says which it chose, and its shards merge into what one run gives; outside a scheduler,
// or given a shard the scheduler disagrees with, it refuses, naming the variables.
TEST(CliTest, ShardAutoFollowsTheSchedulersVariables) {
  const std::string base = "run " + kExamples + "publish_race.yaml --seeds 30 --jobs 1 --out " + test_dir();
  ASSERT_EQ(racesim(base + "auto_full").code, 0);
  std::string dirs;
  for (int id = 4; id <= 6; ++id) {
    const std::string env = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                            " SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_COUNT=3";
    auto r = racesim_env(env, base + "auto" + std::to_string(id) + " --shard auto");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("--shard auto: shard " + std::to_string(id - 4) + "/3 (SLURM_ARRAY_TASK_ID=" +
                                 std::to_string(id) + " of the array 4-6)"));
    dirs += " " + test_dir() + "auto" + std::to_string(id);
  }
  auto merged = racesim("merge" + dirs + " --out " + test_dir() + "auto_merged");
  ASSERT_EQ(merged.code, 0) << merged.out;
  EXPECT_EQ(read_file(test_dir() + "auto_merged/results.jsonl"), read_file(test_dir() + "auto_full/results.jsonl"));
  auto outside = racesim(base + "auto_none --shard auto");
  EXPECT_EQ(outside.code, 2);
  EXPECT_THAT(outside.out, HasSubstr("no scheduler's variables are set: expected SLURM_ARRAY_TASK_ID"));
  auto disagree = racesim_env("JOB_COMPLETION_INDEX=1 RACESIM_SHARD_COUNT=3", base + "auto_bad --shard 2/3");
  EXPECT_EQ(disagree.code, 2);
  EXPECT_THAT(disagree.out, HasSubstr("--shard 2/3 disagrees with the scheduler's JOB_COMPLETION_INDEX=1"));
  auto k8s = racesim_env("JOB_COMPLETION_INDEX=1 RACESIM_SHARD_COUNT=3", base + "auto_k8s --shard auto");
  ASSERT_EQ(k8s.code, 0) << k8s.out;
  EXPECT_EQ(read_file(test_dir() + "auto_k8s/results.jsonl"), read_file(test_dir() + "auto5/results.jsonl"))
      << "the same shard from either scheduler";
}

TEST(CliTest, SweepsRunEveryPointAndShardsStillMerge) {
  const std::string file = kExamples + "slow_writer_sweep.yaml --seeds 20";
  auto one = racesim("run " + file + " --jobs 1 --format csv");
  auto three = racesim("run " + file + " --jobs 3 --format csv");
  ASSERT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(one.out, three.out);
  // 3 x 2 points x 2 strategies, one row each, after the header.
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 13);
  EXPECT_THAT(one.out, HasSubstr("params.write_time=5s faults.slow_writer.probability=1,write_then_publish,20,0,"));
  const std::string dir = test_dir() + "sweep_";
  ASSERT_EQ(racesim("run " + file + " --out " + dir + "full").code, 0);
  ASSERT_EQ(racesim("run " + file + " --shard 0/2 --out " + dir + "s0").code, 0);
  ASSERT_EQ(racesim("run " + file + " --shard 1/2 --out " + dir + "s1").code, 0);
  ASSERT_EQ(racesim("merge " + dir + "s0 " + dir + "s1 --out " + dir + "merged").code, 0);
  EXPECT_EQ(read_file(dir + "merged/results.jsonl"), read_file(dir + "full/results.jsonl"));
  EXPECT_THAT(read_file(dir + "full/results.jsonl"), HasSubstr("\"point\":\"params.write_time=100ms faults.slow_writer.probability=0\""));
  // One point replays alone; a label that is not a point is an error naming the points.
  auto replay = racesim("replay " + kExamples + "slow_writer_sweep.yaml -s write_then_publish --seed 2 "
                        "--point 'params.write_time=5s faults.slow_writer.probability=1'");
  EXPECT_EQ(replay.code, 0) << replay.out;
  EXPECT_THAT(replay.out, HasSubstr("write_then_publish @ params.write_time=5s faults.slow_writer.probability=1 / seed 2: pass"));
  EXPECT_THAT(replay.out, HasSubstr("faults.slow_writer = 1"));
  auto bad = racesim("replay " + kExamples + "slow_writer_sweep.yaml -s write_then_publish --seed 2 --point nowhere");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.out, HasSubstr("--point 'nowhere' is not a sweep point nor an axis filter KEY=VALUE (axes: "
                                 "params.write_time, faults.slow_writer.probability)"));
  // A near miss lists the close labels, one per line.
  auto near = racesim("replay " + kExamples + "slow_writer_sweep.yaml -s write_then_publish --seed 2 "
                      "--point 'params.write_time=5s faults.slow_writer.probability=2'");
  EXPECT_THAT(near.out, HasSubstr("close ones:\n  params.write_time=5s faults.slow_writer.probability=0\n"
                                  "  params.write_time=5s faults.slow_writer.probability=1\n"));
  // run --point takes labels and axis filters: one axis value keeps every point that has it.
  const std::string sweep = kExamples + "slow_writer_sweep.yaml";
  auto one_axis = racesim("run " + sweep + " --seeds 3 --format csv --point params.write_time=5s");
  EXPECT_EQ(one_axis.code, 0) << one_axis.out;
  EXPECT_THAT(one_axis.out, HasSubstr("params.write_time=5s faults.slow_writer.probability=0,"));
  EXPECT_THAT(one_axis.out, HasSubstr("params.write_time=5s faults.slow_writer.probability=1,"));
  EXPECT_EQ(one_axis.out.find("params.write_time=100ms"), std::string::npos);
  auto value = racesim("run " + sweep + " --seeds 3 --point params.write_time=7s");
  EXPECT_EQ(value.code, 2);
  EXPECT_THAT(value.out, HasSubstr("'7s' is not a value of sweep axis 'params.write_time' (values: 100ms, "));
  EXPECT_THAT(racesim("validate " + sweep).out, HasSubstr("  point params.write_time=5s faults.slow_writer.probability=1\n"));
}

// validate says how often each param drawn from a distribution is drawn, the default as such.
TEST(CliTest, ValidateSaysHowOftenEachParamIsDrawn) {
  const std::string file = write_temp("scoped.yaml", R"(name: scoped
ranks: 2
params:
  each: {uniform: {min: 1s, max: 2s}}
  mine: {uniform: {min: 1s, max: 2s}, per: rank}
  shared: {exponential: {mean: 5s}, per: run}
  fixed: 3s
program:
  - sleep: "${each + mine + shared + fixed}"
strategies: {s: }
)");
  auto r = racesim("validate " + file);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(": scoped, 2 ranks, 1 strategy\n"
                               "  param each: uniform(1s, 2s), drawn per use (the default: at each use, on each rank)\n"
                               "  param mine: uniform(1s, 2s), drawn per rank (once on each rank)\n"
                               "  param shared: exponential(mean 5s), drawn per run (once, shared by every rank)\n"));
  EXPECT_EQ(r.out.find("param fixed"), std::string::npos);
}

// report takes -s and --point as run does: the report's results are those runs alone; with
// --results (runs already made) they are refused, as every option that chooses runs is.
TEST(CliTest, ReportOfSomeStrategiesAtSomePoints) {
  const std::string out = test_dir() + "report_some";
  std::filesystem::remove_all(out);
  const std::string om = std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml";
  auto r = racesim("report " + om + " -s flock_as_in_pr -s tmp_rename --point faults.stall.probability=1 --seeds 10 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string page = read_file(out + "/om_read_while_write.md");
  EXPECT_THAT(page, HasSubstr("| faults.stall.probability=1 | flock_as_in_pr | 10 |"));
  EXPECT_THAT(page, HasSubstr("| faults.stall.probability=1 | tmp_rename | 10 |"));
  EXPECT_THAT(page, Not(HasSubstr("| faults.stall.probability=0 |")));
  EXPECT_THAT(page, Not(HasSubstr("| faults.stall.probability=1 | poll_glob |")));
  EXPECT_THAT(page, HasSubstr("| not run | poll_glob | - | at its points | not run: the strategy was not selected |"));
  EXPECT_THAT(racesim("report " + om + " -s flock_as_in_p --seeds 2 --out " + out).out,
              HasSubstr("did you mean 'flock_as_in_pr'?"));
  auto stored = racesim("report " + om + " --results " + out + " -s tmp_rename --out " + out + "2");
  EXPECT_EQ(stored.code, 2);
  EXPECT_THAT(stored.out, HasSubstr("--strategy chooses runs to make, and cannot be given with it"));
}

TEST(CliTest, ReportWritesMarkdownChartsAndCsvReproducibly) {
  const std::string a = test_dir() + "report_a", b = test_dir() + "report_b";
  const std::string files = kExamples + "slow_writer_sweep.yaml " + kExamples + "wait_cycle.yaml --seeds 30";
  auto r = racesim("report " + files + " --jobs 1 --out " + a);
  ASSERT_EQ(r.code, 0) << r.out;
  // check --report writes the same reports from the runs it checks the expectations on.
  auto checked = racesim("check " + files + " --jobs 3 --report " + b);
  ASSERT_EQ(checked.code, 0) << checked.out;
  EXPECT_THAT(checked.out, HasSubstr("PASS " + kExamples + "slow_writer_sweep.yaml write_then_publish @ "));
  EXPECT_THAT(checked.out, HasSubstr("wrote " + b + "/README.md"));
  for (const char* f : {"README.md", "slow_writer_sweep.md", "slow_writer_sweep.csv", "wait_cycle.md",
                        "slow_writer_sweep/failure_rate.svg", "slow_writer_sweep/makespan_5.svg",
                        "slow_writer_sweep/sweep_params_write_time_failure_rate_f1.svg",
                        "slow_writer_sweep/sweep_faults_slow_writer_probability_loaded_p50_s_f2.svg"}) {
    const std::string text = read_file(a + "/" + f);
    EXPECT_FALSE(text.empty()) << f;
    EXPECT_EQ(text, read_file(b + "/" + f)) << f << " differs between report --jobs 1 and check --report --jobs 3";
  }
  const std::string md = read_file(a + "/slow_writer_sweep.md");
  EXPECT_THAT(md, HasSubstr("![Failure rate per strategy with its 95% Wilson interval, one series per sweep point.](slow_writer_sweep/failure_rate.svg)"));
  EXPECT_THAT(md, HasSubstr("| pass | write_then_publish | params.write_time=100ms faults.slow_writer.probability=0 | never_fails |"));
  EXPECT_THAT(read_file(a + "/README.md"), HasSubstr("| [slow_writer_sweep](slow_writer_sweep.md) | 2 | 6 | 360 |"));
  EXPECT_THAT(read_file(a + "/slow_writer_sweep/failure_rate.svg"), HasSubstr("<svg"));
  // One chart per facet (the other axis's value), and passed and failed runs apart in the CDFs.
  EXPECT_THAT(md, HasSubstr("failure rate (%) against params.write_time (faults.slow_writer.probability=1)."));
  EXPECT_THAT(read_file(a + "/slow_writer_sweep/makespan_5.svg"), HasSubstr("passed ("));
  // Two axes: a heatmap of the failure rate over both, a panel per strategy with the rate in each
  // cell. A duration axis spanning decades (100ms to 5s) is numeric and logarithmic; strategies
  // with the same values are named as such (drawn side by side).
  EXPECT_THAT(md, HasSubstr("![Failure rate (%) by params.write_time (across) and faults.slow_writer.probability (up), a panel "
                            "per strategy.](slow_writer_sweep/heatmap_failure_rate.svg)"));
  const std::string heat = read_file(a + "/slow_writer_sweep/heatmap_failure_rate.svg");
  EXPECT_THAT(heat, HasSubstr("visible_while_writing"));
  EXPECT_THAT(heat, HasSubstr("write_then_publish"));
  EXPECT_EQ(heat, read_file(b + "/slow_writer_sweep/heatmap_failure_rate.svg"));
  EXPECT_THAT(md, HasSubstr("against params.write_time (faults.slow_writer.probability=0). The axis is logarithmic."));
  // Without gnuplot the report fails and says what to install.
  auto missing = racesim_env("RACESIM_GNUPLOT=/nonexistent/gnuplot", "report " + files + " --out " + a);
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.out, HasSubstr("apt-get install gnuplot-nox"));
  // From stored results: the same page, charts and CSV as running the seeds, but the setup line.
  const std::string runs = test_dir() + "report_runs", c = test_dir() + "report_c";
  std::filesystem::remove_all(runs);
  ASSERT_EQ(racesim("run " + kExamples + "slow_writer_sweep.yaml --seeds 30 --out " + runs).code, 0);
  auto stored = racesim("report " + kExamples + "slow_writer_sweep.yaml --results " + runs + " --out " + c);
  ASSERT_EQ(stored.code, 0) << stored.out;
  EXPECT_THAT(stored.out, HasSubstr("judging 360 runs from 1 result set"));
  const std::string from_runs = read_file(c + "/slow_writer_sweep.md");
  EXPECT_THAT(from_runs, HasSubstr("policy fifo, judged from stored results (racesim "));
  auto without_setup = [](std::string page) { return page.erase(page.find("- 4 ranks;"), page.find('\n', page.find("- 4 ranks;")) - page.find("- 4 ranks;")); };
  EXPECT_EQ(without_setup(from_runs), without_setup(md));
  for (const char* f : {"slow_writer_sweep.csv", "slow_writer_sweep/failure_rate.svg", "slow_writer_sweep/makespan_5.svg"}) {
    EXPECT_EQ(read_file(c + "/" + f), read_file(a + "/" + f)) << f;
  }
  EXPECT_EQ(racesim("report " + kExamples + "slow_writer_sweep.yaml " + kExamples + "wait_cycle.yaml --results " + runs +
                    " --out " + c).code, 2) << "stored results are of one scenario file";
  EXPECT_EQ(racesim("report " + kExamples + "slow_writer_sweep.yaml --seeds 5 --results " + runs + " --out " + c).code, 2);
}

}  // namespace

// ---- racesim live: the same program on real processes and a real directory ----

// The pid of a supervisor that no longer runs (above any pid_max), whose board
// LiveCleansUpAfterAKilledWorkerAndAfterADeadSupervisor leaves in /dev/shm on purpose for racesim
// to remove.
constexpr long kPlantedDeadSupervisorPid = 999999998;

// What live runs left behind: any entry in `dir` (the test's own), and boards in /dev/shm of a
// supervisor that no longer runs (other tests' live runs may be under way at the same time). Not
// the board planted for the dead-supervisor test: ctest -j runs it beside the others, and until
// its racesim removes that board every other test would count it.
std::vector<std::string> live_leftovers(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    out.push_back(it->path().string());
  }
  for (auto it = std::filesystem::directory_iterator("/dev/shm", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("racesim-live-", 0) != 0) continue;
    const long pid = std::atol(name.c_str() + 13);
    if (pid == kPlantedDeadSupervisorPid) continue;
    // Listed, then its supervisor found gone: another test's supervisor may have removed its
    // board and exited between the two, so a board counts only if it is still there after.
    std::error_code gone;
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH &&
        std::filesystem::exists(it->path(), gone)) {
      out.push_back(it->path().string());
    }
  }
  return out;
}

// Rank 0 writes 1 MiB of a 4 MiB model and marks it; rank 1 then loads it: a torn read, judged by
// the content identity in the real file's bytes. Written whole (and a barrier), every load is intact.
const char* const kLiveScenario = R"(name: live_probe
ranks: 3
seeds: 4
platform:
  storage:
    cache: {kind: local, mount: /cache}
program:
  - slot: body
  - mark: ready
strategies:
  torn:
    body:
      - if:
          rank: rank0
          then:
            - create: {path: /cache/model.om, size: 4MiB}
            - write: {path: /cache/model.om, bytes: 1MiB}
            - mark: half
            - sleep: 5s
          else:
            - wait: {marked: half, timeout: 60s}
            - load_model: /cache/model.om
  empty:
    body:
      - if:
          rank: rank0
          then:
            - create: {path: /cache/model.om, size: 4MiB}
            - mark: created
            - sleep: 5s
          else:
            - wait: {marked: created, timeout: 60s}
            - load_model: /cache/model.om
  whole:
    body:
      - if:
          rank: rank0
          then:
            - write_file: {path: /cache/tmp, size: 4MiB, fsync: true}
            - rename: {from: /cache/tmp, to: /cache/model.om}
      - barrier: published
      - load_model: /cache/model.om
      - count: loaded
  appended:
    body:
      - if:
          rank: rank0
          then:
            - write_file: {path: /cache/model.om, size: 1MiB}
            - append: {path: /cache/model.om, bytes: 4KiB}
            - mark: written
          else:
            - wait: {marked: written, timeout: 60s}
            - load_model: /cache/model.om
)";

TEST(CliTest, LiveRunsJudgeRealReadsByTheirContentIdentity) {
  const std::string scenario = write_temp("live_probe.yaml", kLiveScenario);
  const std::string dir = test_dir() + "live_dir";
  const std::string out = test_dir() + "live_out";
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(dir);
  auto r = racesim("live " + scenario + " --runs 2 --dir " + dir + " --time-scale 0.01 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, testing::ContainsRegex("torn +2 +2 +100.0%.*fail:2 +model_loads_intact:2"));
  EXPECT_THAT(r.out, testing::ContainsRegex("empty +2 +2 +100.0%.*fail:2 +model_loads_intact:2"));
  EXPECT_THAT(r.out, testing::ContainsRegex("whole +2 +0 +0.0%"));
  EXPECT_THAT(r.out, testing::ContainsRegex("appended +2 +2 +100.0%.*fail:2 +model_loads_intact:2"))
      << "appended bytes make the file longer than its writer meant";
  const std::string results = read_file(out + "/results.jsonl");
  EXPECT_THAT(results, HasSubstr("\"policy\":\"live:scale=0.01:fs="));
  EXPECT_THAT(results, testing::ContainsRegex("rank [12] loaded /cache/model.om at [0-9.]+ s: 1 MiB of 4 MiB "
                                              "written by rank 0 \\(live_probe.yaml:22:15\\)"));
  EXPECT_THAT(results, HasSubstr(": 0 B holding no model (no content identity)"));
  int live_records = 0;
  std::istringstream lines(results);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("strategy")) continue;
    EXPECT_EQ(j.at("mode"), "live");
    ++live_records;
    if (j.at("strategy") == "whole") {
      EXPECT_EQ(j.at("outcome"), "pass");
      EXPECT_EQ(j.at("metrics").at("loaded"), 3.0) << "every rank loaded after the barrier";
      EXPECT_EQ(j.at("metrics").at("fs.cache.files_at_end"), 1.0);
      EXPECT_EQ(j.at("metrics").at("fs.cache.bytes_at_end"), 4.0 * 1024 * 1024);
      EXPECT_FALSE(j.at("metrics").contains("fs.cache.mds_queue_peak"));
      // The CPU of the reads and writes, by the workers' thread clocks, in virtual seconds: three
      // loads of 4 MiB and one write of 4 MiB take some of it (at 0.01, 1 ms real is 0.1 s).
      EXPECT_GT(j.at("metrics").at("fs.cache.read_cpu_s").get<double>(), 0.0);
      EXPECT_GT(j.at("metrics").at("fs.cache.write_cpu_s").get<double>(), 0.0);
      EXPECT_LT(j.at("metrics").at("fs.cache.read_cpu_s").get<double>(),
                j.at("metrics").at("makespan_s").get<double>() * 3)
          << "three ranks, each reading for at most the whole run";
      // Each read and write, call by call, by kind (for live --fit-costs): the three loads and
      // the one write of 4 MiB, their CPU time the same clocks' as above.
      const auto& m = j.at("metrics");
      EXPECT_EQ(m.at("fs.cache.cost.read.count"), 3.0);
      EXPECT_EQ(m.at("fs.cache.cost.read.bytes"), 3 * 4.0 * 1024 * 1024);
      EXPECT_EQ(m.at("fs.cache.cost.read.bytes_squared"), 3 * 16.0 * 1024 * 1024 * 1024 * 1024);
      EXPECT_NEAR(m.at("fs.cache.cost.read.seconds").get<double>(), m.at("fs.cache.read_cpu_s").get<double>(), 1e-6);
      EXPECT_EQ(m.at("fs.cache.cost.write.count"), 1.0);
      EXPECT_EQ(m.at("fs.cache.cost.write.bytes"), 4.0 * 1024 * 1024);
      EXPECT_FALSE(m.contains("fs.cache.cost.text_read.count")) << "no text was read";
      // Its fsync, with the bytes written through the descriptor since it was opened, in real
      // time (I/O wait: not in write_cpu_s), alone on the board.
      EXPECT_EQ(m.at("fs.cache.cost.sync.count"), 1.0);
      EXPECT_EQ(m.at("fs.cache.cost.sync.bytes"), 4.0 * 1024 * 1024);
      EXPECT_GT(m.at("fs.cache.cost.sync.seconds").get<double>(), 0.0);
      EXPECT_EQ(m.at("fs.cache.cost.sync_alone.count"), 1.0);
      EXPECT_FALSE(m.contains("fs.cache.cost.sync_beside.count"));
      // Again by company, as the board counted the copies across the ranks' processes: the
      // write ran alone (the readers wait at the barrier); the three loads after it, alone or
      // beside each other as the machine ran them, each counted once, and those beside others
      // with two or three at once (at most one per CPU).
      EXPECT_EQ(m.at("fs.cache.cost.write_alone.count"), 1.0);
      EXPECT_FALSE(m.contains("fs.cache.cost.write_beside.count"));
      EXPECT_FALSE(m.contains("fs.cache.cost.read_amid_writes.count")) << "the write ended before the loads began";
      const double alone = m.value("fs.cache.cost.read_alone.count", 0.0);
      const double beside = m.value("fs.cache.cost.read_beside.count", 0.0);
      EXPECT_EQ(alone + beside, 3.0);
      EXPECT_EQ(m.contains("fs.cache.cost.read_beside.running"), beside > 0);
      if (beside > 0) {
        EXPECT_GE(m.at("fs.cache.cost.read_beside.running").get<double>(), beside);
        EXPECT_LE(m.at("fs.cache.cost.read_beside.running").get<double>(), 3 * beside);
      }
    }
  }
  EXPECT_EQ(live_records, 8);

  // The mount's costs fitted to these runs: the loads (1 MiB torn, 4 MiB whole, 4 MiB + 4 KiB
  // appended) give a line; the empty file's loads, of a file without a content identity, are
  // reads of a text. The override file applies to the scenario as the calibration's does.
  const std::string fitted = test_dir() + "live_costs.set";
  auto fit = racesim("live --fit-costs " + out + " --mount cache --out " + fitted);
  ASSERT_EQ(fit.code, 0) << fit.out;
  const std::string costs = read_file(fitted);
  EXPECT_THAT(costs, HasSubstr("# racesim live --fit-costs " + out + " --mount cache\n"));
  EXPECT_THAT(costs, HasSubstr("8 runs of 4 programs (live:scale=0.01:fs="));
  EXPECT_THAT(costs, testing::ContainsRegex("\nplatform.storage.cache.file_overhead.read=[0-9]+ns\n"));
  EXPECT_THAT(costs, testing::ContainsRegex("\nplatform.storage.cache.file_overhead.text_read=[0-9]+ns\n"));
  EXPECT_THAT(costs, testing::ContainsRegex("# reads of a text \\(a pointer, a marker\\): [1-4] of them"));
  // Four programs: each kind's mean cost in each apart, the whole one's loads of 4 MiB (three a run).
  EXPECT_THAT(costs, HasSubstr("\n# each kind's mean cost by program (real time)"));
  EXPECT_THAT(costs, testing::ContainsRegex("\n#     whole: 6, 4\\.0 MiB, [0-9.]+ ms \\([0-9.]+ ms per MiB\\)\n"));
  // (On a write-back file system the writes' rate is the page cache's, which a calibration of it
  // sets up: as it does, here.)
  const bool write_back = costs.find("page_cache_stream_bandwidth=") != std::string::npos;
  // The fsyncs give the disk's rates where there is a disk behind the page cache, and nothing
  // where there is none.
  EXPECT_THAT(costs, HasSubstr("\n# fsyncs (real time: the caller sleeps while the disk works): 2 of them, 4.0 MiB "));
  if (write_back) {
    EXPECT_THAT(costs, testing::ContainsRegex("\nplatform.storage.cache.disk_stream_bandwidth=[0-9]+B/s\n"));
  } else {
    EXPECT_THAT(costs, HasSubstr("no disk behind this file system (no write-back); nothing set\n"));
  }
  auto applied = racesim("run " + scenario + " --seeds 2 --set-file " + fitted +
                         (write_back ? " --set platform.storage.cache.page_cache_bandwidth=1GB/s"
                                       " --set platform.storage.cache.dirty_limit=1GiB"
                                     : ""));
  EXPECT_EQ(applied.code, 0) << applied.out;
  auto other = racesim("live --fit-costs " + out + " --mount other");
  EXPECT_EQ(other.code, 2);
  EXPECT_THAT(other.out, HasSubstr("no run recorded the costs of mount 'other'"));
  auto no_mount = racesim("live --fit-costs " + out);
  EXPECT_EQ(no_mount.code, 2);
  EXPECT_THAT(no_mount.out, HasSubstr("live --fit-costs DIR takes --mount"));
  EXPECT_THAT(live_leftovers(dir), testing::IsEmpty());

  // Side by side with the simulation of the same seeds: merge keeps each experiment's section
  // (never pooled), report --results compares them, check --results refuses to judge the pair.
  const std::string sim = test_dir() + "live_sim", merged = test_dir() + "live_merged";
  const std::string rep = test_dir() + "live_report";
  for (const auto& d : {sim, merged, rep}) std::filesystem::remove_all(d);
  ASSERT_EQ(racesim("run " + scenario + " --seeds 2 --out " + sim).code, 0);
  auto m = racesim("merge " + sim + " " + out + " --out " + merged);
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_THAT(m.out, HasSubstr("2 experiments side by side (16 runs from 2 result sets"));
  EXPECT_THAT(m.out, testing::ContainsRegex("\\| whole \\| 0 of 2 \\| 0.0% \\(0.0%-65.8%\\) \\| 0 of 2 \\| 0.0% "
                                            "\\(0.0%-65.8%\\) \\| \\+0.0 pts \\(-65.8 to \\+65.8\\) \\|"));
  EXPECT_THAT(m.out, testing::ContainsRegex("\\| appended \\| 2 of 2 \\| 100.0% \\(34.2%-100.0%\\) \\| 2 of 2 \\|"))
      << "the model judges an appended model file as live runs do";
  const std::string both = read_file(merged + "/results.jsonl");
  std::size_t headers = 0, trailers = 0;
  for (std::size_t at = both.find("\"scenario\":\"live_probe\",\"content\""); at != std::string::npos;
       at = both.find("\"scenario\":\"live_probe\",\"content\"", at + 1)) ++headers;
  for (std::size_t at = both.find("{\"end\""); at != std::string::npos; at = both.find("{\"end\"", at + 1)) ++trailers;
  EXPECT_EQ(headers, 2u);
  EXPECT_EQ(trailers, 2u);
  auto r2 = racesim("report " + scenario + " --results " + merged + " --out " + rep);
  ASSERT_EQ(r2.code, 0) << r2.out;
  const std::string page = read_file(rep + "/live_probe.md");
  EXPECT_THAT(page, HasSubstr("## Results side by side"));
  EXPECT_THAT(page, testing::ContainsRegex("\\| torn \\| 2 of 2 \\| 100.0% \\(34.2%-100.0%\\) \\| 2 of 2 \\|"));
  EXPECT_THAT(page, HasSubstr("- **sim**: simulated, policy fifo, 2 seeds from 0"));
  EXPECT_THAT(page, HasSubstr("at time scale 0.01, 2 seeds from 0"));
  EXPECT_TRUE(std::filesystem::exists(rep + "/live_probe/failure_rate.svg"));
  EXPECT_THAT(read_file(rep + "/live_probe.csv"), testing::ContainsRegex("\n,whole,sim,2,0,0,0,0.65762,,,[0-9.]+\n,whole,live [a-z0-9]+,2,0,"));
  auto again = racesim("report " + scenario + " --results " + sim + " --results " + out + " --out " + rep + "2");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(read_file(rep + "2/live_probe.md"), page) << "the directories give what their merge gives";
  auto judged = racesim("check " + scenario + " --results " + merged);
  EXPECT_EQ(judged.code, 2);
  EXPECT_THAT(judged.out, HasSubstr("the results hold 2 experiments side by side; check judges one"));
  // Costs are fitted to live runs only: not to a simulation's, nor to a side-by-side merge.
  auto fit_sim = racesim("live --fit-costs " + sim + " --mount cache");
  EXPECT_EQ(fit_sim.code, 2);
  EXPECT_THAT(fit_sim.out, HasSubstr("found a simulation's (policy fifo): costs are fitted to what live runs paid"));
  auto fit_both = racesim("live --fit-costs " + merged + " --mount cache");
  EXPECT_EQ(fit_both.code, 2);
  EXPECT_THAT(fit_both.out, HasSubstr("found 2 experiments side by side"));
}

// SIGINT of the supervisor: the run in progress is stopped and dropped, its processes, board and
// files are gone, the runs that ended are kept; --resume runs the rest and finishes the file.
TEST(CliTest, LiveKeepsRunsAsTheyEndAndResumesAfterAnInterrupt) {
  const std::string scenario = write_temp("live_probe.yaml", kLiveScenario);
  const std::string dir = test_dir() + "live_int";
  const std::string out = test_dir() + "live_int_out";
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(dir);
  const std::string live = std::string(RACESIM_CLI) + " live " + scenario + " -s whole --runs 8 --time-scale 0.01 --dir " + dir;
  auto r = shell("{ " + live + " --out " + out + " > /dev/null 2> " + out + ".err & pid=$!; "
                 "until [ $(cat " + out + "/results.jsonl 2> /dev/null | wc -l) -ge 2 ] || ! kill -0 $pid 2> /dev/null; "
                 "do sleep 0.005; done; kill -INT $pid; wait $pid; echo \"int=$?\"; "
                 "pgrep -f \"[l]ive --worker racesim-live-$pid-\" | sed 's/^/left: /'; }");
  EXPECT_THAT(r.out, HasSubstr("int=130")) << "the run finished before SIGINT reached it?\n" << r.out;
  EXPECT_THAT(read_file(out + ".err"),
              testing::ContainsRegex("racesim: live: interrupted; " + out +
                                     "/results.jsonl keeps [1-7] of 8 runs; to run the rest, repeat the command "
                                     "with --resume " + out));
  EXPECT_THAT(live_leftovers(dir), testing::IsEmpty());
  EXPECT_THAT(r.out, testing::Not(HasSubstr("left: "))) << "no worker outlives the supervisor";
  auto partial = racesim("merge " + out + " --out " + out + "_merged");
  EXPECT_EQ(partial.code, 2);
  EXPECT_THAT(partial.out, HasSubstr("cut short"));
  auto rest = shell(live + " --resume " + out);
  ASSERT_EQ(rest.code, 0) << rest.out;
  EXPECT_THAT(rest.out, testing::ContainsRegex("resuming " + out + "/results.jsonl: [1-7] of 8 runs kept"));
  EXPECT_THAT(rest.out, testing::ContainsRegex("whole +8 +0 +0.0%"));
  const std::string results = read_file(out + "/results.jsonl");
  EXPECT_THAT(results, testing::ContainsRegex("\n\\{\"end\":\\{\"runs\":8,\"digest\":\"[0-9a-f]{16}\"\\}\\}\n$"));
  auto whole = racesim("merge " + out + " --out " + out + "_merged");
  EXPECT_EQ(whole.code, 0) << whole.out;
  EXPECT_EQ(shell(live + " --out " + out + "2 --resume " + out).code, 2);
}

// SIGTERM at any moment of a live run (while the workers start, compile or run) ends the
// supervisor within seconds, leaving no worker, board or directory. While the workers started,
// it used to wait up to 60 s for them (once seen ignored for 40 s).
TEST(CliTest, SigtermOfALiveSupervisorAlwaysCleansUpAtOnce) {
  const std::string scenario = write_temp("live_term.yaml", kLiveScenario);
  for (const char* after : {"0.02", "0.1", "0.4"}) {
    const std::string dir = test_dir() + "live_term_" + after;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string live = std::string(RACESIM_CLI) + " live " + scenario + " -s whole --runs 4 --time-scale 0.01 --dir " + dir;
    auto r = shell("{ " + live + " > /dev/null 2>&1 & pid=$!; sleep " + after + "; start=$(date +%s%N); kill -TERM $pid; "
                   "wait $pid; echo \"term=$? ms=$(( ($(date +%s%N) - start) / 1000000 ))\"; "
                   "pgrep -f \"[l]ive --worker racesim-live-$pid-\" | sed 's/^/left: /'; }");
    EXPECT_THAT(r.out, testing::ContainsRegex("term=(143|0) ms=[0-9]+")) << after << "\n" << r.out;
    const auto ms = r.out.find("ms=");
    ASSERT_NE(ms, std::string::npos) << r.out;
    EXPECT_LT(std::stol(r.out.substr(ms + 3)), 5000) << after << ": the supervisor took this long to stop";
    EXPECT_THAT(live_leftovers(dir), testing::IsEmpty()) << after;
    EXPECT_THAT(r.out, testing::Not(HasSubstr("left: "))) << "no worker outlives the supervisor";
  }
}

// A sweep axis changed from the command line: --set pins it (the axis goes, the value holds, and
// a note says so), --sweep AXIS=V1,V2 replaces its values or adds an axis; expectations at values
// the axis no longer has are noted as not judged, never silently dropped; results record --sweep
// as an override, so a resume and check --results see the same sweep.
TEST(CliTest, TheCommandLineChangesASweepAxisAndSaysWhatItDid) {
  const std::string scenario = write_temp("swept.yaml", R"(name: swept
ranks: 2
seeds: 4
params:
  n: 1
  m: 1
program:
  - repeat: {times: "${n * m}", do: [{count: iters}]}
strategies:
  only:
    summary: counts
sweep:
  params.n: [1, 2]
expect:
  only:
    - {at: {params.n: 1}, never_fails: true, metric: {name: iters, stat: max, max: 2}}
    - {at: {params.n: 2}, never_fails: true, metric: {name: iters, stat: max, min: 3}}
)");
  auto pinned = racesim("check " + scenario + " --set params.n=2");
  EXPECT_EQ(pinned.code, 0) << pinned.out;
  EXPECT_THAT(pinned.out, HasSubstr("racesim: note: --set params.n pins sweep axis params.n to 2 (the file's "));
  EXPECT_THAT(pinned.out, HasSubstr("sweeps 1, 2)"));
  EXPECT_THAT(pinned.out, testing::ContainsRegex("note: expect.only at params.n=1 \\([^)]*swept.yaml:16:7\\) is not judged"));
  EXPECT_THAT(pinned.out, HasSubstr("PASS " + scenario + " only max(iters) in [3, inf]: max(iters) = 4"));
  EXPECT_THAT(pinned.out, HasSubstr("2 passed, 0 failed"));

  auto replaced = racesim("run " + scenario + " --sweep params.n=1,3");
  ASSERT_EQ(replaced.code, 0) << replaced.out;
  EXPECT_THAT(replaced.out, testing::ContainsRegex("\nparams.n=1 +only"));
  EXPECT_THAT(replaced.out, testing::ContainsRegex("\nparams.n=3 +only"));
  EXPECT_THAT(replaced.out, Not(testing::ContainsRegex("\nparams.n=2 +only")));
  EXPECT_THAT(replaced.out, testing::ContainsRegex("note: expect.only at params.n=2 .* is not judged"));

  const std::string out = test_dir() + "swept_out";
  std::filesystem::remove_all(out);
  auto added = racesim("run " + scenario + " --sweep params.m=1,2 --out " + out);
  ASSERT_EQ(added.code, 0) << added.out;
  EXPECT_THAT(added.out, HasSubstr("params.n=2 params.m=2"));
  EXPECT_THAT(read_file(out + "/results.jsonl"), HasSubstr("sweep.params.m=[1,2]"));
  auto judged = racesim("check " + scenario + " --results " + out);
  EXPECT_EQ(judged.code, 1) << judged.out << " (n=1 m=2 makes 4 iterations, over the max of 2)";
  EXPECT_THAT(judged.out, HasSubstr("FAIL " + scenario + " only @ params.n=1 params.m=2 max(iters)"));

  auto bad = racesim("run " + scenario + " --sweep params.n=1,soon");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.out, HasSubstr("--sweep params.n: error: value: expected a quantity"));
  EXPECT_EQ(racesim("run " + scenario + " --sweep params.n").code, 2);
  EXPECT_THAT(racesim("run " + scenario + " --sweep seeds=1,2").out, HasSubstr("'seeds' cannot be an axis"));
  EXPECT_THAT(racesim("run " + scenario + " --sweep params.n=1,2,3,4,5,6,7,8,9,10 --sweep params.m=" +
                      [] { std::string v; for (int i = 1; i <= 1001; ++i) v += (i > 1 ? "," : "") + std::to_string(i); return v; }())
                  .out,
              HasSubstr("more than 10000 points"));
}

// A live campaign splits across a cluster as a simulated one does: each shard (I/N, or the
// scheduler's own with --shard auto) runs its seeds, and merge joins the shards into the whole
// run's seeds, refusing while one is missing.
TEST(CliTest, LiveShardsSplitTheSeedsAndMergeIntoTheWholeRun) {
  const std::string scenario = write_temp("live_probe.yaml", kLiveScenario);
  const std::string dir = test_dir() + "live_shard";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string live = std::string(RACESIM_CLI) + " live " + scenario + " -s whole --runs 5 --time-scale 0.01 --dir " + dir;
  const std::string a = test_dir() + "live_shard_a", b = test_dir() + "live_shard_b", m = test_dir() + "live_shard_m";
  for (const auto& d : {a, b, m}) std::filesystem::remove_all(d);
  auto first = shell(live + " --shard 0/2 --out " + a);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_THAT(first.out, HasSubstr("5 runs from 0, shard 0/2"));
  EXPECT_THAT(first.out, testing::ContainsRegex("whole +3 +0 +0.0%"));
  // The second shard as a Slurm array task with ids 7-8 would be given it.
  auto second = shell("env SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_MIN=7 SLURM_ARRAY_TASK_MAX=8 SLURM_ARRAY_TASK_COUNT=2 " +
                      live + " --shard auto --out " + b);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_THAT(second.out, HasSubstr("--shard auto: shard 1/2 (SLURM_ARRAY_TASK_ID=8 of the array 7-8)"));
  EXPECT_THAT(second.out, testing::ContainsRegex("whole +2 +0 +0.0%"));
  auto missing = racesim("merge " + a + " --out " + m);
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.out, HasSubstr("shard 1/2"));
  auto merged = racesim("merge " + a + " " + b + " --out " + m);
  ASSERT_EQ(merged.code, 0) << merged.out;
  std::set<int> seeds;
  std::istringstream lines(read_file(m + "/results.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("strategy")) seeds.insert(j.at("seed").get<int>());
  }
  EXPECT_EQ(seeds, (std::set<int>{0, 1, 2, 3, 4}));
  auto outside = shell("env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX " + live + " --shard auto");
  EXPECT_EQ(outside.code, 2);
  EXPECT_THAT(outside.out, HasSubstr("SLURM_ARRAY_TASK_ID"));
  EXPECT_THAT(live_leftovers(dir), testing::IsEmpty());
}

// The opening of the live tests' scenarios below: three ranks, a local cache mount, each
// strategy's `body`.
const char* const kThreeRanksOnACache = R"(ranks: 3
seeds: 4
platform:
  storage:
    cache: {kind: local, mount: /cache}
program:
  - slot: body
)";

// `scenario` simulated on seeds 0..runs-1 and run live on the same seeds (F = 0.01) in a fresh
// directory of the test's own (test_dir()/NAME; live results in NAME_out, simulated ones in
// NAME_sim).
struct SimAndLive {
  Result sim, live;
  std::string dir, out, sim_out;
};
SimAndLive sim_and_live(const std::string& scenario, const std::string& name, int runs) {
  SimAndLive r;
  r.dir = test_dir() + name;
  r.out = test_dir() + name + "_out";
  r.sim_out = test_dir() + name + "_sim";
  for (const auto& d : {r.dir, r.out, r.sim_out}) std::filesystem::remove_all(d);
  std::filesystem::create_directories(r.dir);
  const std::string n = std::to_string(runs);
  r.sim = racesim("run " + scenario + " --seeds " + n + " --out " + r.sim_out);
  r.live = racesim("live " + scenario + " --runs " + n + " --time-scale 0.01 --dir " + r.dir + " --out " + r.out);
  return r;
}

// Both sides ran to the end (exit 0); otherwise what each printed.
testing::AssertionResult both_ran(const SimAndLive& r) {
  if (r.sim.code == 0 && r.live.code == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "run exited " << r.sim.code << ":\n" << r.sim.out << "\nlive exited "
                                     << r.live.code << ":\n" << r.live.out;
}

// The same verdict on both sides: `strategy`'s row says `failed` of `runs` failed, in the
// simulation's table and in the live one (its rate; `live_after`: what follows on the live row,
// its outcomes and failed checks).
void expect_verdict(const SimAndLive& r, const std::string& strategy, int runs, int failed,
                    const std::string& live_after = "") {
  const std::string row = strategy + " +" + std::to_string(runs) + " +" + std::to_string(failed) + " ";
  EXPECT_THAT(r.sim.out, testing::ContainsRegex(row));
  const std::string rate = failed == 0 ? "0.0%" : failed == runs ? "100.0%" : "[0-9.]+%";
  EXPECT_THAT(r.live.out, testing::ContainsRegex(row + "+" + rate + (live_after.empty() ? "" : ".*" + live_after)));
}

// A semaphore on the board admits one rank at a time (an O_EXCL file inside would collide
// otherwise, as it does without it): live and simulated runs give the same verdicts.
TEST(CliTest, LiveSemaphoresGiveTheModelsVerdicts) {
  const std::string scenario = write_temp("live_sem.yaml", "name: live_sem\n" + std::string(kThreeRanksOnACache) + R"(strategies:
  one_at_a_time:
    body:
      - semaphore:
          name: s
          permits: 1
          do:
            - create: {path: /cache/inside, size: 0B, mode: exclusive}
            - close: /cache/inside
            - sleep: 1s
            - unlink: /cache/inside
  all_at_once:
    body:
      - create: {path: /cache/inside, size: 0B, mode: exclusive}
      - close: /cache/inside
      - sleep: 1s
      - unlink: /cache/inside
)");
  const SimAndLive r = sim_and_live(scenario, "live_sem", 2);
  ASSERT_TRUE(both_ran(r));
  expect_verdict(r, "one_at_a_time", 2, 0);
  expect_verdict(r, "all_at_once", 2, 2, "fail:2 +no_io_errors:2");
  const std::string results = read_file(r.out + "/results.jsonl");
  EXPECT_THAT(results, HasSubstr("\"semaphore.s.entries\":3.0"));
  EXPECT_THAT(live_leftovers(r.dir), testing::IsEmpty());
}

// Locals and a listing live as in the model: each rank creates its file, then counts what a
// listing taken after a barrier shows (its own copies, made in the loop, match no f? name).
TEST(CliTest, LiveLocalsAndListingsGiveTheModelsVerdicts) {
  const std::string scenario = write_temp("live_locals.yaml", "name: live_locals\n" + std::string(kThreeRanksOnACache) + R"(strategies:
  count_three:
    body:
      - write_text: {path: "/cache/f${rank}", text: x}
      - barrier: written
      - let: {n: 0}
      - for_each: {var: f, listing: "/cache/f?", index: i, do: [{set: {n: "${n + 1}"}}, {copy: {from: "${f}", to: "${f}.r${rank}"}}]}
      - if: {expr: "${n == 3}", then: [], else: [{fail: "saw ${n} files"}]}
  count_two:
    body:
      - write_text: {path: "/cache/f${rank}", text: x}
      - barrier: written
      - let: {n: 0}
      - for_each: {var: f, listing: "/cache/f?", do: [{set: {n: "${n + 1}"}}]}
      - if: {expr: "${n == 2}", then: [], else: [{fail: "saw ${n} files"}]}
)");
  const SimAndLive r = sim_and_live(scenario, "live_locals", 2);
  ASSERT_TRUE(both_ran(r));
  expect_verdict(r, "count_three", 2, 0);
  expect_verdict(r, "count_two", 2, 2, "fail:2");
  EXPECT_THAT(r.live.out, HasSubstr("saw 3 files"));
  EXPECT_THAT(live_leftovers(r.dir), testing::IsEmpty());
}

// A collective barrier meets on the board (a subgroup's and the world's), and a crash fault kills
// a rank's process in its worker and restarts it from its first step, as in the model: the
// restarted rank finds what its first incarnation wrote.
TEST(CliTest, LiveCollectiveBarriersAndCrashRestartsGiveTheModelsVerdicts) {
  const std::string scenario = write_temp("live_crash.yaml", "name: live_crash\n" + std::string(kThreeRanksOnACache) + R"(faults:
  - {kind: crash, name: c, on: rank0, probability: 1, restarts: 1, restart_after: 1s, at: 2s}
strategies:
  resume:
    body:
      - if: {rank: rank0, then: [{if: {exists: /cache/started, then: [{mark: {name: resumed, metric: true}}],
                                       else: [{write_text: {path: /cache/started, text: x}}, {sleep: 10s}]}}]}
      - {collective: {op: barrier, comm: {name: pair, ranks: "1-2"}}, on: "1-2"}
      - collective: {op: barrier}
  refuse_restart:
    body:
      - if: {rank: rank0, then: [{if: {exists: /cache/started, then: [{fail: "restarted"}],
                                       else: [{write_text: {path: /cache/started, text: x}}, {sleep: 10s}]}}]}
      - collective: {op: barrier}
)");
  const SimAndLive r = sim_and_live(scenario, "live_crash", 2);
  ASSERT_TRUE(both_ran(r));
  expect_verdict(r, "resume", 2, 0);
  expect_verdict(r, "refuse_restart", 2, 2, "fail:2");
  EXPECT_THAT(r.live.out, HasSubstr("restarted"));
  std::size_t resumed = 0;
  std::istringstream lines(read_file(r.out + "/results.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("strategy") || j.at("strategy") != "resume") continue;
    ++resumed;
    const auto& m = j.at("metrics");
    EXPECT_EQ(m.at("crashed_ranks"), 1.0);
    EXPECT_EQ(m.at("restarts"), 1.0);
    EXPECT_EQ(m.at("collective.count"), 2.0) << "the pair's barrier and the world's, each counted once";
    EXPECT_EQ(m.count("collective.wait_s"), 0u) << "not measured live";
    EXPECT_GE(m.at("resumed_s").get<double>(), 3.0) << "killed at 2 s, restarted 1 s later";
    EXPECT_LT(j.at("makespan_ns").get<double>(), 9e9) << "the restart did not sleep the first incarnation's 10 s";
  }
  EXPECT_EQ(resumed, 2u);
  EXPECT_THAT(live_leftovers(r.dir), testing::IsEmpty());
}

// A live flock(2) blocks as the system's does: a released lock goes to the waiter that blocked
// first (rank 1's LOCK_EX, asked at 5 s, before rank 2's LOCK_SH at 10 s), as in the model, in
// every run; a wait past its timeout gives up at it on both sides, and a run that ends (another
// rank failed) ends a wait that has none.
TEST(CliTest, LiveFlocksAreGrantedInTheOrderTheyBlocked) {
  const std::string scenario = write_temp("live_flock.yaml", "name: live_flock\n" + std::string(kThreeRanksOnACache) + R"(strategies:
  in_order:
    body:
      - if:
          rank: rank0
          then: &hold_for_20s
            - write_file: {path: /cache/f, size: 1MiB}
            - lock: {path: /cache/f, mode: exclusive}
            - sleep: 20s
            - unlock: /cache/f
          else:
            - if:
                rank: 1
                then:
                  - sleep: 5s
                  - lock: {path: /cache/f, mode: exclusive}
                  - write_file: {path: /cache/first, size: 1MiB}
                  - unlock: /cache/f
                else:
                  - sleep: 10s
                  - lock: {path: /cache/f, mode: shared}
                  - load_model: /cache/first
                  - unlock: /cache/f
  timed_out:
    body:
      - if:
          rank: rank0
          then: *hold_for_20s
          else:
            - sleep: 5s
            - try:
                do: [{lock: {path: /cache/f, mode: shared, timeout: 5s}}]
                catch: [{count: timeouts}]
  stopped_by_a_failure:
    body:
      - if:
          rank: rank0
          then: *hold_for_20s
          else:
            - if:
                rank: 1
                then:
                  - sleep: 5s
                  - lock: {path: /cache/f, mode: exclusive}
                else:
                  - sleep: 10s
                  - load_model: /cache/missing
)");
  const SimAndLive r = sim_and_live(scenario, "live_flock", 4);
  ASSERT_TRUE(both_ran(r));
  // Polling LOCK_NB, rank 2 took the lock first in about half the runs and found no /cache/first.
  expect_verdict(r, "in_order", 4, 0);
  expect_verdict(r, "timed_out", 4, 0);
  // Rank 2's failure at 10 s ends the run while rank 1 waits in flock(2), before rank 0 unlocks.
  expect_verdict(r, "stopped_by_a_failure", 4, 4, "fail:4 +no_io_errors:4");
  std::istringstream lines(read_file(r.out + "/results.jsonl"));
  int timed_out = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("strategy")) continue;
    if (j.at("strategy") == "timed_out") {
      ++timed_out;
      EXPECT_EQ(j.at("metrics").at("timeouts"), 2.0) << "ranks 1 and 2 gave up at 10 s";
      EXPECT_GE(j.at("makespan_ns").get<double>(), 20e9);
    } else if (j.at("strategy") == "stopped_by_a_failure") {
      EXPECT_LT(j.at("makespan_ns").get<double>(), 20e9) << "ended at the failure, not once rank 0 unlocked";
    }
  }
  EXPECT_EQ(timed_out, 4);
  EXPECT_THAT(live_leftovers(r.dir), testing::IsEmpty());
}

// What a mount holds at the end is judged live by the model's rule: a file whose writer's late
// bytes land after a second writer's truncation and rewrite is a mixture, torn at the end in
// both worlds, though its header and its length agree; one writer's file is whole in both.
TEST(CliTest, LiveCountsAMixtureLeftAtTheEndAsTheModelDoes) {
  const std::string scenario = write_temp("live_mixture.yaml", "name: live_mixture\n" + std::string(kThreeRanksOnACache) + R"(faults:
  - {kind: writer_stall, name: stall, on: [0], probability: 1, at: 0.5, duration: 40s}
strategies:
  two_writers:
    body:
      - if:
          rank: rank0
          then: [{write_file: {path: /cache/model.om, size: 8MiB}}]
          else:
            - sleep: 5s
            - write_file: {path: /cache/model.om, size: 8MiB}
  one_writer:
    body:
      - if: {rank: rank0, then: [{write_file: {path: /cache/model.om, size: 8MiB}}]}
)");
  const SimAndLive r = sim_and_live(scenario, "live_mixture", 1);
  ASSERT_TRUE(both_ran(r));
  for (const auto& out : {r.sim_out, r.out}) {
    std::map<std::string, double> torn;
    std::istringstream lines(read_file(out + "/results.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.contains("strategy")) torn[j.at("strategy")] = j.at("metrics").at("fs.cache.torn_at_end");
    }
    // Rank 0's second half lands at 40 s (0.4 s real), long after the others rewrote the file.
    EXPECT_EQ(torn["two_writers"], 1.0) << out;
    EXPECT_EQ(torn["one_writer"], 0.0) << out;
  }
  EXPECT_THAT(live_leftovers(r.dir), testing::IsEmpty());
}

// The model's storage fault points bite live at the same operations: a writer stall leaves a
// half-written file in place for its duration; eio fails the operations of the rank it is aimed
// at; the plan is drawn as the simulation draws it (faults.NAME and .hits per run).
TEST(CliTest, LiveInjectsStorageFaultsAsTheModelDoes) {
  const std::string scenario = write_temp("live_stall.yaml", "name: live_stall\n" + std::string(kThreeRanksOnACache) + R"(faults:
  - {kind: writer_stall, name: stall, on: [0], probability: 1, at: 0.5, duration: 40s}
  - {kind: eio, name: broken, on: [2], probability: 0, rate: 1}
strategies:
  in_place:
    body:
      - if:
          rank: rank0
          then:
            - write_file: {path: /cache/model.om, size: 8MiB}
          else:
            - sleep: 5s
            - load_model: /cache/model.om
  renamed:
    body:
      - if:
          rank: rank0
          then:
            - write_file: {path: /cache/model.om.tmp, size: 8MiB}
            - rename: {from: /cache/model.om.tmp, to: /cache/model.om}
            - mark: done
          else:
            - wait: {marked: done, timeout: 600s}
            - load_model: /cache/model.om
sweep:
  faults.broken.probability: [0, 1]
)");
  const SimAndLive r = sim_and_live(scenario, "live_stall", 1);
  ASSERT_TRUE(both_ran(r));
  // The readers read at 5 s, inside the 40 s stall (0.4 s real) that follows the first half: a
  // margin no scheduling delay of a loaded machine crosses.
  expect_verdict(r, "probability=0 +in_place", 1, 1, "fail:1 +model_loads_intact:1");
  expect_verdict(r, "probability=0 +renamed", 1, 0);
  expect_verdict(r, "probability=1 +in_place", 1, 1);
  expect_verdict(r, "probability=1 +renamed", 1, 1, "fail:1 +no_io_errors:1");
  const std::string results = read_file(r.out + "/results.jsonl");
  EXPECT_THAT(results, HasSubstr("EIO (injected fault)"));
  std::size_t records = 0, stalled = 0;
  std::istringstream lines(results);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("strategy")) continue;
    ++records;
    stalled += j.at("metrics").at("faults.stall") == 1.0 && j.at("metrics").at("faults.stall.hits") == 1.0;
    if (j.at("strategy") == "renamed" && j.at("outcome") == "pass") {
      EXPECT_GE(j.at("makespan_ns").get<double>(), 40e9) << "the stall is a real pause, scaled";
    }
  }
  EXPECT_EQ(records, 4u);
  EXPECT_EQ(stalled, 4u) << "rank 0's one write stalled once in every run";
  EXPECT_THAT(live_leftovers(r.dir), testing::IsEmpty());
}

TEST(CliTest, LiveRefusesWhatHasNoLiveMeaningBeforeStarting) {
  const std::string dir = test_dir() + "live_refuse";
  std::filesystem::create_directories(dir);
  const std::string scenario = write_temp("live_coll.yaml", R"(name: live_coll
ranks: 2
program:
  - collective: {op: all_reduce, comm: world, bytes: 1MiB}
strategies: {s: }
)");
  auto r = racesim("live " + scenario + " --runs 1 --dir " + dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, HasSubstr(scenario + ":4:5: error: collective all_reduce has no live meaning yet (a live run has "
                                           "no devices to move data: it runs a collective barrier"));
  const std::string timed = write_temp("live_coll_timeout.yaml", R"(name: live_coll_timeout
ranks: 2
platform:
  collective: {exec_timeout: 10s}
program:
  - collective: {op: barrier}
strategies: {s: }
)");
  auto untimed = racesim("live " + timed + " --runs 1 --dir " + dir);
  EXPECT_EQ(untimed.code, 2);
  EXPECT_THAT(untimed.out, HasSubstr(timed + ":6:5: error: a live collective barrier has no exec timeout"));
  const std::string slow = write_temp("live_slow.yaml", R"(name: live_slow
ranks: 2
platform:
  storage:
    cache: {kind: local, mount: /cache}
program:
  - write_file: {path: /cache/f, size: 1MiB}
faults:
  - {kind: slow_storage, name: slow, probability: 0.5, factor: 4}
strategies: {s: }
)");
  auto refused = racesim("live " + slow + " --runs 1 --dir " + dir);
  EXPECT_EQ(refused.code, 2);
  EXPECT_THAT(refused.out, HasSubstr(slow + ":9:5: error: fault 'slow' (slow_storage) can be active, and it has no "
                                            "live meaning"));
  const std::string elastic = write_temp("live_elastic.yaml", R"(name: live_elastic
ranks: 2
platform:
  elastic: {max_restarts: 1}
program:
  - sleep: 1s
strategies: {s: }
)");
  auto group = racesim("live " + elastic + " --runs 1 --dir " + dir);
  EXPECT_EQ(group.code, 2);
  EXPECT_THAT(group.out, HasSubstr("platform.elastic: a live run does not restart the group"));
  EXPECT_EQ(racesim("live " + scenario + " --runs 1").code, 2) << "--dir is required";
  EXPECT_THAT(racesim("live " + scenario + " --dir " + dir + "/missing").out, HasSubstr("not a directory"));
}

// A worker killed with SIGKILL: the run is an error naming it, never a pass, and nothing is left
// in /dev/shm or the directory. Boards and directories of a supervisor that died are removed.
TEST(CliTest, LiveCleansUpAfterAKilledWorkerAndAfterADeadSupervisor) {
  const std::string dir = test_dir() + "live_kill";
  const std::string out = test_dir() + "live_kill_out";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // Left by a supervisor that no longer runs.
  const std::string planted = "racesim-live-" + std::to_string(kPlantedDeadSupervisorPid);
  std::ofstream("/dev/shm/" + planted + "-0") << "stale";
  std::filesystem::create_directories(dir + "/" + planted + "/run-0/cache");
  const std::string scenario = write_temp("live_slow.yaml", R"(name: live_slow
ranks: 2
platform:
  storage:
    cache: {kind: local, mount: /cache}
program:
  - write_file: {path: "/cache/f${rank}", size: 1MiB}
  - sleep: 20s
strategies: {s: }
)");
  auto r = shell("(" + std::string(RACESIM_CLI) + " live " + scenario + " --runs 1 --dir " + dir + " --out " + out +
                 " & sup=$!; sleep 1.5; pkill -KILL -f -- \"--worker racesim-live-$sup-0 --rank 1\"; wait $sup)");
  EXPECT_EQ(r.code, 0) << r.out;
  // (Any live run removes it, so another test's may have got there first.)
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + planted + "-0"));
  EXPECT_THAT(r.out, HasSubstr("removed " + dir + "/" + planted));
  const std::string results = read_file(out + "/results.jsonl");
  EXPECT_THAT(results, HasSubstr("\"outcome\":\"error\""));
  EXPECT_THAT(results, HasSubstr("rank 1's worker killed by signal 9"));
  EXPECT_THAT(live_leftovers(dir), testing::IsEmpty());
}
