#include "src/scenario/file/value.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "src/scenario/language/loader.h"
#include "src/scenario/language/assignment.h"
#include "src/scenario/language/sweep.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

Value read(const std::string& text) {
  std::string error;
  auto v = parse_value(text, error);
  EXPECT_TRUE(v.has_value()) << error;
  return v.value_or(Value());
}

TEST(ValueTest, KeepsEveryNodesKindTextAndPosition) {
  const Value v = read("a: 1\nb: [x, 'y z']\nc: {d: ~}\ne:\n");
  ASSERT_TRUE(v.is_map());
  EXPECT_EQ(v.size(), 4u);
  EXPECT_EQ(v["a"].scalar(), "1");
  EXPECT_EQ(v["a"].line(), 1);
  EXPECT_EQ(v["a"].column(), 4);
  ASSERT_TRUE(v["b"].is_list());
  EXPECT_EQ(v["b"][1].scalar(), "y z");
  EXPECT_EQ(v["b"][1].line(), 2);
  EXPECT_EQ(v["b"][1].column(), 8);
  EXPECT_TRUE(v["c"]["d"].is_null());
  EXPECT_TRUE(v["e"].is_null());
  // Absent: a missing key, an index past the end, a key of a list, an index of a scalar.
  EXPECT_FALSE(v["nope"]);
  EXPECT_FALSE(v["b"][2]);
  EXPECT_FALSE(v["b"]["x"]);
  EXPECT_FALSE(v["a"][0]);
  EXPECT_EQ(v["b"].scalar(), "");  // not a scalar: no text, as yaml-cpp
  EXPECT_EQ(v.entries()[1].first.scalar(), "b");
  EXPECT_EQ(v.entries()[1].first.line(), 2);
}

TEST(ValueTest, ASetEntryIsANewMapThatSharesTheRest) {
  const Value v = read("x: {p: 1, q: [1, 2]}\ny: 2\n");
  const Value x2 = v["x"].with_entry("p", read("5"));
  const Value v2 = v.with_entry("x", x2).with_entry("z", read("new"));
  // The original is unchanged: values are immutable.
  EXPECT_EQ(v["x"]["p"].scalar(), "1");
  EXPECT_FALSE(v["z"]);
  EXPECT_EQ(v2["x"]["p"].scalar(), "5");
  EXPECT_EQ(v2["z"].scalar(), "new");
  // The entry keeps its place; a new one goes last.
  EXPECT_EQ(v2.entries()[0].first.scalar(), "x");
  EXPECT_EQ(v2.entries()[2].first.scalar(), "z");
  // Every node off the changed path is the same node, not a copy.
  EXPECT_EQ(&v2["x"]["q"].items(), &v["x"]["q"].items());
  EXPECT_EQ(&v2["y"].scalar(), &v["y"].scalar());
}

TEST(ValueTest, AnAliasIsCopiedSoSettingOneUseLeavesTheOthers) {
  const Value v = read("a: &shared {k: 1}\nb: *shared\n");
  const Value v2 = v.with_entry("a", v["a"].with_entry("k", read("2")));
  EXPECT_EQ(v2["a"]["k"].scalar(), "2");
  EXPECT_EQ(v2["b"]["k"].scalar(), "1");
}

// Sweep labels and reports print values in flow style; they must read exactly as yaml-cpp's
// emitter printed the document's own nodes.
TEST(ValueTest, FlowTextIsWhatYamlCppsEmitterWrites) {
  const char* texts[] = {
      "1s",
      "{uniform: {min: 1s, max: 2s}}",
      "[1, 2, 3]",
      "uniform:\n  min: 1s\n  max: 2s\n",
      "- a\n- [b, c]\n- {d: e}\n",
      "{a: 'has: colon', b: \"quoted\", c: ~, d: '', e: 'true', f: '#x'}",
      "!!str 5",
      "{k: !!str 5, l: !custom [1]}",
      "[{x: [1, {y: 2}]}]",
  };
  for (const char* t : texts) {
    const YAML::Node node = YAML::Load(t);
    YAML::Emitter out;
    out.SetMapFormat(YAML::Flow);
    out.SetSeqFormat(YAML::Flow);
    out << node;
    const std::string expected = node.IsScalar() ? node.Scalar() : out.c_str();
    EXPECT_EQ(flow_text(read(t)), expected) << t;
  }
}

TEST(ValueTest, ANestedAliasBombIsRefusedBeforeItIsCopied) {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'h'; ++c) {
    const char p = static_cast<char>(c - 1);
    text += std::string(1, c) + ": &" + c + " [*" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p +
            ", *" + p + ", *" + p + ", *" + p + ", *" + p + "]\n";
  }
  std::string error;
  EXPECT_FALSE(parse_value(text, error).has_value());
  EXPECT_THAT(error, HasSubstr("more than 200000 nodes"));
  EXPECT_FALSE(parse_value("{a: [1, 2", error).has_value());
  EXPECT_THAT(error, HasSubstr("not valid YAML"));
}

const char* kSwept = R"(name: swept
ranks: 2
seeds: 2
platform:
  storage:
    cache: &mount {kind: nfs, mount: /cache, meta_latency: 1ms}
    other: *mount
params:
  t: 1s
program:
  - compute: ${t}
strategies:
  a:
    summary: only
sweep:
  platform.storage.cache.meta_latency: [2ms, 3ms]
)";

// A sweep point is a copy that shares the file's values; setting its axis changes that point
// only, not the scenario, another point or an alias of the changed node.
TEST(ValueTest, SweepPointsAndOverridesChangeOnlyTheirOwnCopy) {
  Diagnostics d;
  auto sc = load_scenario_text(kSwept, "s.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  const auto points = sweep_points(*sc);
  ASSERT_EQ(points.size(), 2u);
  auto p0 = at_point(*sc, points[0], d);
  auto p1 = at_point(*sc, points[1], d);
  ASSERT_TRUE(p0 && p1) << d.to_string();
  EXPECT_EQ(p0->platform["storage"]["cache"]["meta_latency"].scalar(), "2ms");
  EXPECT_EQ(p1->platform["storage"]["cache"]["meta_latency"].scalar(), "3ms");
  EXPECT_EQ(sc->platform["storage"]["cache"]["meta_latency"].scalar(), "1ms");
  EXPECT_EQ(p1->platform["storage"]["other"]["meta_latency"].scalar(), "1ms");
  // The value keeps its place in the file, so an error in it is located there.
  EXPECT_EQ(p1->platform["storage"]["cache"]["meta_latency"].line(), 16);
  // --set of a mount setting the file left at its default adds it to that mount alone.
  Scenario copy = *sc;
  ASSERT_TRUE(apply_override(copy, "platform.storage.other.meta_jitter=1ms", d)) << d.to_string();
  EXPECT_EQ(copy.platform["storage"]["other"]["meta_jitter"].scalar(), "1ms");
  EXPECT_FALSE(sc->platform["storage"]["other"]["meta_jitter"]);
  EXPECT_FALSE(copy.platform["storage"]["cache"]["meta_jitter"]);
  // A key of a mount setting that is a map (file_overhead's) is added with the setting, then to
  // it; a setting no mount takes, or a key of a setting that is not a map, is still an error.
  ASSERT_TRUE(apply_override(copy, "platform.storage.other.file_overhead.read=2ms", d)) << d.to_string();
  ASSERT_TRUE(apply_override(copy, "platform.storage.other.file_overhead.text_read=1ms", d)) << d.to_string();
  EXPECT_EQ(copy.platform["storage"]["other"]["file_overhead"]["read"].scalar(), "2ms");
  EXPECT_EQ(copy.platform["storage"]["other"]["file_overhead"]["text_read"].scalar(), "1ms");
  EXPECT_FALSE(copy.platform["storage"]["cache"]["file_overhead"]);
  Diagnostics bad;
  EXPECT_FALSE(apply_override(copy, "platform.storage.other.file_ovrhead.read=2ms", bad));
  EXPECT_THAT(bad.to_string(), ::testing::HasSubstr("no value 'file_ovrhead' in platform.storage.other"));
  EXPECT_FALSE(apply_override(copy, "platform.storage.other.meta_latency.read=2ms", bad));
  EXPECT_THAT(bad.to_string(), ::testing::HasSubstr("no value 'read' in platform.storage.other.meta_latency"));
}

}  // namespace
}  // namespace racesim::scenario
