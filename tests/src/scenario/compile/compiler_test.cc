// The compiler (compiler.h): one strategy at one point to steps, its slots bound, every step it
// compiled listed with its location, its declared counters, its faults resolved to ranks.
#include "src/scenario/compile/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/scenario/compile/registry.h"
#include "src/scenario/language/loader.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

Scenario load(const std::string& text) {
  Diagnostics d;
  auto sc = load_scenario_text(text, "c.yaml", d);
  EXPECT_TRUE(sc) << d.to_string();
  return sc ? *sc : Scenario{};
}

constexpr const char* kScenario = R"(name: c
ranks: 4
program:
  - compute: 1s
  - slot: publish
  - count: done
strategies:
  marks:
    publish: [{mark: {name: a, metric: true}}, {wait: a}]
  nothing:
    publish: []
faults:
  - {kind: straggler, name: slow, on: "1-2", probability: 0.5, factor: 3}
)";

TEST(CompilerTest, EachStepCompiledIsListedWithItsLocationAfterTheStepsInsideIt) {
  const Scenario sc = load(kScenario);
  Diagnostics d;
  auto p = compile_program(sc, sc.strategies.at(0), d);
  ASSERT_TRUE(p) << d.to_string();
  std::vector<std::string> names;
  for (const StepUse& u : p->uses) names.push_back(u.primitive->name + "@" + std::to_string(u.where.line));
  // A step is listed once it is compiled, after the steps inside it (a slot after its binding's).
  EXPECT_THAT(names, ::testing::ElementsAre("compute@4", "mark@9", "wait@9", "slot@5", "count@6"));
  EXPECT_EQ(p->strategy->name, "marks");
  EXPECT_EQ(p->scenario, &sc);
}

TEST(CompilerTest, AnEmptyBindingCompilesToNoSteps) {
  const Scenario sc = load(kScenario);
  Diagnostics d;
  auto p = compile_program(sc, sc.strategies.at(1), d);
  ASSERT_TRUE(p) << d.to_string();
  EXPECT_EQ(p->uses.size(), 3u) << "compute, slot, count";
}

TEST(CompilerTest, CountersAreDeclaredAndFaultsResolvedToTheirRanks) {
  const Scenario sc = load(kScenario);
  Diagnostics d;
  auto p = compile_program(sc, sc.strategies.at(0), d);
  ASSERT_TRUE(p) << d.to_string();
  EXPECT_TRUE(p->metric_names.knows("done")) << "a count step declares its counter";
  EXPECT_TRUE(p->metric_names.knows("a_s")) << "a mark records its time";
  ASSERT_EQ(p->faults.size(), 1u);
  EXPECT_EQ(p->faults[0].name, "slow");
  EXPECT_DOUBLE_EQ(p->faults[0].probability, 0.5);
  EXPECT_FALSE(p->faults[0].on.contains(0));
  EXPECT_TRUE(p->faults[0].on.contains(1));
  EXPECT_TRUE(p->faults[0].on.contains(2));
  EXPECT_FALSE(p->faults[0].on.contains(3));
}

TEST(CompilerTest, ABadArgumentIsReportedAtItsLineAndNothingIsReturned) {
  std::string text = kScenario;
  text.replace(text.find("{wait: a}"), 9, "{wait: {marked: a, timeout: soon}}");
  const Scenario sc = load(text);
  Diagnostics d;
  EXPECT_FALSE(compile_program(sc, sc.strategies.at(0), d));
  EXPECT_THAT(d.to_string(), HasSubstr("c.yaml:9:"));
  EXPECT_THAT(d.to_string(), HasSubstr("soon"));
}

// A primitive that reads a key its author left out gets a Value made by no line; whatever it
// reports about it is located at its step (inside a strategy's slot too), never at no line.
std::unique_ptr<Step> compile_needs_name(const Value& args, const Location&, Compiler& c) {
  c.text(args["name"], "needs_name name");  // reports: args has no `name`
  return nullptr;
}

TEST(CompilerTest, AnErrorAboutAMissingKeyIsLocatedAtItsStep) {
  Registry registry = builtin_registry();
  registry.add({"needs_name", "needs_name: {name: N} - a test primitive", compile_needs_name});
  std::string text = kScenario;
  text.replace(text.find("{wait: a}"), 9, "{needs_name: {}}");
  const Scenario sc = load(text);
  Diagnostics d;
  EXPECT_FALSE(compile_program(sc, sc.strategies.at(0), d, registry));
  EXPECT_THAT(d.to_string(), HasSubstr("c.yaml:9:49: error: needs_name name: expected a non-empty name, got nothing"));
}

// A program compiles to at most max_steps steps (Compiler::kMaxSteps unless a caller bounds it
// lower), the for_each counted with the steps it unrolls to: exactly that many compile, one more
// is an error at the step past the limit.
TEST(CompilerTest, AProgramPastItsStepLimitIsALocatedError) {
  const Scenario sc = load("name: c\nranks: 2\nprogram:\n  - for_each: {var: i, range: 5, do: [{compute: 1s}, {count: n}]}\n"
                           "strategies: {a: {}}\n");
  Diagnostics ok;
  auto p = compile_program(sc, sc.strategies.at(0), ok, builtin_registry(), 11);
  ASSERT_TRUE(p) << ok.to_string();
  EXPECT_EQ(p->uses.size(), 11u);
  Diagnostics d;
  EXPECT_FALSE(compile_program(sc, sc.strategies.at(0), d, builtin_registry(), 10));
  EXPECT_THAT(d.to_string(), HasSubstr("c.yaml:4:55: error: the program compiles to more than 10 steps"));
  EXPECT_EQ(d.count(), 1u);
}

}  // namespace
}  // namespace racesim::scenario
