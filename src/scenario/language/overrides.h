// Overrides: `--set KEY=VALUE` and sweep values, applied to a loaded scenario before it is
// compiled.
#pragma once

#include <string>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// Applies one command-line override "KEY=VALUE" to a loaded scenario, before it is compiled.
// Keys: ranks, seeds, limits.time, limits.events, params.NAME (an existing param; VALUE is a
// quantity or a YAML distribution such as "{uniform: {min: 1s, max: 2s}}"), platform.PATH (an
// existing platform value, by its dotted path), faults.NAME.probability (and .fires, .times), faults.NAME.on and
// faults.NAME.ARG, and sweep.KEY=[V1, V2, ...] (set_axis). A key that is a sweep axis pins it:
// the axis goes, the value holds, and a note says so (Scenario::notes).
// Errors are reported at the location "--set KEY" and say what was expected; returns false on
// error.
// `origin`, when given, is where the assignment was written (a --set-file's FILE:LINE), and
// errors are reported there instead.
bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags,
                    const Location* origin = nullptr);
// The sweep axis KEY takes `values` (a list, checked as the file's axes are), or is added: what
// `--sweep KEY=V1,V2` does. Expectations at values it no longer has are dropped, with a note.
bool set_axis(Scenario& sc, const std::string& key, const Value& values, const Location& where, Diagnostics& diags);
// The same with a parsed value; errors are reported at `where` (a sweep value's position).
bool apply_override(Scenario& sc, const std::string& key, const Value& value,
                    const Location& where, Diagnostics& diags);

}  // namespace racesim::scenario
