// Choice files (choice_file.h): what is written reads back the same, and every damaged line is
// an error naming the file, line and column and what was expected.
#include "src/search/choice_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::search {
namespace {

using ::testing::HasSubstr;

ChoiceFile sample() {
  ChoiceFile f;
  f.version = "1.0+abc";
  f.scenario = "s";
  f.content = "0123456789abcdef";
  f.overrides = {"ranks=3"};
  f.strategy = "fix";
  f.point = "ranks=3";
  f.seed = 42;
  f.made_by = "pct:3:100";
  f.disarmed = {"stall"};
  f.outcome = "fail";
  f.check = "model_loads_intact";
  f.diagnosis = "rank 1: torn";
  f.trace_hash = "00000000000000ff";
  f.processes = {"rank 0", "rank 1"};
  f.choices = {{kernel::ChoiceKind::kSchedule, 3, 2, 0, 5},
               {kernel::ChoiceKind::kWake, 2, 1, 1, 7},
               {kernel::ChoiceKind::kModel, 9, 0, -1, 9}};
  return f;
}

TEST(ChoiceFileTest, WhatIsWrittenReadsBack) {
  const ChoiceFile f = sample();
  const std::string text = format_choice_file(f);
  EXPECT_THAT(text, HasSubstr("{\"kind\":\"wake\",\"of\":2,\"took\":1,\"process\":\"rank 1\",\"at_ns\":7}\n"));
  EXPECT_THAT(text, HasSubstr("\n{\"end\":{\"choices\":3}}\n"));
  ChoiceFile back;
  std::string error;
  ASSERT_TRUE(parse_choice_file(text, "c.jsonl", back, error)) << error;
  EXPECT_EQ(back.version, f.version);
  EXPECT_EQ(back.overrides, f.overrides);
  EXPECT_EQ(back.point, f.point);
  EXPECT_EQ(back.seed, 42u);
  EXPECT_EQ(back.disarmed, f.disarmed);
  EXPECT_EQ(back.trace_hash, f.trace_hash);
  EXPECT_EQ(back.processes, f.processes);
  ASSERT_EQ(back.choices.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.choices[i].kind, f.choices[i].kind);
    EXPECT_EQ(back.choices[i].options, f.choices[i].options);
    EXPECT_EQ(back.choices[i].value, f.choices[i].value);
  }
}

TEST(ChoiceFileTest, DamageIsALocatedErrorSayingWhatWasExpected) {
  const std::string text = format_choice_file(sample());
  const std::size_t line2 = text.find('\n') + 1;
  const std::string header = text.substr(0, line2);
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "c.jsonl:1:1: empty"},
           {"not json\n", "c.jsonl:1:2: not JSON"},
           {"{\"racesim_choices\":{\"format\":2}}\n", "c.jsonl:1:1: \"format\": this racesim reads choice files of format 1, got 2"},
           {header.substr(0, header.find("\"seed\":")) + "\"seed\":-1" +
                header.substr(header.find(",\"made_by\"")),
            "c.jsonl:1:1: \"seed\": expected a whole number >= 0, got -1"},
           {header, "c.jsonl:1:1: expected the trailer"},
           {header + "[1,2,3]\n", "c.jsonl:2:1: expected a choice"},
           {header + "{\"kind\":\"wake\",\"of\":1,\"took\":0}\n", "c.jsonl:2:1: expected 2 or more options"},
           {header + "{\"kind\":\"wake\",\"of\":2}\n", "c.jsonl:2:1: expected the key \"took\""},
           {header + "{\"end\":{\"choices\":1}}\n", "c.jsonl:2:1: the trailer counts 1 choices, the file holds 0"},
           {header + "{\"end\":{\"choices\":0}}\n{\"end\":{\"choices\":0}}\n", "c.jsonl:3:1: expected nothing after"},
           {header + "{\"kind\":\"wake\",\"of\":2,\"took\":0}\n\n", "c.jsonl:3:1: not JSON"},
       }) {
    ChoiceFile f;
    std::string error;
    EXPECT_FALSE(parse_choice_file(c.text, "c.jsonl", f, error)) << c.message;
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

TEST(ChoiceFileTest, CountsByKind) {
  EXPECT_EQ(count_by_kind(sample().choices), "schedule 1, wake 1, model 1, fault 0, draw 0");
  EXPECT_EQ(count_by_kind({}), "schedule 0, wake 0, model 0, fault 0, draw 0");
}

}  // namespace
}  // namespace racesim::search
