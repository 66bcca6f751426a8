// JUnit XML (junit.h).
#include "src/report/junit.h"

#include <map>

namespace racesim::report {
namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string junit_xml(const std::vector<JUnitCase>& cases) {
  std::map<std::string, std::vector<const JUnitCase*>> suites;
  std::size_t failures = 0, skipped = 0;
  for (const auto& c : cases) {
    suites[c.suite].push_back(&c);
    failures += !c.skipped && !c.failure.empty();
    skipped += c.skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"racesim check\" tests=\"" +
                    std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" +
                    std::to_string(skipped) + "\">\n";
  for (const auto& [suite, list] : suites) {
    std::size_t f = 0, k = 0;
    for (const auto* c : list) {
      f += !c->skipped && !c->failure.empty();
      k += c->skipped;
    }
    out += "  <testsuite name=\"" + xml_escape(suite) + "\" tests=\"" + std::to_string(list.size()) +
           "\" failures=\"" + std::to_string(f) + "\" skipped=\"" + std::to_string(k) + "\">\n";
    for (const auto* c : list) {
      out += "    <testcase classname=\"" + xml_escape(suite) + "\" name=\"" + xml_escape(c->name) + "\"";
      if (c->skipped) {
        out += ">\n      <skipped message=\"" + xml_escape(c->failure) + "\"/>\n    </testcase>\n";
      } else if (c->failure.empty()) {
        out += "/>\n";
      } else {
        out += ">\n      <failure message=\"" + xml_escape(c->failure) + "\"/>\n    </testcase>\n";
      }
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace racesim::report
