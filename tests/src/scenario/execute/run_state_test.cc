// The run's state: model families' states created on first use and asked for metrics, releases
// and deadlock lines; hard and soft checks from the registry.
#include "src/scenario/execute/run_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/scenario/compile/compiler.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/language/platform.h"
#include "src/scenario/compile/registry.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// A model family's state that counts what the run asks of it.
struct CountingModel final : ModelState {
  explicit CountingModel(RunState& run) : world(run.world()) { ++created; }
  void metrics(std::map<std::string, double>& out) const override { out["counting.world"] = world; }
  void release(const kernel::Process*, int rank) override { released.push_back(rank); }
  void explain(std::vector<std::string>& lines) const override { lines.push_back("counting: here"); }
  int world;
  std::vector<int> released;
  static inline int created = 0;
};
struct OtherModel final : ModelState {
  explicit OtherModel(RunState& run) : counting(run.model<CountingModel>()) {}
  CountingModel& counting;
};

TEST(RunStateTest, AModelsStateIsCreatedOnFirstUseAndOnlyOnce) {
  kernel::Simulation sim;
  RunState run(sim, nullptr, 3);
  CountingModel::created = 0;
  EXPECT_TRUE(run.metrics({}).empty());
  EXPECT_TRUE(run.explain().empty());
  CountingModel& a = run.model<CountingModel>();
  CountingModel& b = run.model<CountingModel>();
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(CountingModel::created, 1);
  // A state may use another family's state; each is still created once.
  EXPECT_EQ(&run.model<OtherModel>().counting, &a);
  EXPECT_EQ(CountingModel::created, 1);
  EXPECT_EQ(run.metrics({}).at("counting.world"), 3);
  run.release(nullptr, 2);
  EXPECT_EQ(a.released, std::vector<int>{2});
  EXPECT_EQ(run.explain(), std::vector<std::string>{"counting: here"});
}

TEST(RunStateTest, ChecksComeFromTheRegistryHardOnesCannotBeTurnedOff) {
  const Registry& r = builtin_registry();
  for (const char* hard : {"no_deadlock", "no_errors", "fail"}) {
    ASSERT_NE(r.find_check(hard), nullptr) << hard;
    EXPECT_TRUE(r.find_check(hard)->hard) << hard;
  }
  for (const char* soft : {"no_timeout", "model_loads_intact", "no_io_errors", "shards_correct", "no_oom"}) {
    ASSERT_NE(r.find_check(soft), nullptr) << soft;
    EXPECT_FALSE(r.find_check(soft)->hard) << soft;
  }
  kernel::Simulation sim;
  RunState run(sim);
  const std::vector<std::string> only_deadlock = {"no_deadlock"};
  run.set_checks(&only_deadlock);
  EXPECT_TRUE(run.check_on("no_errors"));  // hard: on although not listed
  EXPECT_FALSE(run.check_on("no_io_errors"));
  EXPECT_FALSE(run.fail("no_io_errors", "x"));  // soft and off: counted, the run goes on
  EXPECT_EQ(run.metrics({}).at("ignored.no_io_errors"), 1);
  EXPECT_FALSE(run.failure());
  EXPECT_TRUE(run.fail("fail", "y"));
  ASSERT_TRUE(run.failure());
  EXPECT_EQ(run.failure()->check, "fail");
}

// A model that judges the whole run at its end.
struct JudgingModel final : ModelState {
  explicit JudgingModel(RunState&) {}
  std::optional<Failure> conclude() const override { return Failure{"steady_state", "never steady"}; }
};

TEST(RunStateTest, AModelsEndOfRunVerdictFailsTheRunWhenItsCheckIsOn) {
  kernel::Simulation sim;
  RunState on(sim);
  on.model<JudgingModel>();
  on.conclude();
  ASSERT_TRUE(on.failure());
  EXPECT_EQ(on.failure()->check, "steady_state");
  EXPECT_EQ(on.failure()->diagnosis, "never steady");
  kernel::Simulation sim2;
  RunState off(sim2);
  const std::vector<std::string> checks = {"no_deadlock"};
  off.set_checks(&checks);
  off.model<JudgingModel>();
  off.conclude();
  EXPECT_FALSE(off.failure());
  EXPECT_EQ(off.metrics({}).at("ignored.steady_state"), 1);
}

TEST(RunStateTest, AnUnknownCheckNameListsTheRegisteredOnes) {
  Diagnostics d;
  auto s = compile_study({.path = "t.yaml", .text = "name: t\nranks: 1\nchecks: [no_deadlok]\n"
                                                    "program: [{sleep: 1s}]\nstrategies: {only: }\n"},
                         d);
  EXPECT_FALSE(s);
  EXPECT_THAT(d.to_string(), HasSubstr("t.yaml:3:10: error: unknown check 'no_deadlok' (expected one of: elastic, fail, join, "
                                       "model_loads_intact, no_deadlock, no_errors, no_io_errors, no_oom, no_timeout, "
                                       "poll_until, recompile_limit, shards_correct, spawn, steady_state, wait, or {metric: NAME"));
}

}  // namespace
}  // namespace racesim::scenario

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// A family's own platform section: parsed by its function with located errors, read back typed.
struct Widget {
  double speed = 1;
};
std::any parse_widget(PlatformReader& r, const std::string& key, const Value& node) {
  Widget w;
  if (!node) return w;  // absent: the defaults
  r.fields(key, node, {{"speed", Unit::kNumber, 0, [&](double v) { w.speed = v; }}});
  return w;
}

TEST(PlatformSectionTest, AFamilysSectionIsParsedByItAndReadBackTyped) {
  Registry reg;
  register_families(reg);
  reg.add_section({"widget", "widget: {speed: NUMBER}", parse_widget});
  auto compile = [&](const std::string& platform, Diagnostics& d) {
    auto sc = load_scenario_text("name: t\nranks: 1\nplatform:\n" + platform + "program: [{sleep: 1s}]\nstrategies: {only: }\n",
                                 "t.yaml", d);
    EXPECT_TRUE(sc) << d.to_string();
    return compile_program(*sc, sc->strategies[0], d, reg);
  };
  Diagnostics d;
  auto p = compile("  widget: {speed: 3}\n", d);
  ASSERT_TRUE(p) << d.to_string();
  EXPECT_EQ(p->platform->section<Widget>("widget").speed, 3);
  Diagnostics d2;
  auto absent = compile("  ranks_per_node: 1\n", d2);
  ASSERT_TRUE(absent) << d2.to_string();
  EXPECT_EQ(absent->platform->section<Widget>("widget").speed, 1);
  Diagnostics d3;
  EXPECT_FALSE(compile("  widget: {sped: 3}\n  gadget: 1\n", d3));
  EXPECT_THAT(d3.to_string(), HasSubstr("t.yaml:4:12: error: unknown key 'sped' in platform.widget (expected one of: speed)"));
  EXPECT_THAT(d3.to_string(), HasSubstr("t.yaml:5:3: error: unknown key 'gadget' in platform (expected one of: ranks_per_node, storage, device, collective, mesh, model, elastic, host, widget)"));
}

}  // namespace
}  // namespace racesim::scenario
