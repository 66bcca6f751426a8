// The sweep: axes of values (sweep: KEY: [values], KEY as for --set), and the points they span.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

// Parses `sweep:` into sc.sweep; each value is checked by applying it to a copy of `sc`.
// At most 10,000 points.
void parse_sweep(const Value& node, Scenario& sc, Diagnostics& diags);

// The points of the sweep: the cartesian product of its axes, first axis slowest. Without a
// sweep, one point with an empty label.
struct SweepPoint {
  std::string label;
  std::vector<std::pair<std::string, std::string>> values;  // (axis key, value label)
  std::vector<std::pair<std::string, Value>> assignments;
};
std::vector<SweepPoint> sweep_points(const Scenario& sc);
// A copy of `sc` with the point's assignments applied. The copy shares every value it does not
// change (values are immutable; value.h).
std::optional<Scenario> at_point(const Scenario& sc, const SweepPoint& point, Diagnostics& diags);

}  // namespace racesim::scenario
