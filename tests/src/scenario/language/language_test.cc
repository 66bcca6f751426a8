// The step language's structure: for_each loops, reusable step lists (define/use), anchors
// under x- keys, and where their errors are reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/scenario/language/loader.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

TEST(LanguageTest, ForEachUnrollsARangeAndAListWithAnIndex) {
  auto f = make(2,
                "  - for_each: {var: i, range: [1, 7, 2], do: [{count: \"step${i}\"}]}\n"
                "  - for_each: {var: d, in: [10ms, 20ms, 30ms], index: k, do: [{sleep: \"${d}\"}, {mark: {name: \"m${k}_r${rank}\", metric: true}}]}\n"
                "  - for_each: {var: name, in: [alpha, beta], do: [{count: \"${name}\"}]}\n"
                "  - for_each: {var: j, range: \"${world}\", do: [{count: \"w${j}\"}]}\n");
  ASSERT_TRUE(f.study);
  const auto m = run(f).metrics;
  EXPECT_EQ(m.at("step1"), 2.0);  // one per rank
  EXPECT_EQ(m.at("step3"), 2.0);
  EXPECT_EQ(m.at("step5"), 2.0);
  EXPECT_FALSE(m.count("step7")) << "range stops before STOP, as Python's";
  EXPECT_DOUBLE_EQ(m.at("m0_r1_s"), 0.01);
  EXPECT_DOUBLE_EQ(m.at("m2_r0_s"), 0.06);
  EXPECT_EQ(m.at("alpha"), 2.0);
  EXPECT_EQ(m.at("beta"), 2.0);
  EXPECT_EQ(m.at("w1"), 2.0);
  EXPECT_FALSE(m.count("w2"));
}

TEST(LanguageTest, ForEachErrors) {
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: rank, range: 3, do: []}\n"),
              HasSubstr("for_each var: expected a name (an identifier other than rank"));
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: i, range: 3, in: [1], do: []}\n"),
              HasSubstr("expected one of range (numbers) or in (a list of values)"));
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: i, range: 1000000, do: []}\n"),
              HasSubstr("1000000 iterations, more than the 100000 one for_each may unroll"));
  EXPECT_THAT(compile_errors(1, "  - for_each: {var: i, range: [0, 3, 0], do: []}\n"), HasSubstr("the step cannot be 0"));
  // An error inside the body is reported once, not once per value.
  const std::string e = compile_errors(1, "  - for_each: {var: i, range: 5, do: [{sleep: \"${i * 1GiB}\"}]}\n");
  EXPECT_THAT(e, HasSubstr("sleep: ${i * 1GiB} is a size in bytes, expected a duration"));
  EXPECT_EQ(e.find("error", e.find("error") + 1), std::string::npos) << e;
}

const char* kDefine =
    "define:\n"
    "  save:\n"
    "    args: [dir, step]\n"
    "    do:\n"
    "      - mkdir: {path: \"${dir}/step${step}\", parents: true}\n"
    "      - write_file: {path: \"${dir}/step${step}/model.pt\", size: 1MiB}\n"
    "      - count: saves\n"
    "  done: [{mark: {name: done, metric: true}}]\n"
    "platform:\n"
    "  storage: {c: {kind: local, mount: /c}}\n";

TEST(LanguageTest, DefineAndUseWithArgs) {
  auto f = make(1,
                "  - for_each: {var: s, range: [1, 4], do: [{use: {name: save, dir: /c/ckpt, step: \"${s * 100}\"}}]}\n"
                "  - use: done\n",
                kDefine);
  ASSERT_TRUE(f.study);
  const auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("saves"), 3.0);
  EXPECT_TRUE(r.metrics.count("done_s"));
}

TEST(LanguageTest, ErrorsInAUsedListAreLocatedAtTheUse) {
  // The definition is fine on its own; this use gives it a step whose path is on no mount.
  const std::string e = compile_errors(1, "  - use: {name: save, dir: /elsewhere, step: 1}\n", kDefine);
  EXPECT_THAT(e, HasSubstr("t.yaml:15:5: error: mkdir path: '/elsewhere/step1' is on no mount"));
  EXPECT_THAT(e, HasSubstr("(in `use: save`, at t.yaml:8:23)"));
  EXPECT_THAT(compile_errors(1, "  - use: {name: sav, dir: /c, step: 1}\n", kDefine),
              HasSubstr("use: no step list 'sav' is defined (did you mean 'save'? define: done, save)"));
  EXPECT_THAT(compile_errors(1, "  - use: {name: save, dir: /c}\n", kDefine), HasSubstr("use save: missing arg 'step'"));
  EXPECT_THAT(compile_errors(1, "  - use: {name: save, dir: /c, step: 1, colour: red}\n", kDefine),
              HasSubstr("use save: no arg 'colour' (its args: dir, step)"));
  EXPECT_THAT(compile_errors(1, "  - use: loop\n", "define:\n  loop: [{use: loop}]\n"), HasSubstr("use: 'loop' uses itself"));
}

TEST(LanguageTest, AnchorsLiveUnderXKeysAndAMissingOneIsNamed) {
  auto f = make(1, "  - sleep: 1s\n  - repeat: {times: 2, do: *twice}\n", "x-steps: &twice [{count: n}]\n");
  ASSERT_TRUE(f.study);
  EXPECT_EQ(run(f).metrics.at("n"), 2.0);
  Diagnostics d;
  load_scenario_text("name: t\nranks: 1\nprogram:\n  - repeat: {times: 2, do: *twise}\nstrategies: {only: }\n", "a.yaml", d);
  EXPECT_THAT(d.to_string(), HasSubstr("a.yaml:4:28: error: invalid YAML: the alias *twise names no anchor &twise"));
}

}  // namespace
}  // namespace racesim::scenario
