// results.jsonl: its format, what a damaged or foreign file gets, the order records are put in,
// and the log a run keeps as runs finish (start, append, a kill, resume, finish).
#include "src/report/results_file.h"
#include "src/report/results_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "sim/kernel/random.h"

namespace racesim::report {
namespace {

using ::testing::HasSubstr;

// The experiment of records(): 2 programs x 10 seeds, unsharded.
Experiment experiment(int shard = 0, int shards = 1) {
  Experiment e;
  e.scenario = "x";
  e.content = "0123456789abcdef";
  e.policy = "fifo";
  e.seeds = 10;
  e.programs = {"naive", "safe"};
  e.version = "test";
  e.shard_index = shard;
  e.shard_count = shards;
  return e;
}

// In run order: naive's seeds 0-9, then safe's.
std::vector<run::RunRecord> records() {
  std::vector<run::RunRecord> r;
  for (const char* strategy : {"naive", "safe"}) {
    for (int s = 0; s < 10; ++s) {
      const bool fails = std::string(strategy) == "naive" && s < 3;
      r.push_back({strategy, "", static_cast<std::uint64_t>(s), fails ? run::Outcome::kFail : run::Outcome::kPass,
                   fails ? "fail" : "", fails ? "torn read" : "", 1000u * static_cast<unsigned>(s), 7,
                   {{"makespan_s", kernel::to_seconds(1000 * s)}}, 0xabcdef00u + static_cast<unsigned>(s), ""});
    }
  }
  return r;
}

// "ok", or the error parse_jsonl gives for `text`.
std::string parse(const std::string& text) {
  Experiment e;
  std::vector<run::RunRecord> out;
  std::string error;
  return parse_jsonl(text, e, out, error) ? std::string("ok") : error;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(ResultsFileTest, RecordsRoundTripBetweenTheHeaderAndTheTrailer) {
  const std::string jsonl = format_jsonl(experiment(), records());
  const auto first = jsonl.find('\n'), second = jsonl.find('\n', first + 1);
  EXPECT_EQ(nlohmann::json::parse(jsonl.substr(0, first))["experiment"]["content"], "0123456789abcdef");
  EXPECT_EQ(nlohmann::json::parse(jsonl.substr(first + 1, second - first - 1))["outcome"], "fail");
  EXPECT_THAT(jsonl, ::testing::ContainsRegex("\n\\{\"end\":\\{\"runs\":20,\"digest\":\"[0-9a-f]{16}\"\\}\\}\n$"));
  Experiment e;
  std::vector<run::RunRecord> back;
  std::string error;
  ASSERT_TRUE(parse_jsonl(jsonl, e, back, error)) << error;
  EXPECT_EQ(e.programs, experiment().programs);
  ASSERT_EQ(back.size(), 20u);
  EXPECT_EQ(format_jsonl(e, back), jsonl) << "every field survives the round trip";
}

// Records come back in the order one run writes them (the experiment's programs, then seeds);
// a stray program, a seed outside the experiment or its shard, or a duplicate is an error.
TEST(ResultsFileTest, RecordsAreOrderedByTheExperimentAndStraysAreRefused) {
  auto recs = records();
  std::vector<run::RunRecord> shuffled(recs.rbegin(), recs.rend());
  std::swap(shuffled[3], shuffled[15]);
  std::string error;
  ASSERT_TRUE(order_records(experiment(), shuffled, error)) << error;
  EXPECT_EQ(format_jsonl(experiment(), shuffled), format_jsonl(experiment(), recs));

  auto refused = [&](std::vector<run::RunRecord> v, const Experiment& e) {
    error.clear();
    EXPECT_FALSE(order_records(e, v, error));
    return error;
  };
  auto dup = recs;
  dup.push_back(recs[13]);
  EXPECT_THAT(refused(dup, experiment()), HasSubstr("'safe' seed 3 appears twice"));
  auto stray = recs;
  stray[4].point = "w=slow";
  EXPECT_THAT(refused(stray, experiment()), HasSubstr("a record of 'w=slow / naive', which the experiment does not run"));
  auto outside = recs;
  outside[2].seed = 10;
  EXPECT_THAT(refused(outside, experiment()), HasSubstr("'naive' seed 10 is outside the experiment's seeds (10 from 0)"));
  EXPECT_THAT(refused({recs[1]}, experiment(0, 2)), HasSubstr("seed 1 is outside the experiment's seeds (10 from 0, shard 0/2)"));
}

// A results file cut short, empty, joined to another, or without its header is refused, naming
// what is wrong.
TEST(ResultsFileTest, DamagedResultFilesAreRefused) {
  const std::string good = format_jsonl(experiment(), records());
  EXPECT_EQ(parse(good), "ok");
  EXPECT_THAT(parse(""), HasSubstr("empty"));
  // Cut at a line boundary: the trailer is gone.
  const std::string cut = good.substr(0, good.find('\n', good.find('\n') + 1) + 1);
  EXPECT_THAT(parse(cut), HasSubstr("cut short: 1 records of 20"));
  EXPECT_THAT(parse(cut), HasSubstr("racesim run --resume DIR"));
  // A record dropped from the middle: the trailer's count does not match.
  std::string dropped = good;
  const auto a = dropped.find('\n') + 1;
  dropped.erase(a, dropped.find('\n', a) + 1 - a);
  EXPECT_THAT(parse(dropped), HasSubstr("the trailer counts 20 records, the file holds 19"));
  EXPECT_THAT(parse(good + good), HasSubstr("a line after the trailer"));
  EXPECT_THAT(parse(good.substr(good.find('\n') + 1)), HasSubstr("no experiment header"));
  // A damaged line before the end is an error, not a cut.
  std::string garbled = good;
  garbled[a + 3] = '#';
  EXPECT_THAT(parse(garbled), HasSubstr("line 2: not a racesim result record"));
}

// Records are verified on read, by every reader (they all go through read_results): an edited
// record (its digest is no longer its text's), a key given twice (the last used to win), a field
// of the wrong type or range, redundant fields that disagree, records reordered or duplicated
// even with their own digests intact (the trailer's digest), and a stray byte after the trailer
// (it used to make the file read as "empty").
TEST(ResultsFileTest, EditedRecordsAreRefusedNamingTheLine) {
  const std::string good = format_jsonl(experiment(), records());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  // The record's own text with a fresh digest, as a careful editor would write it.
  auto rewritten = [&](int record, const std::function<void(run::RunRecord&)>& edit) {
    auto recs = records();
    edit(recs[static_cast<std::size_t>(record)]);
    std::string t = good;
    std::size_t start = 0;
    for (int line = 0; line <= record; ++line) start = t.find('\n', start) + 1;
    const auto stop = t.find('\n', start);
    return t.replace(start, stop - start, format_record("x", recs[static_cast<std::size_t>(record)]));
  };
  EXPECT_THAT(parse(replaced("\"outcome\":\"fail\"", "\"outcome\":\"pass\"")),
              HasSubstr("line 2: not a racesim result record (its digest is not that of its fields (an edited record?))"));
  EXPECT_THAT(parse(rewritten(0, [](run::RunRecord& r) { r.outcome = run::Outcome::kPass; })),
              HasSubstr("line 2: not a racesim result record (outcome 'pass' with check 'fail'"));
  // Fields edited with the digest recomputed over the edited text: the schema still refuses them.
  auto with_digest = [](std::string body) {
    const std::string digest = [&] {
      char buf[17];
      std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(kernel::fnv1a64(body)));
      return std::string(buf);
    }();
    body.pop_back();
    return body + ",\"digest\":\"" + digest + "\"}";
  };
  const std::string record = good.substr(good.find('\n') + 1, good.find('\n', good.find('\n') + 1) - good.find('\n') - 1);
  const std::string body = record.substr(0, record.rfind(",\"digest\":")) + "}";
  auto one = [&](const std::string& from, const std::string& to) {
    std::string b = body;
    b.replace(b.find(from), from.size(), to);
    return good.substr(0, good.find('\n') + 1) + with_digest(b) + good.substr(good.find('\n', good.find('\n') + 1));
  };
  EXPECT_THAT(parse(one("\"outcome\":\"fail\"", "\"outcome\":\"fail\",\"outcome\":\"pass\"")),
              HasSubstr("line 2: not a racesim result record (the key 'outcome' appears twice in one object)"));
  EXPECT_THAT(parse(one("\"makespan_ns\":0", "\"makespan_ns\":-50")),
              HasSubstr("'makespan_ns' is -50, expected a whole number >= 0"));
  EXPECT_THAT(parse(one("\"makespan_ns\":0", "\"makespan_ns\":7")),
              HasSubstr("metric makespan_s is 0.0 but makespan_ns is 7"));
  EXPECT_THAT(parse(one("\"seed\":0", "\"seed\":\"0\"")), HasSubstr("'seed' is \"0\", expected a whole number"));
  EXPECT_THAT(parse(one("\"events\":7", "\"events\":7,\"extra\":1")), HasSubstr("an unknown field 'extra'"));
  EXPECT_THAT(parse(one("\"trace_hash\":\"00000000abcdef00\"", "\"trace_hash\":\"xyz\"")),
              HasSubstr("'trace_hash' is 'xyz', expected 16 hex digits"));
  // Two whole records swapped: each record's digest holds, the trailer's does not.
  std::vector<std::string> lines;
  for (std::size_t p = 0, q; (q = good.find('\n', p)) != std::string::npos; p = q + 1) lines.push_back(good.substr(p, q - p));
  std::swap(lines[2], lines[3]);
  std::string swapped;
  for (const auto& l : lines) swapped += l + "\n";
  EXPECT_THAT(parse(swapped), HasSubstr("line 22: the trailer's digest is not that of the header and records before it"));
  lines[3] = lines[2];  // a record twice, one dropped: the count holds
  std::string duplicated;
  for (const auto& l : lines) duplicated += l + "\n";
  EXPECT_THAT(parse(duplicated), HasSubstr("line 22: the trailer's digest"));
  // The header's numbers are whole numbers read as such: a huge or negative float in an integer
  // field was converted to int (undefined behaviour, found by the results fuzzer), not refused.
  const std::string header = good.substr(0, good.find('\n'));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"shard\":[0,1]", "\"shard\":[0,1e300]"}, {"\"seed_start\":0", "\"seed_start\":-1e300"},
           {"\"seeds\":10", "\"seeds\":10.5"}, {"\"runs\":20", "\"runs\":-20"}}) {
    std::string h = header;
    ASSERT_NE(h.find(from), std::string::npos) << from;
    h.replace(h.find(from), from.size(), to);
    EXPECT_THAT(parse(h + good.substr(good.find('\n'))), HasSubstr("line 1: experiment header: ")) << to;
  }
  std::vector<ResultsText> sections;
  std::string error;
  EXPECT_FALSE(parse_result_sections(good + "x", sections, error));
  EXPECT_THAT(error, HasSubstr("line 23: 'x' where an experiment header belongs"));
  EXPECT_EQ(parse(good), "ok");
}

// A file cut in the middle of a line (a kill during a write) reads as incomplete: its whole
// lines count, the cut one does not.
TEST(ResultsFileTest, ACutLineIsNotARecord) {
  const std::string good = format_jsonl(experiment(), records());
  std::size_t end = 0;
  for (int line = 0; line < 6; ++line) end = good.find('\n', end) + 1;  // header + 5 records
  ResultsText read;
  std::string error;
  ASSERT_TRUE(read_results(good.substr(0, end + 40), read, error)) << error;
  EXPECT_FALSE(read.complete);
  EXPECT_EQ(read.records.size(), 5u);
  EXPECT_EQ(read.whole_bytes, end);
  ASSERT_TRUE(read_results(good, read, error)) << error;
  EXPECT_TRUE(read.complete);
  EXPECT_EQ(read.whole_bytes, good.size());
}

// Shards join only when they are shards of one experiment, each once, none missing.
TEST(ResultsFileTest, ShardsOfDifferentExperimentsOrWithGapsDoNotJoin) {
  Experiment whole;
  std::string error;
  const std::vector<std::string> names = {"a", "b", "c"};
  ASSERT_TRUE(join_shards({experiment(0, 3), experiment(2, 3), experiment(1, 3)}, names, whole, error)) << error;
  EXPECT_EQ(whole.shard_count, 1);
  EXPECT_EQ(whole.expected_runs(), 20u);
  EXPECT_FALSE(join_shards({experiment(0, 3), experiment(2, 3)}, names, whole, error));
  EXPECT_THAT(error, HasSubstr("shard 1/3 missing"));
  EXPECT_FALSE(join_shards({experiment(0, 3), experiment(0, 3), experiment(1, 3)}, names, whole, error));
  EXPECT_THAT(error, HasSubstr("b and a are both shard 0/3"));
  auto differ = [&](auto change, const char* field) {
    Experiment other = experiment(1, 2);
    change(other);
    EXPECT_FALSE(join_shards({experiment(0, 2), other}, names, whole, error)) << field;
    EXPECT_THAT(error, HasSubstr(field));
  };
  differ([](Experiment& e) { e.content = "fedcba9876543210"; }, "the file was edited");
  differ([](Experiment& e) { e.overrides = {"ranks=8"}; }, "--set overrides differs: '[]' and '[ranks=8]'");
  differ([](Experiment& e) { e.policy = "random"; }, "--policy");
  differ([](Experiment& e) { e.seed_start = 5; }, "--seed-start");
  differ([](Experiment& e) { e.seeds = 11; }, "--seeds");
  differ([](Experiment& e) { e.programs.pop_back(); }, "programs");
  differ([](Experiment& e) { e.version = "other"; }, "racesim version");
}

// A side-by-side merge: one section per experiment, each whole; a reader of one experiment (a
// resume, parse_jsonl) refuses a second, and a section cut short is refused with its line.
TEST(ResultsFileTest, ASideBySideFileHoldsEachExperimentInItsOwnSection) {
  Experiment live = experiment();
  live.policy = "live:scale=0.01:fs=tmpfs";
  const std::string both = format_jsonl(experiment(), records()) + format_jsonl(live, records());
  std::vector<ResultsText> sections;
  std::string error;
  ASSERT_TRUE(parse_result_sections(both, sections, error)) << error;
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[0].experiment.policy, "fifo");
  EXPECT_EQ(sections[1].experiment.policy, "live:scale=0.01:fs=tmpfs");
  EXPECT_EQ(sections[0].records.size(), 20u);
  EXPECT_EQ(sections[1].records.size(), 20u);
  ResultsText one;
  EXPECT_FALSE(read_results(both, one, error));
  EXPECT_THAT(error, HasSubstr("line 23: a line after the trailer"));
  Experiment e;
  std::vector<run::RunRecord> out;
  EXPECT_FALSE(parse_jsonl(both, e, out, error));
  const std::string cut = both.substr(0, both.rfind("{\"end\""));
  EXPECT_FALSE(parse_result_sections(cut, sections, error));
  EXPECT_THAT(error, HasSubstr("cut short: the experiment from line 23 has 20 records of 20"));
  ASSERT_TRUE(parse_result_sections(format_jsonl(experiment(), records()) + "\n\n", sections, error)) << error;
  EXPECT_EQ(sections.size(), 1u) << "empty lines at the end are no experiment";
}

// Parts group into experiments: shards of one are joined, different experiments of one scenario
// file stay apart in the order given, another scenario file or a missing shard is refused.
TEST(ResultsFileTest, PartsGroupIntoExperimentsOfOneScenarioFile) {
  Experiment live = experiment();
  live.policy = "live:scale=0.01:fs=tmpfs";
  std::vector<JoinedExperiment> groups;
  std::string error;
  const std::vector<std::string> names = {"s0", "live", "s1"};
  ASSERT_TRUE(group_experiments({experiment(0, 2), live, experiment(1, 2)}, names, groups, error)) << error;
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].parts, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(groups[0].whole.shard_count, 1);
  EXPECT_FALSE(is_live(groups[0].whole));
  EXPECT_EQ(groups[1].parts, (std::vector<std::size_t>{1}));
  EXPECT_TRUE(is_live(groups[1].whole));
  Experiment edited = live;
  edited.content = "fedcba9876543210";
  EXPECT_FALSE(group_experiments({experiment(), edited}, names, groups, error));
  EXPECT_THAT(error, HasSubstr("live and s0 are results of different scenario files: scenario content"));
  Experiment newer = experiment(1, 2);
  newer.version = "other";
  EXPECT_FALSE(group_experiments({experiment(0, 2), newer}, names, groups, error));
  EXPECT_THAT(error, HasSubstr("shard 1/2 missing"));
  EXPECT_THAT(error, HasSubstr("(live is of another experiment: racesim version differs"));
}

// A run killed part-way keeps the records it appended; resumed, it gets them back, appends the
// rest, and finishes with the very bytes of a run that was never interrupted.
TEST(ResultsLogTest, AnInterruptedRunResumesToTheBytesOfAWholeOne) {
  const std::string dir = ::testing::TempDir() + "results_log_resume";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/summary.csv") << "left by an earlier run\n";
  const auto recs = records();
  std::string error;
  {
    ResultsLog log;
    ASSERT_TRUE(log.start(dir, experiment(), error)) << error;
    EXPECT_FALSE(std::filesystem::exists(dir + "/summary.csv")) << "a stale summary would describe other results";
    for (std::size_t i : {12u, 3u, 0u, 19u, 7u}) ASSERT_TRUE(log.append(recs[i], error)) << error;
    ASSERT_TRUE(log.flush(error)) << error;
    EXPECT_EQ(log.records_written(), 5u);
  }
  // The kill came in the middle of the sixth line.
  std::ofstream(dir + "/results.jsonl", std::ios::app) << format_record("x", recs[5]).substr(0, 30);
  Experiment e;
  std::vector<run::RunRecord> ignored;
  EXPECT_FALSE(parse_jsonl(read_file(dir + "/results.jsonl"), e, ignored, error)) << "merge refuses it";

  ResultsLog log;
  std::vector<run::RunRecord> done;
  ASSERT_TRUE(log.resume(dir, experiment(), done, error)) << error;
  ASSERT_EQ(done.size(), 5u);
  EXPECT_EQ(done[0].seed, 0u);
  EXPECT_EQ(done[4].strategy, "safe");
  EXPECT_EQ(done[4].seed, 9u);
  bool first = true;
  for (std::size_t i = recs.size(); i-- > 0;) {
    if (i == 12 || i == 3 || i == 0 || i == 19 || i == 7) continue;
    if (first) {
      // Not every run is there yet: finish refuses and writes nothing.
      EXPECT_FALSE(log.finish("csv\n", "# md\n", error));
      EXPECT_THAT(error, HasSubstr("holds 5 of the experiment's 20 runs"));
      EXPECT_FALSE(std::filesystem::exists(dir + "/summary.csv"));
      ASSERT_TRUE(log.resume(dir, experiment(), done, error)) << error;
      first = false;
    }
    ASSERT_TRUE(log.append(recs[i], error)) << error;
  }
  ASSERT_TRUE(log.finish("csv\n", "# md\n", error)) << error;
  EXPECT_EQ(read_file(dir + "/results.jsonl"), format_jsonl(experiment(), recs));
  EXPECT_EQ(read_file(dir + "/summary.csv"), "csv\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/results.jsonl.tmp"));
}

// Resuming with options other than the run's is refused, naming what differs; so is a directory
// with nothing to resume.
TEST(ResultsLogTest, ResumeRefusesAnotherExperiment) {
  const std::string dir = ::testing::TempDir() + "results_log_other";
  std::filesystem::remove_all(dir);
  std::string error;
  {
    ResultsLog log;
    ASSERT_TRUE(log.start(dir, experiment(1, 2), error)) << error;
  }
  ResultsLog log;
  std::vector<run::RunRecord> done;
  Experiment more = experiment(1, 2);
  more.seeds = 20;
  EXPECT_FALSE(log.resume(dir, more, done, error));
  EXPECT_THAT(error, HasSubstr("holds another experiment than this command runs: --seeds differs: '10' and '20'"));
  EXPECT_FALSE(log.resume(dir, experiment(0, 2), done, error));
  EXPECT_THAT(error, HasSubstr("shard differs: 1 and 0"));
  EXPECT_TRUE(log.resume(dir, experiment(1, 2), done, error)) << error;
  EXPECT_TRUE(done.empty());
  EXPECT_FALSE(log.resume(dir + "/none", experiment(), done, error));
  EXPECT_THAT(error, HasSubstr("nothing to resume: " + dir + "/none/results.jsonl"));
}

}  // namespace
}  // namespace racesim::report
