// The explorer (explore.h): a failure decided by the schedule alone is found by pct and, for the
// same budget, the same on any number of threads; each finding's tape replays to its run; swarm
// varies the kinds and faults it keeps; coverage counts what the counted runs did.
#include "src/search/explore.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/src/search/looks_apart.h"

namespace racesim::search {
namespace {

using ::testing::HasSubstr;

// Rank 1 looks, yields, and looks again; it fails if rank 0 ran all 8 of its steps in between
// (`split`, looks_apart.h), or, in `either`, also if rank 0 had not started at all by then.
const std::string kScenario = test::looks_apart(2, 8, R"(  either:
    look:
      - sleep: 0s
      - if:
          marked: m1
          then: []
          else:
            - sleep: 0s
            - if: {marked: m8, then: [{fail: "8 steps between the looks"}], else: [{if: {marked: m1, then: [], else: [{fail: "no step at all"}]}}]}
  atomic:
    look: [{wait: m1}]
faults:
  - {kind: straggler, name: slow, on: 0, factor: 2}
)");

std::unique_ptr<scenario::Study> study(const std::string& strategy) { return test::compile_text(kScenario, {strategy}); }

TEST(ExploreTest, PctFindsAScheduleBugAndTheFindingReplaysToItsRun) {
  auto s = study("split");
  ASSERT_TRUE(s);
  const auto& program = *s->programs[0];
  ExploreOptions o;
  o.mode = *Mode::parse("pct:2");
  o.budget_runs = 2000;
  const ExploreResult r = explore(program, o);
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.record.check, "fail");
  EXPECT_THAT(f.record.diagnosis, HasSubstr("8 steps between the looks"));
  EXPECT_EQ(r.coverage.runs, f.run + 1);  // counted up to the first failure
  EXPECT_GT(r.coverage.choices[static_cast<std::size_t>(kernel::ChoiceKind::kSchedule)], 0u);
  EXPECT_GT(r.coverage.steps_hint, 10u);
  ASSERT_FALSE(f.record.tape.empty());
  run::RunOptions replay;
  replay.policy = kernel::PolicySpec::replay(f.record.tape);
  replay.disarmed_faults = f.options.disarmed_faults;
  const run::RunRecord again = run::run_one(program, f.record.seed, replay);
  EXPECT_EQ(again.trace_hash, f.record.trace_hash);
  EXPECT_EQ(again.replay_divergence, "");
  EXPECT_EQ(again.diagnosis, f.record.diagnosis);
}

TEST(ExploreTest, FindingsAndCoverageDoNotDependOnTheThreads) {
  auto s = study("either");
  ASSERT_TRUE(s);
  for (const char* mode : {"random", "pct:3", "swarm"}) {
    ExploreOptions o;
    o.mode = *Mode::parse(mode);
    o.budget_runs = 300;
    o.all = true;
    o.jobs = 1;
    const ExploreResult one = explore(*s->programs[0], o);
    o.jobs = 3;
    const ExploreResult three = explore(*s->programs[0], o);
    EXPECT_EQ(one.coverage.runs, 300u) << mode;
    EXPECT_EQ(one.coverage.runs, three.coverage.runs) << mode;
    EXPECT_EQ(one.coverage.distinct_schedules, three.coverage.distinct_schedules) << mode;
    EXPECT_EQ(one.coverage.choices, three.coverage.choices) << mode;
    ASSERT_EQ(one.findings.size(), three.findings.size()) << mode;
    for (std::size_t i = 0; i < one.findings.size(); ++i) {
      EXPECT_EQ(one.findings[i].run, three.findings[i].run) << mode;
      EXPECT_EQ(one.findings[i].record.trace_hash, three.findings[i].record.trace_hash) << mode;
    }
  }
}

TEST(ExploreTest, AllKeepsOneRunPerDistinctFailure) {
  auto s = study("either");
  ASSERT_TRUE(s);
  ExploreOptions o;
  o.mode = *Mode::parse("random");
  o.budget_runs = 400;
  o.all = true;
  const ExploreResult r = explore(*s->programs[0], o);
  // Rank 0 not started after two looks is common under random; both kinds show in 400 runs.
  std::set<std::string> signatures;
  for (const Finding& f : r.findings) signatures.insert(f.signature);
  EXPECT_EQ(signatures.size(), r.findings.size());
  EXPECT_TRUE(signatures.count("fail: rank #: no step at all (looks_apart.yaml:#:#)")) << r.findings.size();
  for (std::size_t i = 1; i < r.findings.size(); ++i) EXPECT_LT(r.findings[i - 1].run, r.findings[i].run);
}

TEST(ExploreTest, AFixThatHoldsIsReportedWithItsCoverage) {
  auto s = study("atomic");
  ASSERT_TRUE(s);
  ExploreOptions o;
  o.mode = *Mode::parse("pct:2");
  o.budget_runs = 500;
  const ExploreResult r = explore(*s->programs[0], o);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.coverage.runs, 500u);
  EXPECT_GT(r.coverage.distinct_schedules, 1u);
  EXPECT_FALSE(r.coverage.stopped_by_time);
}

TEST(ExploreTest, SwarmVariesTheKindsAndFaultsEachRunKeeps) {
  auto s = study("split");
  ASSERT_TRUE(s);
  const auto& program = *s->programs[0];
  ASSERT_EQ(program.faults.size(), 1u);
  ExploreOptions o;
  o.mode = *Mode::parse("swarm");
  std::set<kernel::ChoiceKinds> masks;
  int disarmed = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const run::RunOptions a = run_options(program, o, 0, i);
    EXPECT_NE(a.policy.kinds, 0) << i;
    EXPECT_TRUE(a.record_choices);
    masks.insert(a.policy.kinds);
    ASSERT_EQ(a.disarmed_faults.size(), 1u);
    disarmed += a.disarmed_faults[0];
    // The same run gets the same options.
    EXPECT_EQ(run_options(program, o, 0, i).policy.kinds, a.policy.kinds);
  }
  EXPECT_GE(masks.size(), 5u);
  EXPECT_GT(disarmed, 50);
  EXPECT_LT(disarmed, 150);
  // A disarmed fault is never active: its counter is 0 where the armed one counts its rank.
  run::RunOptions armed, off;
  off.disarmed_faults = {1};
  EXPECT_EQ(run::run_one(program, 0, armed).metrics.at("faults.slow"), 1);
  EXPECT_EQ(run::run_one(program, 0, off).metrics.at("faults.slow"), 0);
}

// A fault that may or may not strike is armed by a choice on the tape whose first option is the
// seed's draw: flipping it arms (or disarms) that fault at that rank and nothing else.
TEST(ExploreTest, WhetherAFaultIsArmedIsAChoiceWhoseFirstOptionIsTheSeedsDraw) {
  auto s = test::compile_text(test::looks_apart(4, 3, R"(faults:
  - {kind: straggler, name: maybe, probability: 0.5, factor: 2}
  - {kind: straggler, name: always, factor: 2}
)"));
  ASSERT_TRUE(s);
  const auto& program = *s->programs[0];
  run::RunOptions recorded;
  recorded.record_choices = true;
  const run::RunRecord r = run::run_one(program, 7, recorded);
  std::vector<std::size_t> faults;  // positions of the fault choices: one per rank of `maybe`
  for (std::size_t i = 0; i < r.tape.size(); ++i) {
    if (r.tape[i].kind == kernel::ChoiceKind::kFault) faults.push_back(i);
  }
  ASSERT_EQ(faults.size(), 4u);  // `always` (probability 1) is no choice
  const double armed = r.metrics.at("faults.maybe");
  EXPECT_EQ(r.metrics.at("faults.always"), 4);
  EXPECT_EQ(run::run_one(program, 7, {}).metrics.at("faults.maybe"), armed);  // the same as fifo's
  for (std::size_t i : faults) EXPECT_EQ(r.tape[i].value, 0u);
  std::vector<kernel::Choice> flipped = r.tape;
  flipped[faults[2]].value = 1;
  run::RunOptions replay;
  replay.policy = kernel::PolicySpec::prefix(flipped);
  const double after = run::run_one(program, 7, replay).metrics.at("faults.maybe");
  EXPECT_EQ(std::abs(after - armed), 1);
  // Random and pct leave fault arming to the seed; swarm may decide it.
  EXPECT_FALSE(kernel::contains(kernel::PolicySpec::random().kinds, kernel::ChoiceKind::kFault));
}

// Seed 3 of `program` with its tape, which holds draws only, as many as `draws`.
run::RunRecord draws_recorded(const scenario::CompiledProgram& program, std::size_t draws) {
  run::RunOptions recorded;
  recorded.record_choices = true;
  run::RunRecord r = run::run_one(program, 3, recorded);
  EXPECT_EQ(r.tape.size(), draws);
  for (const kernel::Choice& c : r.tape) {
    EXPECT_EQ(c.kind, kernel::ChoiceKind::kDraw);
    EXPECT_EQ(c.options, kernel::kDrawOptions);
  }
  EXPECT_EQ(r.makespan, run::run_one(program, 3, {}).makespan);  // option 0 everywhere: the seed's
  return r;
}

// A step's draw is a choice too: the seed's value first, then the distribution's low end, median
// and high end.
TEST(ExploreTest, ADrawIsAChoiceOfTheSeedsValueOrTheDistributionsLowMedianAndHigh) {
  auto s = test::compile_text(R"(name: d
ranks: 1
program: [{compute: {uniform: {min: 1s, max: 3s}}}, {compute: 5s}]
strategies: {only: {}}
)");
  ASSERT_TRUE(s);
  const auto& program = *s->programs[0];
  draws_recorded(program, 1);  // the constant 5s is no choice
  const kernel::Time expected[] = {0, 6 * kernel::kSecond, 7 * kernel::kSecond, 8 * kernel::kSecond};
  for (std::uint64_t v = 1; v < kernel::kDrawOptions; ++v) {
    run::RunOptions o;
    o.policy = kernel::PolicySpec::prefix({{kernel::ChoiceKind::kDraw, kernel::kDrawOptions, v}});
    EXPECT_EQ(run::run_one(program, 3, o).makespan, expected[v]) << v;
  }
}

// Every draw is on the tape: one inside an expression (each draw of the param it uses, the
// expression itself none) and a `chance` branch (low end: else, high end: then).
TEST(ExploreTest, ADrawInsideAnExpressionAndAChanceBranchAreDrawChoicesToo) {
  auto s = test::compile_text(R"(name: d
ranks: 1
params:
  t: {uniform: {min: 1s, max: 3s}}
program:
  - compute: "${t * 2}"
  - if: {chance: 0.5, then: [{compute: 100s}]}
strategies: {only: {}}
)");
  ASSERT_TRUE(s);
  const auto& program = *s->programs[0];
  draws_recorded(program, 2);
  auto makespan = [&](std::uint64_t t, std::uint64_t chance) {
    run::RunOptions o;
    o.policy = kernel::PolicySpec::replay({{kernel::ChoiceKind::kDraw, kernel::kDrawOptions, t},
                                           {kernel::ChoiceKind::kDraw, kernel::kDrawOptions, chance}});
    const run::RunRecord x = run::run_one(program, 3, o);
    EXPECT_EQ(x.replay_divergence, "");
    return x.makespan;
  };
  EXPECT_EQ(makespan(1, 1), 2 * kernel::kSecond);    // t's low end, doubled; the else branch
  EXPECT_EQ(makespan(3, 1), 6 * kernel::kSecond);    // t's high end
  EXPECT_EQ(makespan(2, 3), 104 * kernel::kSecond);  // t's median; the then branch
}

TEST(ExploreTest, ModesParseAndBadOnesSayWhatWasExpected) {
  EXPECT_EQ(Mode::parse("pct")->depth, 3);
  EXPECT_EQ(Mode::parse("pct:5")->to_string(), "pct:5");
  EXPECT_EQ(Mode::parse("swarm")->kind, ModeKind::kSwarm);
  EXPECT_THAT(Mode::parse("pct:65").message(), HasSubstr("from 1 to 64"));
  EXPECT_THAT(Mode::parse("pct:x").message(), HasSubstr("from 1 to 64, got 'x'"));
  EXPECT_THAT(Mode::parse("dfs").message(), HasSubstr("expected a mode: random, pct, pct:DEPTH, swarm, exhaustive"));
  EXPECT_EQ(Mode::parse("exhaustive")->depth, 2);
  EXPECT_EQ(Mode::parse("exhaustive:0")->to_string(), "exhaustive:0");
  EXPECT_THAT(Mode::parse("exhaustive:-1").message(), HasSubstr("delay bound must be a whole number from 0 to 64"));
}

TEST(ExploreTest, TheSignatureLeavesNumbersOut) {
  run::RunRecord r;
  r.check = "model_loads_intact";
  r.diagnosis = "rank 3 loaded /cache/m1.om at 41.3 s (f.yaml:84:25)";
  EXPECT_EQ(failure_signature(r), "model_loads_intact: rank # loaded /cache/m#.om at #.# s (f.yaml:#:#)");
}

}  // namespace
}  // namespace racesim::search
