#include "src/scenario/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/scenario/program.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

const char* kGood = R"(name: ok
ranks: 4
seeds: 10
limits: {time: 1h, events: 1000}
params:
  t: {lognormal: {median: 40s, sigma: 0.25}}
  n: 3
program:
  - compute: ${t}
  - slot: publish
  - {mark: "done_${rank}", on: others}
strategies:
  a:
    summary: first
    publish: [{sleep: 1s}]
  b:
    publish: [{repeat: {times: "${n}", do: [{sleep: 1s}]}}]
checks: [no_deadlock, no_timeout]
expect:
  a: {never_fails: true}
  b: {failure_rate: {min: 0, max: 0.5}}
)";

// Loads `text` (as s.yaml) and returns all error text ("" if it loaded).
std::string errors_of(const std::string& text) {
  Diagnostics d;
  auto sc = load_scenario_text(text, "s.yaml", d);
  if (sc) {
    for (const auto& st : sc->strategies) compile_program(*sc, st, d);
  }
  return d.to_string();
}

TEST(ScenarioTest, LoadsAWellFormedScenario) {
  Diagnostics d;
  auto sc = load_scenario_text(kGood, "s.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  EXPECT_EQ(sc->name, "ok");
  EXPECT_EQ(sc->ranks, 4);
  EXPECT_EQ(sc->seeds, 10);
  EXPECT_EQ(sc->limits.time, kernel::kHour);
  EXPECT_EQ(sc->limits.events, 1000u);
  ASSERT_EQ(sc->strategies.size(), 2u);
  EXPECT_EQ(sc->strategies[0].summary, "first");
  EXPECT_EQ(sc->slot_names, std::vector<std::string>{"publish"});
  EXPECT_EQ(sc->params.at("t").value.kind, Distribution::Kind::kLognormal);
  ASSERT_EQ(sc->expect.size(), 2u);
  EXPECT_EQ(*sc->expect[1].failure_rate_max, 0.5);
  for (const auto& st : sc->strategies) EXPECT_TRUE(compile_program(*sc, st, d)) << d.to_string();
}

TEST(ScenarioTest, InvalidYamlNamesTheLineAndColumn) {
  EXPECT_THAT(errors_of("name: x\nranks: [1, 2\n"), HasSubstr("s.yaml:3:1: error: invalid YAML"));
}

TEST(ScenarioTest, UnknownTopLevelKeyListsTheKnownOnes) {
  std::string t = kGood;
  t += "rnaks: 3\n";
  EXPECT_THAT(errors_of(t), HasSubstr("s.yaml:22:1: error: unknown key 'rnaks' in the scenario "
                                      "(expected one of: name, summary, source, ranks"));
}

TEST(ScenarioTest, MissingSectionsAndWrongTypes) {
  const std::string e = errors_of("name: x\nranks: many\n");
  EXPECT_THAT(e, HasSubstr("s.yaml:2:8: error: ranks: expected a whole number from 1 to 100000, got 'many'"));
  EXPECT_THAT(e, HasSubstr("missing required section 'program'"));
  EXPECT_THAT(e, HasSubstr("missing required section 'strategies'"));
}

TEST(ScenarioTest, WrongUnitInAParamNamesBothUnits) {
  std::string t = kGood;
  t.replace(t.find("sigma: 0.25"), 11, "sigma: 0.25s");
  const std::string e = errors_of(t);
  EXPECT_THAT(e, HasSubstr("s.yaml:6:39: error: lognormal sigma: expected a number like 0.25, got '0.25s' (a duration)"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("undefined")));  // no cascade
}

TEST(ScenarioTest, UndefinedReferenceListsWhatIsKnown) {
  std::string t = kGood;
  t.replace(t.find("compute: ${t}"), 13, "compute: ${tt}");
  EXPECT_THAT(errors_of(t), HasSubstr("s.yaml:9:14: error: undefined '${tt}' (known: rank, world, n, t)"));
}

TEST(ScenarioTest, SlotWithoutBindingAndBindingWithoutSlot) {
  std::string t = kGood;
  t.replace(t.find("    publish: [{sleep: 1s}]"), 26, "    pubish: [{sleep: 1s}]");
  const std::string e = errors_of(t);
  EXPECT_THAT(e, HasSubstr("s.yaml:15:5: error: strategy 'a' binds 'pubish', which the program has no slot for (slots: publish)"));
  EXPECT_THAT(e, HasSubstr("s.yaml:13:3: error: strategy 'a' has no binding for slot 'publish'"));
}

TEST(ScenarioTest, UnknownPrimitiveAndTwoPrimitivesInOneStep) {
  std::string t = kGood;
  t.replace(t.find("  - compute: ${t}"), 17, "  - comptue: ${t}\n  - {sleep: 1s, mark: x}");
  const std::string e = errors_of(t);
  EXPECT_THAT(e, HasSubstr("s.yaml:9:5: error: unknown primitive 'comptue' (known: compute, fail, if, join, mark"));
  EXPECT_THAT(e, HasSubstr("s.yaml:10:17: error: a step has one primitive, but 'sleep' and 'mark' are both here"));
}

TEST(ScenarioTest, RankSelectorOutOfRange) {
  std::string t = kGood;
  t.replace(t.find("on: others"), 10, "on: [1, 7]");
  EXPECT_THAT(errors_of(t), HasSubstr("s.yaml:11:36: error: rank 7 is out of range (ranks are 0 to 3)"));
}

TEST(ScenarioTest, PrimitiveArgumentErrorsAreLocated) {
  std::string t = kGood;
  t.replace(t.find("{sleep: 1s}]\n  b:"), 11, "{sleep: 1MiB}");
  EXPECT_THAT(errors_of(t), HasSubstr("s.yaml:15:23: error: sleep: value: expected a duration like '200ms', got '1MiB' (a size in bytes)"));
  std::string u = kGood;
  u.replace(u.find("times: \"${n}\""), 13, "times: \"${t}\"");
  EXPECT_THAT(errors_of(u), HasSubstr("repeat times: param 't' is a duration (lognormal(median 40s, sigma 0.25)), expected a count like 8"));
}

TEST(ScenarioTest, ChecksExpectationsAndUnsupportedSections) {
  std::string t = kGood;
  t.replace(t.find("no_timeout]"), 11, "no_timeuot]");
  t.replace(t.find("  a: {never_fails: true}"), 24, "  c: {never_fails: true}");
  t += "sweep: {params.n: [1, 2]}\n";
  const std::string e = errors_of(t);
  EXPECT_THAT(e, HasSubstr("s.yaml:18:23: error: unknown check 'no_timeuot'"));
  EXPECT_THAT(e, HasSubstr("s.yaml:20:3: error: expect names strategy 'c', which is not defined"));
  EXPECT_THAT(e, HasSubstr("section 'sweep' is part of the scenario format but not supported"));
}

// `text` with the first `from` replaced by `to`.
std::string with(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

TEST(ScenarioTest, ParsesMetricChecksAndExpectations) {
  std::string t = with(kGood, "checks: [no_deadlock, no_timeout]",
                       "checks: [no_deadlock, {metric: done_1_s, max: 60}]");
  t = with(t, "  a: {never_fails: true}",
           "  a: {never_fails: true, metric: {name: makespan_s, stat: p99, max: 100}}");
  Diagnostics d;
  auto sc = load_scenario_text(t, "s.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  ASSERT_EQ(sc->metric_checks.size(), 1u);
  EXPECT_EQ(sc->metric_checks[0].metric, "done_1_s");
  EXPECT_EQ(*sc->metric_checks[0].max, 60.0);
  ASSERT_EQ(sc->expect[0].metrics.size(), 1u);
  EXPECT_EQ(sc->expect[0].metrics[0].stat, "p99");
  const std::string bad = with(kGood, "  a: {never_fails: true}", "  a: {metric: {name: m, stat: p95}}");
  EXPECT_THAT(errors_of(bad), HasSubstr("stat: expected p50, p90, p99, max or mean, got 'p95'"));
  EXPECT_THAT(errors_of(bad), HasSubstr("metric: needs min and/or max"));
}

TEST(ScenarioTest, ReportsSeveralErrorsAtOnce) {
  Diagnostics d;
  load_scenario_text("name: [x]\nranks: 0\nseeds: -1\nprogram: {}\nstrategies: []\n", "s.yaml", d);
  EXPECT_GE(d.count(), 5u) << d.to_string();
}

TEST(ScenarioTest, OverridesReplaceValuesAndReportMistakes) {
  Diagnostics d;
  auto sc = load_scenario_text(kGood, "s.yaml", d);
  ASSERT_TRUE(sc);
  EXPECT_TRUE(apply_override(*sc, "ranks=16", d));
  EXPECT_TRUE(apply_override(*sc, "seeds=7", d));
  EXPECT_TRUE(apply_override(*sc, "limits.time=2h", d));
  EXPECT_TRUE(apply_override(*sc, "params.t={uniform: {min: 1s, max: 2s}}", d));
  EXPECT_TRUE(d.ok()) << d.to_string();
  EXPECT_EQ(sc->ranks, 16);
  EXPECT_EQ(sc->seeds, 7);
  EXPECT_EQ(sc->limits.time, 2 * kernel::kHour);
  EXPECT_EQ(sc->params.at("t").value.kind, Distribution::Kind::kUniform);
  EXPECT_FALSE(apply_override(*sc, "limits.time=soon", d));
  EXPECT_FALSE(apply_override(*sc, "params.t={gamma: 1}", d));
  EXPECT_FALSE(apply_override(*sc, "=3", d));
  EXPECT_THAT(d.to_string(), HasSubstr("--set limits.time: error: limits.time: expected a positive duration"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set params.t: error: unknown distribution 'gamma'"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set =3: error: expected KEY=VALUE"));
}

TEST(ScenarioTest, RankSelectors) {
  Diagnostics d;
  auto sel = [&](const char* y) { return parse_rank_selector(YAML::Load(y), 8, "s.yaml", d); };
  EXPECT_TRUE(sel("all")->contains(7));
  EXPECT_TRUE(sel("rank0")->contains(0));
  EXPECT_FALSE(sel("rank0")->contains(1));
  EXPECT_FALSE(sel("others")->contains(0));
  EXPECT_TRUE(sel("others")->contains(7));
  EXPECT_TRUE(sel("2-4")->contains(3));
  EXPECT_FALSE(sel("2-4")->contains(5));
  EXPECT_TRUE(sel("[1, 5]")->contains(5));
  auto every = sel("{every: 2, offset: 1}");
  EXPECT_TRUE(every->contains(3));
  EXPECT_FALSE(every->contains(4));
  EXPECT_TRUE(d.ok()) << d.to_string();
  EXPECT_FALSE(sel("4-2"));
  EXPECT_FALSE(sel("[]"));
  EXPECT_FALSE(sel("{every: 0}"));
  EXPECT_FALSE(d.ok());
}

}  // namespace
}  // namespace racesim::scenario
