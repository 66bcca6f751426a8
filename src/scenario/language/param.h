// A param's value as written, in the file's params: or by --set params.NAME=VALUE: a quantity or
// a distribution, a text, or an expression over other params (scenario.h's Param).
#pragma once

#include <string>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// "${...}" alone is an expression (kept as written, evaluated when compiled); a quantity or a
// distribution map is a distribution; any other scalar that does not start like a number is
// text. Sets `p`'s value, text or expr; false (reported to `diags`, located in `file`) on error.
bool parse_param_value(const Value& node, const std::string& file, Diagnostics& diags, Param& p);

}  // namespace racesim::scenario
