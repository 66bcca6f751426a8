// An override as written, KEY=VALUE (a --set, a --set-file line, a --sweep, the overrides a
// results file records): parsed, then applied to a loaded scenario before it is compiled. It sits
// above both overrides.h (one key's value) and sweep.h (the axes), since an assignment may change
// an axis.
#pragma once

#include <string>

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/file/value.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// Applies "KEY=VALUE" (VALUE in YAML: a quantity, or a distribution such as "{uniform: {min: 1s,
// max: 2s}}"). KEY is any key overrides.h's apply_override takes, or sweep.KEY=[V1, V2, ...]
// (set_axis). A KEY that is a sweep axis pins it: the axis goes, the value holds at every point,
// and a note says so (Scenario::notes).
// Errors are reported at "--set KEY", or at `origin` when given (a --set-file's FILE:LINE, a
// --sweep), and say what was expected; returns false on error.
bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags,
                    const Location* origin = nullptr);

// The sweep axis KEY takes `values` (a list, checked as the file's axes are), or is added: what
// `--sweep KEY=V1,V2` does. Expectations at values it no longer has are dropped, with a note.
bool set_axis(Scenario& sc, const std::string& key, const Value& values, const Location& where, Diagnostics& diags);

}  // namespace racesim::scenario
