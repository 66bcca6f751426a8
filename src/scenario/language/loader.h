// The loader: a scenario file (or text) to a validated Scenario.
//
// It checks the document's structure, every value's type and unit and every slot binding, and
// reports all problems at once with file:line:column, before anything runs (expressions, ${...},
// are checked where they are used, by the compiler).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// The largest scenario file or text accepted (1 MiB); a file expanding to more than
// kMaxYamlNodes nodes (value.h; aliases counted at each use) is refused too.
inline constexpr std::size_t kMaxScenarioBytes = 1024 * 1024;

// Loads and validates `path`. Returns nullopt when any error was reported to `diags`.
std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& diags);
// The same from text (for tests and generated scenarios); `file` names it in errors.
std::optional<Scenario> load_scenario_text(const std::string& text, const std::string& file,
                                           Diagnostics& diags);


}  // namespace racesim::scenario
