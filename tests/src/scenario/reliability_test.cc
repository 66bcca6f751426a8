// Regression tests for the classes of bad input the reliability campaign found: each
// must be a located error or a clear result, never a crash, an internal error, an unbounded run
// or a silent wrong answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/run/runner.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// The errors of compiling `text` as f.yaml, every point and strategy ("" if it compiled).
std::string errors_of(const std::string& text, std::vector<std::string> overrides = {}) {
  Diagnostics d;
  auto study = compile_study({.path = "f.yaml", .text = text, .overrides = std::move(overrides)}, d);
  if (study && d.ok()) return "";
  EXPECT_FALSE(d.ok()) << "compile_study failed without an error";
  return d.to_string();
}

// The records of running `text` (as f.yaml) for `seeds` seeds.
std::vector<run::RunRecord> run_text(const std::string& text, std::uint64_t seeds = 2) {
  Diagnostics d;
  auto study = compile_study({.path = "f.yaml", .text = text}, d);
  EXPECT_TRUE(study) << d.to_string();
  if (!study) return {};
  return run::run_all(study->program_pointers(), {.seeds = seeds, .jobs = 1});
}

const char* kHead = "name: f\nranks: 2\nseeds: 2\n";

// A missing required key in a file with several strategies was an internal error: the second
// compile's error repeated the first, was not counted, and the compiler read the missing node.
TEST(ReliabilityTest, AMissingKeyIsLocatedWithManyStrategiesAndPoints) {
  const std::string text = std::string(kHead) +
                           "params: {t: 1s}\nsweep: {params.t: [1s, 2s]}\n"
                           "program:\n  - if: {rank: rank0}\n  - slot: s\n"
                           "strategies:\n  a: {s: [{sleep: 1s}]}\n  b: {s: [{sleep: 2s}]}\n";
  EXPECT_THAT(errors_of(text), HasSubstr("f.yaml:7:9: error: if: missing 'then'"));
  Diagnostics d;
  d.error({"f", 1, 1}, "same");
  d.error({"f", 1, 1}, "same");
  EXPECT_EQ(d.count(), 2u);       // every raise counts, so a repeated failure is seen as one
  EXPECT_EQ(d.all().size(), 1u);  // and is shown once
}

// A path-taking primitive given a map without `path` (`read: {}`) reported its error at no line
// (the missing key is made by no line, and read ignored any other key); a missing key's error is
// located, in the program and in a strategy's slot alike.
TEST(ReliabilityTest, AMissingKeyInAStepsMapIsLocatedAtTheStep) {
  const std::string text = std::string(kHead) +
                           "platform: {storage: {d: {kind: local, mount: /d}}}\n"
                           "program:\n  - read: {}\n  - slot: s\n"
                           "strategies:\n  a: {s: [{write_file: {size: 1KiB}}]}\n";
  const std::string e = errors_of(text);
  EXPECT_THAT(e, HasSubstr("f.yaml:6:11: error: read: missing 'path'"));
  EXPECT_THAT(e, HasSubstr("f.yaml:9:24: error: write_file: missing 'path'"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("f.yaml: error")));
}

// An undefined ${param} in a fault argument validated, then the run read past a map's end.
TEST(ReliabilityTest, AnUndefinedParamInAFaultArgumentIsLocated) {
  const std::string text = std::string(kHead) +
                           "program: [{compute: 1s}]\nstrategies: {a: {}}\n"
                           "faults:\n  - {kind: straggler, on: all, factor: \"${nope}\"}\n";
  EXPECT_THAT(errors_of(text), HasSubstr("f.yaml:7:40: error: straggler.factor: ${nope}: unknown name 'nope'"));
}

// Errors in platform values and fault arguments named f.yaml:1:1 once the scenario was copied
// for a sweep point; they name the value now, at every point.
TEST(ReliabilityTest, PlatformAndFaultErrorsKeepTheirPositionsAtSweepPoints) {
  const std::string text = std::string(kHead) +
                           "sweep: {ranks: [2, 4]}\nplatform: {storage: [1, 2]}\n"
                           "program: [{compute: 1s}]\nstrategies: {a: {}, b: {}}\n"
                           "faults:\n  - {kind: straggler, on: all, factor: -2}\n";
  const std::string e = errors_of(text);
  EXPECT_THAT(e, HasSubstr("f.yaml:5:21: error: platform.storage: expected a map"));
  EXPECT_THAT(e, HasSubstr("f.yaml:9:40: error: fault 'straggler' (straggler) factor: expected values from 1"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr(":1:1:")));
  EXPECT_THAT(errors_of(std::string(kHead) + "platform: 5\nprogram: [{compute: 1s}]\nstrategies: {a: {}}\n"),
              HasSubstr("f.yaml:4:11: error: platform: expected a map, got a scalar"));
}

// Values out of their type's range were accepted: an int field given 2^32 ran another model,
// a negative straggler factor made compute free, acregmin above acregmax went unnoticed, and a
// distribution that can leave the range is refused too. Values behind a sweep axis are checked.
TEST(ReliabilityTest, ValuesOutsideTheirRangeAreRefused) {
  const std::string program = "program: [{compute: 1s}]\nstrategies: {a: {}}\n";
  EXPECT_THAT(errors_of(std::string(kHead) + "platform: {model: {layers: 4294967296}}\n" + program),
              HasSubstr("platform.model.layers: expected 1 to 100000, got 4294967296"));
  EXPECT_THAT(errors_of(std::string(kHead) + "platform: {storage: {n: {kind: nfs, mount: /n, acregmin: 90s}}}\n" +
                        program),
              HasSubstr("platform.storage.n.acregmin: acregmin (90s) is above acregmax (60s)"));
  EXPECT_THAT(errors_of(std::string(kHead) + program +
                        "faults:\n  - {kind: slow_link, on: all, factor: {lognormal: {median: 2, sigma: 1}}}\n"),
              HasSubstr("it takes values down to 0, below 1"));
  EXPECT_THAT(errors_of(std::string(kHead) + program + "faults:\n  - {kind: eio, on: all, rate: 1.5}\n"),
              HasSubstr("rate: expected values from 0 to 1, got 1.5"));
  const std::string model = std::string(kHead) + "platform: {model: {layers: 2, hidden: 8}}\n";
  const std::string swept = model + "sweep: {platform.model.layers: [4, 4294967296]}\n" + program;
  EXPECT_THAT(errors_of(swept), HasSubstr("f.yaml:5:36: error: platform.model.layers: expected 1 to 100000"));
  EXPECT_THAT(errors_of(model + program, {"platform.model.hidden=4294967296"}),
              HasSubstr("platform.model.hidden: expected 1 to 1048576"));
}

// Step lists nest at most Compiler::kMaxNesting deep (a deeper program overflowed its fiber
// stack at run time); the deepest allowed one runs, under the sanitizers' larger frames too.
TEST(ReliabilityTest, NestingIsBoundedAndTheDeepestAllowedProgramRuns) {
  auto nested = [](int depth) {
    std::string steps = "[{mark: x}]";
    for (int i = 1; i < depth; ++i) steps = "[{repeat: {times: 1, do: " + steps + "}}]";
    return std::string(kHead) + "program: " + steps + "\nstrategies: {a: {}}\n";
  };
  EXPECT_THAT(errors_of(nested(Compiler::kMaxNesting + 1)),
              HasSubstr("steps nested more than 32 deep"));
  const auto recs = run_text(nested(Compiler::kMaxNesting));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].outcome, run::Outcome::kPass) << recs[0].diagnosis;
}

// Nested repeats of steps that create no event ran forever despite limits.events; now each
// iteration counts against the limit and the run ends as a timeout.
TEST(ReliabilityTest, LoopsWithoutEventsEndAtTheEventLimit) {
  const auto recs = run_text(std::string(kHead) +
                             "limits: {time: 1s, events: 1000}\n"
                             "program: [{repeat: {times: 1000000, do: [{repeat: {times: 1000000, do: [{mark: x}]}}]}}]\n"
                             "strategies: {a: {}}\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].outcome, run::Outcome::kTimeout);
  EXPECT_THAT(recs[0].diagnosis, HasSubstr("event limit 1000 reached"));
}

// A sleep far past the time limit is a timeout, not a deadlock.
TEST(ReliabilityTest, AHugeSleepIsATimeout) {
  const auto recs = run_text(std::string(kHead) + "limits: {time: 1h}\nprogram: [{sleep: 2000h}]\nstrategies: {a: {}}\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].outcome, run::Outcome::kTimeout);
  EXPECT_EQ(recs[0].check, "no_timeout");
}

// Time arithmetic saturates instead of wrapping: a compute step of 100 days stretched a million
// times by a straggler, and a draw far beyond 100 days, each end as a timeout at the limit. Both
// ended as "deadlock at 0s ... no known releaser".
TEST(ReliabilityTest, DurationsBeyondAnyLimitEndAsATimeoutAtTheLimit) {
  for (const std::string& body : {
           std::string("program: [{compute: 2400h}]\nstrategies: {a: {}}\n"
                       "faults:\n  - {kind: straggler, on: 0, factor: 1000000}\n"),
           std::string("params: {d: {lognormal: {median: 2400h, sigma: 10}}}\n"
                       "program: [{sleep: \"${d}\"}]\nstrategies: {a: {}}\n"),
       }) {
    const auto recs = run_text(std::string(kHead) + "limits: {time: 1h}\n" + body, 4);
    ASSERT_EQ(recs.size(), 4u) << body;
    for (const auto& r : recs) {
      EXPECT_EQ(r.outcome, run::Outcome::kTimeout) << body << r.diagnosis;
      EXPECT_THAT(r.diagnosis, HasSubstr("time limit 3600s")) << body;
    }
  }
  // A step's duration past the documented 100 days is refused where it is written.
  EXPECT_THAT(errors_of(std::string(kHead) + "program: [{sleep: 2562047h}]\nstrategies: {a: {}}\n"),
              HasSubstr("f.yaml:4:19: error: sleep: value: duration '2562047h' is beyond the largest a scenario "
                        "takes, 100 days (8640000s)"));
  EXPECT_THAT(errors_of(std::string(kHead) + "program: [{poll_until: {exists: /x, interval: 0.5ns, timeout: 1s}}]\n"
                        "strategies: {a: {}}\n"),
              HasSubstr("not a whole number of nanoseconds"));
}

// An error is reported once, not again through what follows from it: a strategy that does not
// compile leaves its marks unknown, so the metrics over them are not checked (each used to add
// "no strategy sets a mark").
TEST(ReliabilityTest, ErrorsThatFollowFromAnEarlierErrorAreNotReported) {
  const std::string text = std::string(kHead) +
                           "metrics:\n  gap_s: {between: [a, b], stat: max}\n"
                           "program: [{mark: a}, {slot: s}, {mark: b}]\n"
                           "strategies:\n  x: {s: [{sleep: 1ss}]}\n  y: {s: [{sleep: 1s}]}\n";
  const std::string errors = errors_of(text);
  EXPECT_THAT(errors, HasSubstr("f.yaml:8:19: error: sleep: value: expected a duration like '200ms', got '1ss'"));
  EXPECT_THAT(errors, testing::Not(HasSubstr("no strategy sets a mark")));
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << errors;
  // A typo in the metric itself is still reported when every strategy compiles.
  EXPECT_THAT(errors_of(std::string(kHead) + "metrics:\n  gap_s: {between: [a, bb], stat: max}\n"
                        "program: [{mark: a}, {mark: b}]\nstrategies: {x: {}}\n"),
              HasSubstr("no strategy sets a mark 'bb' (did you mean 'b'?"));
}

// A YAML alias bomb and a huge file are refused before any walk over them; a sweep of 64 axes
// (2^64 points) no longer wraps the size guard to 0.
TEST(ReliabilityTest, AliasBombsHugeFilesAndHugeSweepsAreRefused) {
  std::string bomb = std::string(kHead) + "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 12; ++i) {
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) bomb += (j ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  bomb += "program: [{sleep: 1s}]\nstrategies: {a: {}}\n";
  // Located at the entry that crosses the limit, and where the size limit is crossed.
  EXPECT_THAT(errors_of(bomb), HasSubstr("f.yaml:9:1: error: the file expands to more than 200000 YAML nodes here"));
  EXPECT_THAT(errors_of(std::string(kHead) + "# " + std::string(kMaxScenarioBytes, 'x') + "\n"),
              HasSubstr("f.yaml:4:" + std::to_string(kMaxScenarioBytes - std::string(kHead).size() + 1) +
                        ": error: the file is larger than 1024 KiB"));
  std::string sweep = std::string(kHead) + "sweep:\n", params = "params:\n";
  for (int i = 0; i < 64; ++i) {
    sweep += "  params.p" + std::to_string(i) + ": [1, 2]\n";
    params += "  p" + std::to_string(i) + ": 1\n";
  }
  EXPECT_THAT(errors_of(sweep + params + "program: [{sleep: 1s}]\nstrategies: {a: {}}\n"),
              HasSubstr("sweep: more than 10000 points"));
}

// A rank that dies of an unexpected error fails the run even when `checks:` leaves no_errors out.
TEST(ReliabilityTest, ARankThatDiesIsNeverAPass) {
  struct ThrowStep final : Step {
    void run(RankContext&) const override { throw std::runtime_error("out of memory (simulated)"); }
  };
  Registry registry = builtin_registry();
  registry.add({"throw_now", "throw_now: {} - throws", [](const Value&, const Location&, Compiler&) {
                  return std::unique_ptr<Step>(std::make_unique<ThrowStep>());
                }});
  Diagnostics d;
  auto sc = load_scenario_text(std::string(kHead) + "checks: [no_timeout]\nprogram: [{throw_now: {}}]\nstrategies: {a: {}}\n",
                               "f.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  auto p = compile_program(*sc, sc->strategies[0], d, registry);
  ASSERT_TRUE(p) << d.to_string();
  const auto rec = run::run_one(*p, 0, {});
  EXPECT_EQ(rec.outcome, run::Outcome::kError);
  EXPECT_EQ(rec.check, "no_errors");
  EXPECT_THAT(rec.diagnosis, HasSubstr("out of memory (simulated)"));
}

// Diagnoses name the scenario by its file name, so results do not depend on the path's spelling.
TEST(ReliabilityTest, DiagnosesDoNotDependOnHowThePathIsSpelled) {
  const std::string text = std::string(kHead) + "program: [{poll_until: {marked: never, interval: 1s, timeout: 3s}}]\n"
                                                "strategies: {a: {}}\n";
  auto diagnosis = [&](const std::string& path) {
    Diagnostics d;
    auto study = compile_study({.path = path, .text = text}, d);
    EXPECT_TRUE(study) << d.to_string();
    return run::run_all(study->program_pointers(), {.seeds = 1, .jobs = 1}).at(0).diagnosis;
  };
  EXPECT_THAT(diagnosis("a/b/f.yaml"), HasSubstr("(f.yaml:4:12)"));
  EXPECT_EQ(diagnosis("a/b/f.yaml"), diagnosis("./x/../f.yaml"));
}

}  // namespace
}  // namespace racesim::scenario
