#include "src/scenario/language/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "src/scenario/compile/compiler.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/pipeline/study.h"
#include "src/scenario/language/assignment.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/language/expectations.h"
#include "src/scenario/language/sweep.h"

namespace racesim::scenario {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

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
  EXPECT_THAT(e, HasSubstr("s.yaml:2:8: error: ranks: expected a whole number from 1 to 10000000, got 'many'"));
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
  EXPECT_THAT(errors_of(t), HasSubstr("s.yaml:9:14: error: compute: ${tt}: unknown name 'tt' (known: n, t, rank, world, node, "
                                      "local_rank, ranks_per_node, nodes)"));
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
  EXPECT_THAT(e, HasSubstr("s.yaml:9:5: error: unknown primitive 'comptue' (did you mean 'compute'? known: append, barrier, broadcast_metadata"));
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

TEST(ScenarioTest, ChecksAndExpectationsNameWhatIsWrong) {
  std::string t = kGood;
  t.replace(t.find("no_timeout]"), 11, "no_timeuot]");
  t.replace(t.find("  a: {never_fails: true}"), 24, "  c: {never_fails: true}");
  const std::string e = errors_of(t);
  EXPECT_THAT(e, HasSubstr("s.yaml:18:23: error: unknown check 'no_timeuot'"));
  EXPECT_THAT(e, HasSubstr("s.yaml:20:3: error: expect names strategy 'c', which is not defined (strategies: a, b)"));
  // A misspelt strategy gets the nearest name, in expect, ratio_to and --strategy alike.
  std::string near = kGood;
  const std::string first = "strategies:\n  a:";
  near.replace(near.find(first), first.size(), "strategies:\n  atomic:");
  near.replace(near.find("  a: {never_fails: true}"), 24, "  atomc: {never_fails: true}");
  EXPECT_THAT(errors_of(near), HasSubstr("expect names strategy 'atomc', which is not defined (did you mean 'atomic'? "
                                         "strategies: atomic, b)"));
  Diagnostics d;
  EXPECT_FALSE(compile_study({.path = "s.yaml", .text = std::string(kGood), .strategies = {"bb"}}, d));
  EXPECT_THAT(d.to_string(), HasSubstr("--strategy 'bb' is not defined (did you mean 'b'? strategies: a, b)"));
}

// `text` with the first `from` replaced by `to`.
std::string with(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

// kGood plus `tail` (sections appended at the end).
std::optional<Scenario> good_with(const std::string& tail, Diagnostics& d) {
  return load_scenario_text(std::string(kGood) + tail, "s.yaml", d);
}

TEST(ScenarioTest, SweepExpandsToTheProductOfItsAxesFirstAxisSlowest) {
  Diagnostics d;
  auto sc = good_with("sweep:\n  params.n: [1, 2]\n  params.t: [1s, {uniform: {min: 1s, max: 2s}}]\n", d);
  ASSERT_TRUE(sc) << d.to_string();
  const auto points = sweep_points(*sc);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].label, "params.n=1 params.t=1s");
  EXPECT_EQ(points[1].label, "params.n=1 params.t={uniform: {min: 1s, max: 2s}}");
  EXPECT_EQ(points[3].label, "params.n=2 params.t={uniform: {min: 1s, max: 2s}}");
  auto at = at_point(*sc, points[3], d);
  ASSERT_TRUE(at) << d.to_string();
  EXPECT_EQ(at->params.at("n").value.a, 2);
  EXPECT_EQ(at->params.at("t").value.kind, Distribution::Kind::kUniform);
  EXPECT_EQ(at->point, points[3].label);
  EXPECT_EQ(sc->params.at("n").value.a, 3) << "the base scenario is left as it was";
  // Without a sweep there is one point, with no label.
  Diagnostics d2;
  auto plain = load_scenario_text(kGood, "s.yaml", d2);
  ASSERT_EQ(sweep_points(*plain).size(), 1u);
  EXPECT_EQ(sweep_points(*plain)[0].label, "");
}

TEST(ScenarioTest, PointsAreChosenByLabelOrByAxisFilters) {
  const std::string text = std::string(kGood) + "sweep:\n  params.n: [1, 2]\n  params.t: [1s, {uniform: {min: 1s, max: 2s}}]\n";
  auto chosen = [&](std::vector<std::string> points) {
    Diagnostics d;
    auto study = compile_study({.path = "s.yaml", .text = text, .points = std::move(points)}, d);
    std::vector<std::string> labels;
    if (study) {
      for (const auto& p : study->points) labels.push_back(p->point);
    } else {
      labels.push_back(d.to_string());
    }
    return labels;
  };
  EXPECT_EQ(chosen({"params.n=2"}), (std::vector<std::string>{"params.n=2 params.t=1s",
                                                              "params.n=2 params.t={uniform: {min: 1s, max: 2s}}"}));
  // A value with spaces is a filter too; filters combine; a whole label is taken as it is.
  EXPECT_EQ(chosen({"params.t={uniform: {min: 1s, max: 2s}}", "params.n=1"}),
            (std::vector<std::string>{"params.n=1 params.t={uniform: {min: 1s, max: 2s}}"}));
  EXPECT_EQ(chosen({"params.n=1 params.t=1s"}), (std::vector<std::string>{"params.n=1 params.t=1s"}));
  EXPECT_THAT(chosen({"params.n=3"})[0], HasSubstr("'3' is not a value of sweep axis 'params.n' (values: 1, 2)"));
  EXPECT_THAT(chosen({"params.m=1"})[0], HasSubstr("nor an axis filter KEY=VALUE (axes: params.n, params.t)"));
}

TEST(ScenarioTest, SweepValuesAreCheckedWhereTheyAreWritten) {
  std::string e = errors_of(std::string(kGood) + "sweep:\n  params.nope: [1]\n  params.t: [soon, 1s, 1s]\n  seeds: [1]\n");
  EXPECT_THAT(e, HasSubstr("s.yaml:23:17: error: no param 'nope' in the scenario (params: n, t)"));
  EXPECT_THAT(e, HasSubstr("s.yaml:24:14: error: value: expected a quantity"));
  EXPECT_THAT(e, HasSubstr("s.yaml:24:24: error: sweep.params.t: '1s' is listed twice"));
  EXPECT_THAT(e, HasSubstr("s.yaml:25:3: error: sweep: 'seeds' cannot be an axis"));
  EXPECT_THAT(errors_of(std::string(kGood) + "sweep: [1]\n"), HasSubstr("s.yaml:22:8: error: sweep: expected a map"));
}

TEST(ScenarioTest, ExpectationsAtSweepPoints) {
  std::string t = with(kGood, "  a: {never_fails: true}",
                       "  a:\n    - {never_fails: true, at: {params.n: 2}}\n    - {fails: true, at: {params.n: 1}}");
  Diagnostics d;
  auto sc = load_scenario_text(t + "sweep: {params.n: [1, 2]}\n", "s.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  ASSERT_EQ(sc->expect.size(), 3u);
  const auto points = sweep_points(*sc);
  EXPECT_FALSE(applies_at(sc->expect[0], points[0].values));
  EXPECT_TRUE(applies_at(sc->expect[0], points[1].values));
  EXPECT_TRUE(applies_at(sc->expect[1], points[0].values));
  EXPECT_TRUE(applies_at(sc->expect[2], points[0].values)) << "no 'at': every point";
  const std::string bad = with(t, "at: {params.n: 2}", "at: {params.n: 3}");
  EXPECT_THAT(errors_of(bad + "sweep: {params.n: [1, 2]}\n"),
              HasSubstr("s.yaml:21:42: error: at: '3' is not a value of sweep axis 'params.n' (values: 1, 2)"));
  EXPECT_THAT(errors_of(t), HasSubstr("at: 'params.n' is not a sweep axis (axes: none)"));
  EXPECT_THAT(errors_of(with(kGood, "  a: {never_fails: true}", "  a: {at: {}}")),
              HasSubstr("at: expected a map of sweep axis: value"));
}

TEST(ScenarioTest, FaultsAreParsedAndCheckedAgainstTheirKind) {
  Diagnostics d;
  auto sc = good_with("faults:\n  - {kind: straggler, on: rank0, probability: 0.5, factor: 3}\n"
                      "  - {kind: crash, name: late_crash, at: 10s}\n", d);
  ASSERT_TRUE(sc) << d.to_string();
  ASSERT_EQ(sc->faults.size(), 2u);
  EXPECT_EQ(sc->faults[0].name, "straggler");
  EXPECT_EQ(sc->faults[0].probability, 0.5);
  EXPECT_EQ(sc->faults[1].name, "late_crash");
  auto p = compile_program(*sc, sc->strategies[0], d);
  ASSERT_TRUE(p) << d.to_string();
  ASSERT_EQ(p->faults.size(), 2u);
  EXPECT_TRUE(p->faults[0].on.contains(0));
  EXPECT_FALSE(p->faults[0].on.contains(1));
  EXPECT_EQ(p->faults[0].args.at("factor").a, 3);
  EXPECT_EQ(p->faults[1].args.at("at").a, 10e9);
  const std::string e = errors_of(std::string(kGood) +
                                  "faults:\n  - {kind: straggle}\n  - {kind: straggler, factr: 2, probability: 2}\n"
                                  "  - {kind: crash}\n  - {kind: crash, at: 5GiB}\n  - 7\n");
  EXPECT_THAT(e, HasSubstr("s.yaml:24:46: error: probability: expected a number from 0 to 1"));
  EXPECT_THAT(e, HasSubstr("s.yaml:26:5: error: two faults are named 'crash' (the first at s.yaml:25:5;"));
  EXPECT_THAT(e, HasSubstr("s.yaml:27:5: error: a fault: expected a map with 'kind'"));
  Diagnostics d2;
  auto sc2 = good_with("faults:\n  - {kind: straggler, factr: 2}\n  - {kind: crash}\n  - {kind: crash, name: c2, at: 5GiB}\n  - {kind: straggle}\n", d2);
  ASSERT_TRUE(sc2) << d2.to_string();
  EXPECT_FALSE(compile_program(*sc2, sc2->strategies[0], d2));
  EXPECT_THAT(d2.to_string(), HasSubstr("s.yaml:23:23: error: fault 'straggler' (straggler): unknown key 'factr'"));
  EXPECT_THAT(d2.to_string(), HasSubstr("s.yaml:24:5: error: fault 'crash' (crash): missing 'at' (a duration)"));
  EXPECT_THAT(d2.to_string(), HasSubstr("s.yaml:25:33: error: c2.at: value: expected a duration"));
  EXPECT_THAT(d2.to_string(), Not(HasSubstr("fault 'c2' (crash): missing")));
  EXPECT_THAT(d2.to_string(), HasSubstr("s.yaml:26:5: error: unknown fault kind 'straggle' (known: crash, eio, enospc, latency_spike, slow_link, slow_storage, straggler, writer_stall"));
}

TEST(ScenarioTest, MetricDefinitions) {
  Diagnostics d;
  auto sc = good_with("metrics:\n  done_p50: {of: done_s, stat: p50}\n", d);
  ASSERT_TRUE(sc) << d.to_string();
  ASSERT_EQ(sc->metric_defs.size(), 1u);
  EXPECT_EQ(sc->metric_defs[0].of, "done_s");
  EXPECT_THAT(errors_of(std::string(kGood) + "metrics:\n  x: {of: y, stat: p95}\n  z: 3\n"),
              AllOf(HasSubstr("s.yaml:23:20: error: stat: expected min, max, mean, sum, count, p50, p90 or p99, got 'p95'"),
                    HasSubstr("s.yaml:24:6: error: metric 'z': expected {of: SERIES, stat:")));
}

TEST(ScenarioTest, OverridesReachPlatformAndFaults) {
  Diagnostics d;
  auto sc = good_with("platform:\n  storage: {kind: nfs, latency: 1ms}\nfaults: [{kind: straggler, name: slow}]\n", d);
  ASSERT_TRUE(sc) << d.to_string();
  EXPECT_TRUE(apply_override(*sc, "platform.storage.kind=local", d));
  EXPECT_TRUE(apply_override(*sc, "faults.slow.probability=0.25", d));
  EXPECT_TRUE(apply_override(*sc, "faults.slow.on=[1, 2]", d));
  EXPECT_TRUE(apply_override(*sc, "faults.slow.factor=4", d));
  EXPECT_TRUE(d.ok()) << d.to_string();
  EXPECT_EQ(sc->platform["storage"]["kind"].scalar(), "local");
  EXPECT_EQ(sc->faults[0].probability, 0.25);
  EXPECT_EQ(sc->faults[0].arg("factor").scalar(), "4");
  EXPECT_EQ(to_string(sc->where("faults.slow.factor", sc->faults[0].arg("factor"))), "--set faults.slow.factor");
  EXPECT_FALSE(apply_override(*sc, "platform.storage.knd=local", d));
  EXPECT_FALSE(apply_override(*sc, "platform.storage=local", d));
  EXPECT_FALSE(apply_override(*sc, "faults.fast.probability=1", d));
  EXPECT_FALSE(apply_override(*sc, "faults.slow.probability=7", d));
  EXPECT_THAT(d.to_string(), HasSubstr("--set platform.storage.knd: error: no value 'knd' in platform.storage (keys: kind, latency)"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set platform.storage: error: platform.storage is a map; set one of its values instead"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set faults.fast.probability: error: no fault named 'fast' (faults: slow)"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set faults.slow.probability: error: probability: expected a number from 0 to 1"));
  {
    // Changing a mount's kind drops the file's settings the new kind does not take, with a note
    // (a calibration of a local directory applied to an nfs mount); one an override set stays,
    // and the platform's parser refuses it.
    Diagnostics kind;
    auto nfs = good_with("platform:\n  storage:\n    c: {kind: nfs, mount: /c, acregmin: 3s, acdirmin: 30s}\n", kind);
    ASSERT_TRUE(nfs) << kind.to_string();
    EXPECT_TRUE(apply_override(*nfs, "platform.storage.c.kind=local", kind)) << kind.to_string();
    EXPECT_FALSE(nfs->platform["storage"]["c"]["acregmin"]);
    EXPECT_FALSE(nfs->platform["storage"]["c"]["acdirmin"]);
    EXPECT_EQ(nfs->platform["storage"]["c"]["mount"].scalar(), "/c");
    ASSERT_EQ(nfs->notes.size(), 1u);
    EXPECT_THAT(nfs->notes[0], HasSubstr("--set platform.storage.c.kind makes mount c local: its acregmin, acdirmin "
                                         "(settings a local mount does not take) are dropped"));
  }
  {
    // A section other than storage, and a key of one, may be added (a calibration's
    // platform.host.cores); the platform's parser checks them, naming the override.
    Diagnostics added;
    EXPECT_TRUE(apply_override(*sc, "platform.host.cores=8", added)) << added.to_string();
    EXPECT_TRUE(apply_override(*sc, "platform.host.sched_latency=24ms", added)) << added.to_string();
    EXPECT_EQ(sc->platform["host"]["cores"].scalar(), "8");
    EXPECT_EQ(sc->platform["host"]["sched_latency"].scalar(), "24ms");
    EXPECT_EQ(sc->platform["storage"]["kind"].scalar(), "local") << "the rest of the platform is kept";
  }
  {
    // `on` is resolved when the program is compiled.
    Diagnostics dc;
    auto plain = good_with("faults: [{kind: straggler, name: slow}]\n", dc);
    ASSERT_TRUE(plain && apply_override(*plain, "faults.slow.on=[1, 2]", dc)) << dc.to_string();
    auto p = compile_program(*plain, plain->strategies[0], dc);
    ASSERT_TRUE(p) << dc.to_string();
    EXPECT_TRUE(p->faults[0].on.contains(2));
    EXPECT_FALSE(p->faults[0].on.contains(0));
  }
  // A bad fault argument set on the command line is reported at the override when compiled.
  Diagnostics d2;
  ASSERT_TRUE(apply_override(*sc, "faults.slow.factor=3GiB", d2));
  EXPECT_FALSE(compile_program(*sc, sc->strategies[0], d2));
  EXPECT_THAT(d2.to_string(), HasSubstr("--set faults.slow.factor: error: slow.factor: "));
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
  EXPECT_THAT(d.to_string(), HasSubstr("--set limits.time: error: limits.time: expected a duration like '200ms' (number then unit), got 'soon'"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set params.t: error: unknown distribution 'gamma'"));
  EXPECT_THAT(d.to_string(), HasSubstr("--set =3: error: expected KEY=VALUE"));
}

TEST(ScenarioTest, RankSelectors) {
  Diagnostics d;
  auto sel = [&](const char* y) { return parse_rank_selector(Value::from_yaml(YAML::Load(y)), 8, "s.yaml", d); };
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

// A repeated fault name is one error per repeat, found with a set: a plan of 20,000 faults all
// named alike is 19,999 errors, not one per pair (200 million).
TEST(ScenarioTest, RepeatedFaultNamesAreOneErrorEachInLinearTime) {
  std::string faults = "faults:\n";
  for (int i = 0; i < 20000; ++i) faults += "  - {kind: crash, at: 1s}\n";
  Diagnostics d;
  good_with(faults, d);
  EXPECT_EQ(d.count(), 19999u);
}

}  // namespace
}  // namespace racesim::scenario
