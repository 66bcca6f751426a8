// The sweep: axes of values (sweep: KEY: [values], KEY as for --set), and the points they span.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// Parses `sweep:` into sc.sweep; each value is checked by applying it to a copy of `sc`.
// At most 10,000 points.
void parse_sweep(const YAML::Node& node, Scenario& sc, Diagnostics& diags);

// The points of the sweep: the cartesian product of its axes, first axis slowest. Without a
// sweep, one point with an empty label.
struct SweepPoint {
  std::string label;
  std::vector<std::pair<std::string, std::string>> values;  // (axis key, value label)
  std::vector<std::pair<std::string, YAML::Node>> assignments;
};
std::vector<SweepPoint> sweep_points(const Scenario& sc);
// A deep copy of `sc` with the point's assignments applied (platform and fault arguments are
// cloned, so points never share mutable YAML).
std::optional<Scenario> at_point(const Scenario& sc, const SweepPoint& point, Diagnostics& diags);
// A copy that shares no mutable YAML with `sc` (platform and fault nodes are cloned).
Scenario deep_copy(const Scenario& sc);

}  // namespace racesim::scenario
