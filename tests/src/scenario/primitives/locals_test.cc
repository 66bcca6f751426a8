// Values in programs, through whole runs of small scenarios: locals (`let`, `set`) read by
// conditions, durations and names; values carried by collectives; `for_each` over a listing
// taken at one instant; marks that are metrics only when asked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// One local mount at /c: 1 ms per metadata operation.
const char* kStorage = "platform:\n  storage:\n    c: {kind: local, mount: /c, meta_latency: 1ms}\n";

TEST(LocalsTest, ALocalCountsAndConditionsDurationsAndNamesReadIt) {
  // Three tries, then a sleep of tries seconds, then a directory named after the count.
  auto r = run(make(1, "  - let: {tries: 0}\n"
                       "  - repeat: {times: 3, do: [{set: {tries: \"${tries + 1}\"}}]}\n"
                       "  - if: {expr: \"${tries == 3}\", then: [{sleep: \"${tries * 1s}\"}], else: [{fail: not three}]}\n"
                       "  - mkdir: \"/c/step${tries}\"\n"
                       "  - if: {exists: /c/step3, then: [], else: [{fail: no step3}]}\n",
                   kStorage));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_NEAR(r.metrics.at("makespan_s"), 3.002, 1e-9) << "3 s of sleep, then a mkdir and a stat at 1 ms each";
  EXPECT_EQ(r.metrics.count("tries"), 0u) << "a local is not a metric";
}

TEST(LocalsTest, EachRankHasItsOwnAndASpawnedProcessStartsWithACopy) {
  // Rank r sleeps r seconds; the helper's set does not change the rank's own local.
  auto r = run(make(3, "  - let: {d: \"${rank * 1s}\"}\n"
                       "  - spawn: {name: h, do: [{set: {d: 100s}}, {sleep: \"${d}\"}]}\n"
                       "  - join: h\n"
                       "  - sleep: \"${d}\"\n"));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_NEAR(r.metrics.at("makespan_s"), 102, 1e-9);
}

TEST(LocalsTest, MisusedLocalsAreLocatedErrors) {
  EXPECT_THAT(compile_errors(1, "  - set: {n: 1}\n"), HasSubstr("set: 'n' is not declared (declare it with `let` first"));
  EXPECT_THAT(compile_errors(1, "  - let: {steps: 1}\n", "params: {steps: 4}\n"),
              HasSubstr("let: 'steps' is already a param; a local takes a name of its own"));
  EXPECT_THAT(compile_errors(1, "  - let: {n: 1}\n  - let: {n: 2}\n"), HasSubstr("'n' is already a local here"));
  EXPECT_THAT(compile_errors(1, "  - let: {n: hello}\n"), HasSubstr("let n: expected a number"));
  EXPECT_THAT(compile_errors(1, "  - let: {t: 1s}\n  - set: {t: 5}\n"), HasSubstr("set t: value: expected a duration"));
  EXPECT_THAT(compile_errors(1, "  - let: {n: 0}\n  - sleep: \"${10s / n}\"\n"),
              HasSubstr("divides by a value drawn from a distribution or held in a local, which may be 0"));
  EXPECT_THAT(compile_errors(1, "  - let: {n: 0}\n  - count: \"c${n}\"\n"),
              HasSubstr("names a metric, whose name is fixed before the run: it cannot read a local"));
  // A local lives in its step list: not after the `if` that declared it.
  EXPECT_THAT(compile_errors(1, "  - if: {rank: 0, then: [{let: {n: 1}}]}\n  - sleep: \"${n * 1s}\"\n"),
              HasSubstr("unknown name 'n'"));
  // Every rank declares it: a `let` some ranks skip would leave them a value never set.
  EXPECT_THAT(compile_errors(2, "  - {let: {n: 1}, on: rank0}\n  - sleep: \"${n * 1s}\"\n"),
              HasSubstr("let: a local is declared on every rank (no `on:`)"));
  // Its first value cannot read it.
  EXPECT_THAT(compile_errors(1, "  - let: {n: \"${n + 1}\"}\n"), HasSubstr("unknown name 'n'"));
}

TEST(LocalsTest, ALocalInAUseIsTheDefinitionsOwnAndAnArgumentMayReadTheCallersLocals) {
  // The definition's `let: {n}` has a slot of its own: the caller's n (5) is intact after it.
  const std::string define = "define:\n  wait_for: {args: [s], do: [{let: {n: 2}}, {sleep: \"${s * n}\"}]}\n";
  auto r = run(make(1, "  - let: {n: 5}\n  - use: {name: wait_for, s: \"${n * 1s}\"}\n  - sleep: \"${n * 1s}\"\n", define));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_NEAR(r.metrics.at("makespan_s"), 10 + 5, 1e-9);
}

TEST(CarriedValueTest, AllReduceAndBroadcastGiveEveryRankTheSameValue) {
  // Only rank 2 finds the file: or gives 1 on every rank; sum of rank + 1 over 4 ranks is 10;
  // broadcast from root 2 gives every rank 25.
  auto r = run(make(4, "  - let: {found: \"${rank == 2}\", v: \"${rank + 1}\", x: \"${rank * 10 + 5}\"}\n"
                       "  - collective: {op: all_reduce, value: found, reduce: or}\n"
                       "  - collective: {op: all_reduce, value: v}\n"
                       "  - collective: {op: broadcast, root: 2, value: x}\n"
                       "  - if: {expr: \"${found == 1}\", then: [], else: [{fail: not found}]}\n"
                       "  - if: {expr: \"${x == 25}\", then: [], else: [{fail: not 25}]}\n"
                       "  - sleep: \"${v * 1s}\"\n",
                   "platform: {collective: {exec_timeout: none}}\n"));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_NEAR(r.metrics.at("makespan_s"), 10, 1e-3);
  // min and max, and `and`: false once one rank has 0.
  auto m = run(make(4, "  - let: {lo: \"${rank + 3}\", hi: \"${rank + 3}\", all: \"${rank != 1}\"}\n"
                       "  - collective: {op: all_reduce, value: lo, reduce: min}\n"
                       "  - collective: {op: all_reduce, value: hi, reduce: max}\n"
                       "  - collective: {op: all_reduce, value: all, reduce: and}\n"
                       "  - if: {expr: \"${lo * 100 + hi * 10 + all == 360}\", then: [], else: [{fail: wrong}]}\n",
                   "platform: {collective: {exec_timeout: none}}\n"));
  EXPECT_EQ(m.outcome, run::Outcome::kPass) << m.diagnosis;
}

TEST(CarriedValueTest, AMemberThatCarriesNoValueOrReducesOtherwiseIsAnErrorNamingIt) {
  auto none = run(make(4, "  - let: {f: 1}\n"
                          "  - if: {rank: 0, then: [{collective: {op: all_reduce, value: f}}], "
                          "else: [{collective: {op: all_reduce, bytes: 8B}}]}\n",
                      "platform: {collective: {exec_timeout: none}}\n"));
  EXPECT_EQ(none.outcome, run::Outcome::kFail);
  EXPECT_THAT(none.diagnosis, HasSubstr("all_reduce #1 on world carries a value on rank 0 but none on ranks 1,2,3"));
  auto other = run(make(2, "  - let: {f: 1}\n"
                           "  - if: {rank: 0, then: [{collective: {op: all_reduce, value: f, reduce: max}}], "
                           "else: [{collective: {op: all_reduce, value: f}}]}\n",
                       "platform: {collective: {exec_timeout: none}}\n"));
  EXPECT_THAT(other.diagnosis, HasSubstr("rank 0 reduces by max, rank 1 otherwise"));
  EXPECT_THAT(compile_errors(2, "  - let: {f: 1}\n  - collective: {op: all_gather, value: f}\n"),
              HasSubstr("collective value: carried by broadcast and all_reduce only"));
  EXPECT_THAT(compile_errors(2, "  - collective: {op: all_reduce, value: f}\n"),
              HasSubstr("collective value: expected a local declared by `let` before this step, got 'f'"));
  EXPECT_THAT(compile_errors(2, "  - let: {f: 1}\n  - collective: {op: all_reduce, value: f, reduce: xor}\n"),
              HasSubstr("collective reduce: expected sum, min, max, or or and"));
}

TEST(ListingLoopTest, TheListingIsTakenOnceAndEachPathIsHeldInTurn) {
  // Three files; the loop copies each (the copies match the pattern too, but the listing was
  // taken before them) and counts them.
  auto r = run(make(1, "  - write_text: {path: /c/b, text: x}\n  - write_text: {path: /c/a, text: x}\n"
                       "  - write_text: {path: /c/c, text: x}\n"
                       "  - let: {n: 0, last: 0}\n"
                       "  - for_each: {var: f, listing: \"/c/*\", index: i, do: [{copy: {from: \"${f}\", to: \"${f}_${i}\"}}, "
                       "{set: {n: \"${n + 1}\", last: \"${i}\"}}]}\n"
                       "  - if: {expr: \"${n * 10 + last == 32}\", then: [], else: [{fail: not three}]}\n"
                       "  - if: {exists: /c/a_0, then: [], else: [{fail: a is not first}]}\n"
                       "  - if: {exists: /c/c_2, then: [], else: [{fail: c is not last}]}\n",
                   kStorage));
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: f, listing: \"/nope/*\", do: []}\n", kStorage),
              HasSubstr("is on no mount"));
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: f, listing: \"/c/*\", do: [{set: {f: 1}}]}\n", kStorage),
              HasSubstr("set: 'f' is a listing's name, which `set` does not change"));
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: f, listing: \"/c/*\", do: [{sleep: \"${f * 1s}\"}]}\n", kStorage),
              HasSubstr("'f' is text (a name of a listing)"));
}

TEST(MarkMetricTest, AMarkRecordsItsTimeOnlyWhenTheScenarioAsks) {
  auto plain = run(make(1, "  - sleep: 2s\n  - mark: ready\n"));
  EXPECT_EQ(plain.metrics.count("ready_s"), 0u);
  auto asked = run(make(1, "  - sleep: 2s\n  - mark: {name: ready, metric: true}\n"));
  EXPECT_DOUBLE_EQ(asked.metrics.at("ready_s"), 2);
  auto named = run(make(2, "  - sleep: \"${rank * 1s + 1s}\"\n  - mark: \"ready${rank}\"\n",
                        "metrics:\n  r1: {of: ready1_s, stat: max}\n"));
  EXPECT_DOUBLE_EQ(named.metrics.at("ready1_s"), 2);
  EXPECT_EQ(named.metrics.count("ready0_s"), 0u) << "only the name the scenario asks for";
  auto between = run(make(1, "  - mark: a\n  - sleep: 3s\n  - mark: b\n", "metrics:\n  ab: {between: [a, b], stat: max}\n"));
  EXPECT_DOUBLE_EQ(between.metrics.at("ab"), 3);
}

}  // namespace
}  // namespace racesim::scenario
