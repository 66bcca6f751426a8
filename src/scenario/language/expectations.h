// Expectations: what each strategy must do over the scenario's seeds (expect: ...), which turns a
// scenario into a regression test (`racesim check`).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// One expectation of `strategy` (a map of fails, never_fails, failure_rate, metric and at);
// its `at:` is checked against sc.sweep, so the sweep is parsed first.
std::optional<Expectation> parse_expectation(const std::string& strategy, const Location& where,
                                             const Value& b, const Scenario& sc,
                                             Diagnostics& diags);
// Whether the expectation applies at a point with these axis values.
bool applies_at(const Expectation& e, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace racesim::scenario
