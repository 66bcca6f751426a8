// The search commands run as real processes: explore and replay --choices (a failure found, its
// choice file replayed exactly, and every bad input, a mode, a budget, a choice file of something
// else or damaged, refused with a located error and exit 2), and check --determinism.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/src/cli/cli_process.h"

namespace {

using ::testing::HasSubstr;
using cli_process::kExamples;
using cli_process::racesim;
using cli_process::Result;
using cli_process::test_dir;
using cli_process::write_temp;

const std::string kTeaching = kExamples + "stale_checkpoint_view.yaml";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The trace hash a replay prints.
std::string hash_of(const std::string& out) {
  std::smatch m;
  return std::regex_search(out, m, std::regex("trace hash ([0-9a-f]{16})")) ? m[1].str() : "";
}

TEST(ExploreCliTest, PctFindsTheTeachingBugAndItsChoiceFileReplaysExactly) {
  const std::string out = test_dir() + "found.jsonl";
  const Result r = racesim("explore " + kTeaching + " -s look_then_open --mode pct:2 --budget 1000 -j 2 --out " + out);
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("FAILED at run "));
  EXPECT_THAT(r.out, HasSubstr("opened checkpoint 1 after the trainer had rotated it away"));
  EXPECT_THAT(r.out, HasSubstr("reproduce:   racesim replay " + kTeaching + " --choices " + out));
  EXPECT_THAT(r.out, HasSubstr("(up to the first failure)"));
  const std::string file = read(out);
  EXPECT_THAT(file, HasSubstr("\"made_by\":\"pct:2:"));
  EXPECT_THAT(file, HasSubstr("{\"kind\":\"schedule\",\"of\":2,"));
  const Result again = racesim("replay " + kTeaching + " --choices " + out + " --record " + test_dir() + "again.jsonl");
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_THAT(again.out, HasSubstr(": fail at "));
  EXPECT_THAT(file, HasSubstr("\"trace_hash\":\"" + hash_of(again.out) + "\""));
  // A replay records the same tape it followed.
  const std::string a = read(out), b = read(test_dir() + "again.jsonl");
  EXPECT_EQ(a.substr(a.find('\n')), b.substr(b.find('\n')));
}

TEST(ExploreCliTest, TheSameBudgetFindsTheSameOnAnyJobs) {
  const Result one = racesim("explore " + kTeaching + " -s look_then_open --mode pct:3 --budget 600 -j 1 --out " +
                             test_dir() + "a.jsonl");
  const Result two = racesim("explore " + kTeaching + " -s look_then_open --mode pct:3 --budget 600 -j 2 --out " +
                             test_dir() + "a.jsonl");
  EXPECT_EQ(one.code, two.code);
  // The first line names the threads; everything after it is the search's.
  EXPECT_EQ(one.out.substr(one.out.find('\n')), two.out.substr(two.out.find('\n')));
}

// A search split over a cluster's tasks (--shard I/N) makes exactly the whole search's runs: the
// shards' runs and choice points add up to the whole's, and the whole's first failure is the
// earliest of the shards' (each replays by its choice file). An exhaustive search is not split.
TEST(ExploreCliTest, ShardsOfASearchMakeTheWholeSearchsRuns) {
  const std::string om = std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml";
  const std::string base = "explore " + om + " -s flock_as_in_pr --mode swarm --budget 301 --all -j 2 --out ";
  auto numbers = [](const std::string& out, const std::string& pattern) {
    std::vector<long> v;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
      v.push_back(std::stol((*it)[1].str()));
    }
    return v;
  };
  const Result whole = racesim(base + test_dir() + "w.jsonl");
  ASSERT_EQ(whole.code, 1) << whole.out;
  long runs = 0, schedule = 0, draws = 0, first = 1L << 40;
  for (int i = 0; i < 3; ++i) {
    const std::string out = test_dir() + "s" + std::to_string(i) + ".jsonl";
    const Result r = racesim(base + out + " --shard " + std::to_string(i) + "/3");
    ASSERT_LE(r.code, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr("shard " + std::to_string(i) + "/3 (its runs i with i % 3 == " + std::to_string(i) + ")"));
    runs += numbers(r.out, "covered ([0-9]+) runs|no failure in ([0-9]+) runs").at(0);
    schedule += numbers(r.out, "choice points: schedule ([0-9]+)").at(0);
    draws += numbers(r.out, "choice points: schedule [0-9]+, wake [0-9]+, model [0-9]+, fault [0-9]+, draw ([0-9]+)").at(0);
    for (long f : numbers(r.out, "FAILED at run ([0-9]+)")) {
      EXPECT_EQ((f - 1) % 3, i) << "a shard's runs are its own";
      first = std::min(first, f);
    }
    if (r.code == 1) {
      const Result replay = racesim("replay " + om + " --choices " + out);
      EXPECT_EQ(replay.code, 1) << replay.out;
    }
  }
  EXPECT_EQ(runs, 301);
  EXPECT_EQ(schedule, numbers(whole.out, "choice points: schedule ([0-9]+)").at(0));
  EXPECT_EQ(draws, numbers(whole.out, "choice points: schedule [0-9]+, wake [0-9]+, model [0-9]+, fault [0-9]+, draw ([0-9]+)").at(0));
  EXPECT_EQ(first, numbers(whole.out, "FAILED at run ([0-9]+)").at(0));
  const Result exhaustive = racesim("explore " + om + " -s flock_as_in_pr --mode exhaustive --shard 0/2");
  EXPECT_EQ(exhaustive.code, 2);
  EXPECT_THAT(exhaustive.out, HasSubstr("an exhaustive search walks one tree in order"));
}

TEST(ExploreCliTest, NoFailureSaysWhatWasCovered) {
  const Result r = racesim("explore " + kTeaching + " -s wait_for_it --mode swarm --budget 300 -j 2 --out " +
                           test_dir() + "none.jsonl");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("no failure in 300 runs: "));
  EXPECT_THAT(r.out, HasSubstr("distinct schedules (by trace hash); choice points: schedule "));
}

// Runs of about 6 ms in the Release tree (200,000 events each).
std::string long_runs() {
  return write_temp("long_runs.yaml", R"(name: long_runs
ranks: 2
program: [{repeat: {times: 100000, do: [{sleep: 1ms}]}}]
strategies: {a: {}}
)");
}

TEST(ExploreCliTest, ATimeBudgetStopsTheSearchAndSaysSo) {
  const Result r = racesim("explore " + long_runs() + " -s a --mode random --budget 0.3s -j 2 --out " + test_dir() + "x.jsonl");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("stopped by the time budget 0.3s"));
  EXPECT_THAT(r.out, HasSubstr("no failure in "));
}

TEST(ExploreCliTest, AnInterruptStopsTheSearchAndSaysHowFarItGot) {
  const std::string cmd = std::string(RACESIM_CLI) + " explore " + long_runs() + " -s a --mode pct --budget 100000 -j 2 --out " +
                          test_dir() + "x.jsonl";
  const Result r = cli_process::shell("{ " + cmd + " > " + test_dir() + "out.txt & pid=$!; sleep 0.5; kill -INT $pid; wait $pid; "
                                      "echo \"exit=$?\"; cat " + test_dir() + "out.txt; }");
  EXPECT_THAT(r.out, HasSubstr("exit=130")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("interrupted after "));
}

TEST(ExploreCliTest, BadModesAndBudgetsAreUsageErrors) {
  const std::string base = "explore " + kTeaching + " -s look_then_open ";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--mode lifo", "--mode: expected a mode: random, pct, pct:DEPTH, swarm, exhaustive or exhaustive:DELAYS, got 'lifo'"},
           {"--mode pct:0", "pct depth must be a whole number from 1 to 64"},
           {"--mode exhaustive:99", "exhaustive's delay bound must be a whole number from 0 to 64, got '99'"},
           {"--budget 0", "--budget: expected a number of runs from 1"},
           {"--budget '5 parsecs'", "--budget: expected a number of runs (1000) or a duration"},
           {"--budget -3s", "--budget: expected"},
           {"--mode pct:2 --no-reduction", "--no-reduction: only with --mode exhaustive"},
       }) {
    const Result r = racesim(base + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(message)) << args;
  }
  const Result s = racesim("explore " + kTeaching + " -s no_such_strategy");
  EXPECT_EQ(s.code, 2) << s.out;
}

TEST(ExploreCliTest, TheCoverageStatementSaysWhetherTheSearchWasReduced) {
  const std::string base = "explore " + kTeaching + " -s wait_for_it --mode exhaustive:2 -j 2 --out " + test_dir() + "r.jsonl";
  const Result reduced = racesim(base);
  const Result full = racesim(base + " --no-reduction");
  ASSERT_EQ(reduced.code, 0) << reduced.out;
  ASSERT_EQ(full.code, 0) << full.out;
  EXPECT_THAT(reduced.out, HasSubstr("with at most 2 delays, up to the order of steps that commute, run (no failure;"));
  EXPECT_THAT(reduced.out, HasSubstr("partial-order reduction: one order of the steps that commute"));
  EXPECT_THAT(full.out, HasSubstr("no partial-order reduction"));
  // Fewer schedules for the same coverage.
  auto schedules = [](const std::string& out) {
    const auto at = out.find("exhaustive: all ");
    return at == std::string::npos ? 0 : std::stoi(out.substr(at + 16));
  };
  EXPECT_GT(schedules(reduced.out), 0);
  EXPECT_LT(schedules(reduced.out), schedules(full.out));
}

class ReplayChoicesTest : public ::testing::Test {
 protected:
  // A choice file of the teaching scenario's failing run.
  std::string found() {
    const std::string out = test_dir() + "found.jsonl";
    const Result r = racesim("explore " + kTeaching + " -s look_then_open --mode pct:2 --budget 1000 -j 2 --out " + out);
    EXPECT_EQ(r.code, 1) << r.out;
    return read(out);
  }
  Result replay(const std::string& text, const std::string& extra = "") {
    const std::string path = write_temp("edited.jsonl", text);
    return racesim("replay " + kTeaching + " --choices " + path + " " + extra);
  }
};

TEST_F(ReplayChoicesTest, AFileOfAnotherStrategyScenarioOrVersionIsRefused) {
  const std::string f = found();
  auto edited = [&f](const std::string& from, const std::string& to) {
    std::string t = f;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // Asked for another strategy than the file's (without -s, replay takes the file's).
  const Result other = replay(f, "-s wait_for_it");
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_THAT(other.out, HasSubstr("edited.jsonl:1:1: a tape of strategy 'look_then_open', not of 'wait_for_it'"));
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {edited("\"scenario\":\"stale_checkpoint_view\"", "\"scenario\":\"other\""),
            "edited.jsonl:1:1: a tape of scenario 'other'"},
           {edited("\"content\":\"", "\"content\":\"0"), "a tape of another version of"},
           {edited("\"racesim\":\"", "\"racesim\":\"0.0.1-"), "written by racesim 0.0.1-"},
           {edited("\"disarmed\":[]", "\"disarmed\":[\"nothing\"]"), "disarms the fault 'nothing'"},
       }) {
    const Result r = replay(c.text);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message));
  }
}

TEST_F(ReplayChoicesTest, ADamagedFileIsALocatedError) {
  const std::string f = found();
  const std::size_t second = f.find('\n') + 1;
  const std::size_t last = f.rfind('\n', f.size() - 2) + 1;
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "edited.jsonl:1:1: empty"},
           {f.substr(0, last), "(the file was cut short)"},
           {f.substr(0, second) + "{\"kind\":\"schedule\",\"of\":2,\"took\":2}\n" + f.substr(second),
            "edited.jsonl:2:1: expected 2 or more options"},
           {f.substr(0, second) + "{\"kind\":\"lottery\",\"of\":2,\"took\":0}\n" + f.substr(second),
            "edited.jsonl:2:1: \"kind\": expected schedule, wake, model, fault or draw, got \"lottery\""},
           {f.substr(0, second) + "{\"kind\":\"schedule\",\"of\":2,\"took\":0\n" + f.substr(second),
            "edited.jsonl:2:"},
           {f + "{}\n", "expected nothing after the trailer line"},
           {"{\"experiment\":{}}\n", "edited.jsonl:1:1: expected the key \"racesim_choices\""},
       }) {
    const Result r = replay(c.text);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.message;
  }
}

TEST_F(ReplayChoicesTest, AnEditedChoiceMakesTheRunLeaveItsTapeAndSaysWhere) {
  std::string f = found();
  // The first choice flipped: the run goes another way and, sooner or later, leaves the tape.
  const std::string first = "{\"kind\":\"schedule\",\"of\":2,\"took\":";
  const std::size_t at = f.find(first) + first.size();
  f[at] = f[at] == '0' ? '1' : '0';
  const Result r = replay(f);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, ::testing::AnyOf(HasSubstr("the run left its tape: "), HasSubstr("its trace hash is")));
}

TEST_F(ReplayChoicesTest, FlagsThatWouldMakeAnotherRunAreRefused) {
  const std::string f = found();
  const Result r = replay(f, "--seed 3 --set ranks=3");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--seed and --set/--set-file cannot be given with it"));
  const Result none = racesim("replay " + kTeaching + " -s look_then_open");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_THAT(none.out, HasSubstr("replay needs --strategy and --seed, or --choices FILE"));
}

TEST(ShrinkCliTest, A64RankFailureShrinksToAFewRanksAndItsChoiceFileReplays) {
  const std::string om = std::string(RACESIM_SOURCE) + "/scenarios/om_read_while_write.yaml";
  const std::string out = test_dir() + "shrunk.jsonl";
  const Result r = racesim("shrink " + om + " -s exists_check --seed 0 --set ranks=64 --set platform.ranks_per_node=64 "
                           "--point faults.stall.probability=0 --out " + out);
  ASSERT_EQ(r.code, 1) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("1-minimal after [0-9]+ replays: ranks 64 -> ([0-9]+) \\(ranks ")))
      << r.out;
  EXPECT_LE(std::stoi(m[1].str()), 3);
  EXPECT_THAT(r.out, HasSubstr("  fails:       model_loads_intact: rank "));
  EXPECT_THAT(r.out, HasSubstr("reproduce:   racesim replay " + om + " --choices " + out));
  const Result again = racesim("replay " + om + " --choices " + out);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_THAT(read(out), HasSubstr("\"trace_hash\":\"" + hash_of(again.out) + "\""));
  // And a shrunk run shrinks no further.
  const Result twice = racesim("shrink " + om + " --choices " + out + " --out " + test_dir() + "twice.jsonl");
  EXPECT_EQ(twice.code, 1) << twice.out;
  EXPECT_THAT(twice.out, HasSubstr("ranks " + m[1].str() + " -> " + m[1].str()));
}

TEST(ShrinkCliTest, APassingRunAndBadFlagsAreUsageErrors) {
  const Result passes = racesim("shrink " + kTeaching + " -s look_then_open --seed 0");
  EXPECT_EQ(passes.code, 2) << passes.out;
  EXPECT_THAT(passes.out, HasSubstr("the run passes: there is no failure to shrink"));
  const Result time = racesim("shrink " + kTeaching + " -s look_then_open --seed 0 --max-time never");
  EXPECT_EQ(time.code, 2) << time.out;
  EXPECT_THAT(time.out, HasSubstr("--max-time: expected a duration"));
  const Result none = racesim("shrink " + kTeaching);
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_THAT(none.out, HasSubstr("shrink needs --strategy and --seed, or --choices FILE"));
}

TEST_F(ReplayChoicesTest, ShrinkTakesAChoiceFileAndRefusesFlagsThatWouldMakeAnotherRun) {
  const std::string path = write_temp("found.jsonl", found());
  const Result r = racesim("shrink " + kTeaching + " --choices " + path + " --out " + test_dir() + "s.jsonl");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1-minimal after "));
  EXPECT_THAT(r.out, HasSubstr("choices kept off their first option: #1 (schedule among 2, took 1, rank 1 at 0s)"));
  const Result refused = racesim("shrink " + kTeaching + " --choices " + path + " --seed 4");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("--seed cannot be given with it"));
}

TEST(ExploreCliTest, ListNamesTheModesAndChoiceKinds) {
  const Result r = racesim("list");
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("explore modes (explore --mode):\n  random, pct[:DEPTH], swarm, exhaustive[:DELAYS]\n"));
  EXPECT_THAT(r.out, HasSubstr("choice kinds (on a run's tape; choice files):\n  schedule, wake, model, fault, draw\n"));
}

TEST(DeterminismCliTest, SaysEachScenarioIsDeterministicAndRefusesStoredResults) {
  const Result r = racesim("check --determinism --seeds 3 --policy random " + kTeaching + " " + kExamples +
                           "publish_race.yaml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("PASS " + kTeaching + " deterministic: 6 runs (2 programs x 3 seeds, policy random)"));
  EXPECT_THAT(r.out, HasSubstr("2 deterministic, 0 not"));
  const Result refused = racesim("check --determinism " + kTeaching + " --results " + test_dir() + " --report " + test_dir());
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("--results and --report cannot be given with it"));
}

}  // namespace
