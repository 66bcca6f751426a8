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
// At most kMaxSweepPoints points.
void parse_sweep(const Value& node, Scenario& sc, Diagnostics& diags);
inline constexpr std::size_t kMaxSweepPoints = 10'000;
// One axis KEY: [values] (a file's, or `--sweep KEY=V1,V2`): each value checked by applying it to
// a copy of `sc`, labels distinct. Errors are reported at the values' positions; nullopt when the
// axis has no valid value.
std::optional<SweepAxis> parse_axis(const std::string& key, const Location& where, const Value& values,
                                    const Scenario& sc, Diagnostics& diags);
// The number of points the axes span, saturated past kMaxSweepPoints.
std::size_t count_points(const std::vector<SweepAxis>& axes);
// After axis `key` changed to `labels` (or was pinned: one label, the axis gone): an expectation
// `at:` a value the axis no longer has applies nowhere and is dropped, and `at:` the pinned value
// is true at every point; each dropped one is noted in sc.notes. `pinned` says the axis is gone.
void restrict_expectations(Scenario& sc, const std::string& key, const std::vector<std::string>& labels,
                           bool pinned);

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
