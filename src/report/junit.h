// JUnit XML for CI systems: `racesim check --junit FILE` writes one test case per expectation
// (and one per scenario file that does not load), grouped in a suite per scenario file.
#pragma once

#include <string>
#include <vector>

namespace racesim::report {

struct JUnitCase {
  std::string suite, name;
  std::string failure;   // empty: passed
  bool skipped = false;  // not judged (its points or strategies were not run); `failure` says why
};

// The document: suites in name order, each case in the order given; counts of tests, failures
// and skipped cases on the root and on every suite; text XML-escaped.
std::string junit_xml(const std::vector<JUnitCase>& cases);

}  // namespace racesim::report
