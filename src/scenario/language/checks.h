// The `checks:` section: which registered checks (registry.h) make a run fail, and per-run metric
// bounds ({metric: NAME, min: X, max: Y}).
#pragma once

#include <string>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// Parses `checks:` into sc.checks and sc.metric_checks, replacing what was there; a name must be
// a registered check.
void parse_checks(const Value& checks, Scenario& sc, const std::string& file, Diagnostics& diags);

}  // namespace racesim::scenario
