// JUnit XML: counts on the root and per suite, passed, failed and skipped cases, escaping.
#include "src/report/junit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::report {
namespace {

using ::testing::HasSubstr;

TEST(JUnitTest, CountsFailuresAndSkippedCasesPerSuiteAndInAll) {
  const std::string xml = junit_xml({{"b.yaml", "s never_fails", ""},
                                     {"a.yaml", "t fails", "0 of 10 seeds failed"},
                                     {"a.yaml", "u fails", "its points were not run", true}});
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"racesim check\" tests=\"3\" failures=\"1\" skipped=\"1\">"));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"a.yaml\" tests=\"2\" failures=\"1\" skipped=\"1\">"));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"b.yaml\" tests=\"1\" failures=\"0\" skipped=\"0\">"));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"b.yaml\" name=\"s never_fails\"/>"));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"0 of 10 seeds failed\"/>"));
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"its points were not run\"/>"));
  EXPECT_LT(xml.find("a.yaml"), xml.find("b.yaml")) << "suites in name order";
}

TEST(JUnitTest, EscapesMarkupInNamesAndMessages) {
  const std::string xml = junit_xml({{"x&y.yaml", "s <fast>", "rate \"high\" & rising"}});
  EXPECT_THAT(xml, HasSubstr("name=\"x&amp;y.yaml\""));
  EXPECT_THAT(xml, HasSubstr("name=\"s &lt;fast&gt;\""));
  EXPECT_THAT(xml, HasSubstr("message=\"rate &quot;high&quot; &amp; rising\""));
}

}  // namespace
}  // namespace racesim::report
