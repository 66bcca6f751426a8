// The one pipeline (study.h): a file or text, overrides with where they were written, the
// strategies and sweep points chosen, compiled in a fixed order, and every problem located.
#include "src/scenario/pipeline/study.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

constexpr const char* kScenario = R"(name: s
ranks: 2
params:
  work: 1s
  gap: 1s
program:
  - compute: ${work}
  - sleep: ${gap}
  - slot: publish
strategies:
  first:
    publish: [{mark: a}]
  second:
    publish: [{mark: b}]
  third:
    publish: [{mark: c}]
sweep:
  params.work: [1s, 2s]
  ranks: [2, 4]
)";

std::unique_ptr<Study> compile(StudyRequest r, Diagnostics& d) {
  r.path = "s.yaml";
  r.text = kScenario;
  return compile_study(r, d);
}

TEST(StudyTest, ProgramsArePointsOuterStrategiesInnerInFileOrder) {
  Diagnostics d;
  auto study = compile({}, d);
  ASSERT_TRUE(study) << d.to_string();
  ASSERT_EQ(study->points.size(), 4u);
  ASSERT_EQ(study->programs.size(), 12u);
  EXPECT_EQ(study->programs[0]->scenario->point, "params.work=1s ranks=2");
  EXPECT_EQ(study->programs[1]->strategy->name, "second");
  EXPECT_EQ(study->programs[3]->scenario->point, "params.work=1s ranks=4");
  EXPECT_EQ(study->programs[11]->scenario->point, "params.work=2s ranks=4");
  EXPECT_EQ(study->programs[11]->strategy->name, "third");
  EXPECT_EQ(study->programs[5]->scenario->ranks, 4) << "each point is its own scenario";
  EXPECT_EQ(study->scenario.ranks, 2) << "the study's scenario is the file's, before the sweep";
  const auto pointers = study->program_pointers();
  ASSERT_EQ(pointers.size(), 12u);
  EXPECT_EQ(pointers[7], study->programs[7].get());
}

TEST(StudyTest, StrategiesAndPointsCanBeChosen) {
  Diagnostics d;
  auto study = compile({.strategies = {"third", "first"}, .points = {"ranks=4"}}, d);
  ASSERT_TRUE(study) << d.to_string();
  ASSERT_EQ(study->programs.size(), 4u) << "two points with ranks=4, two strategies";
  EXPECT_EQ(study->programs[0]->strategy->name, "first") << "file order, not the order asked";
  EXPECT_EQ(study->programs[1]->strategy->name, "third");
  for (const auto& p : study->programs) EXPECT_EQ(p->scenario->ranks, 4);
  auto first = compile({.first_point_only = true}, d);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->programs.size(), 3u);
}

TEST(StudyTest, AnUnknownStrategyOrPointIsAnErrorNamingWhatThereIs) {
  Diagnostics d;
  EXPECT_FALSE(compile({.strategies = {"secnod"}}, d));
  EXPECT_THAT(d.to_string(), HasSubstr("secnod"));
  EXPECT_THAT(d.to_string(), HasSubstr("second"));
  Diagnostics p;
  EXPECT_FALSE(compile({.points = {"ranks=3"}}, p));
  EXPECT_THAT(p.to_string(), HasSubstr("ranks=3"));
}

TEST(StudyTest, OverridesApplyBeforeTheSweepAndTheirErrorsSayWhereTheyWereWritten) {
  Diagnostics d;
  auto study = compile({.overrides = {"params.gap=5s"}, .strategies = {"first"}}, d);
  ASSERT_TRUE(study) << d.to_string();
  EXPECT_EQ(study->points.size(), 4u);
  // An override of a sweep axis pins it: the axis's points become one, and a note says so.
  Diagnostics swept;
  auto pinned = compile({.overrides = {"params.work=5s"}}, swept);
  ASSERT_TRUE(pinned) << swept.to_string();
  EXPECT_EQ(pinned->points.size(), 2u) << "the two points of the other axis, ranks";
  ASSERT_EQ(pinned->scenario.notes.size(), 1u);
  EXPECT_THAT(pinned->scenario.notes[0], HasSubstr("--set params.work pins sweep axis params.work to 5s"));
  Diagnostics bad;
  EXPECT_FALSE(compile({.overrides = {"params.nothing=1s"}, .override_origins = {{"o.set", 7, 1}}}, bad));
  EXPECT_THAT(bad.to_string(), HasSubstr("o.set:7:1"));
  Diagnostics from_set;
  EXPECT_FALSE(compile({.overrides = {"params.nothing=1s"}}, from_set));
  EXPECT_THAT(from_set.to_string(), HasSubstr("--set params.nothing"));
}

TEST(StudyTest, AFileThatCannotBeReadIsALocatedError) {
  Diagnostics d;
  EXPECT_FALSE(compile_study({.path = "/nonexistent/racesim/s.yaml"}, d));
  EXPECT_THAT(d.to_string(), HasSubstr("/nonexistent/racesim/s.yaml"));
}

TEST(StudyTest, APrimitiveErrorAtOnePointIsReportedWithItsLocation) {
  Diagnostics d;
  std::string text = kScenario;
  text.replace(text.find("  - compute: ${work}"), 20, "  - compute: 5 apples");
  EXPECT_FALSE(compile_study({.path = "s.yaml", .text = text}, d));
  EXPECT_THAT(d.to_string(), HasSubstr("s.yaml:7:"));
}

}  // namespace
}  // namespace racesim::scenario
