// Overrides: `--set KEY=VALUE` and sweep values, applied to a loaded scenario before it is
// compiled.
#pragma once

#include <string>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// Applies one override KEY to a loaded scenario, before it is compiled, with a parsed value (a
// sweep point's, or an assignment's: assignment.h). Keys: ranks, seeds, checks, limits.time,
// limits.events, params.NAME (an existing param; a quantity or a distribution), platform.PATH (an
// existing platform value, by its dotted path), faults.NAME.probability (and .fires, .times),
// faults.NAME.on and faults.NAME.ARG. Errors are reported at `where` (a sweep value's position, or
// the --set) and say what was expected; returns false on error.
bool apply_override(Scenario& sc, const std::string& key, const Value& value,
                    const Location& where, Diagnostics& diags);

}  // namespace racesim::scenario
