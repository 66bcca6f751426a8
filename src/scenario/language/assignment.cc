// Overrides as written (see assignment.h).
#include "src/scenario/language/assignment.h"

#include <algorithm>

#include "src/scenario/file/closest.h"
#include "src/scenario/language/overrides.h"
#include "src/scenario/language/sweep.h"

namespace racesim::scenario {

bool set_axis(Scenario& sc, const std::string& key, const Value& values, const Location& where, Diagnostics& diags) {
  const std::size_t before = diags.count();
  Diagnostics local;
  auto axis = parse_axis(key, where, values, sc, local);
  for (const Diagnostic& d : local.all()) diags.error(where, d.message);
  if (!axis || diags.count() != before) return false;
  std::vector<SweepAxis> axes = sc.sweep;
  auto same = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.key == key; });
  if (same != axes.end()) {
    *same = *axis;
  } else {
    axes.push_back(*axis);
  }
  if (count_points(axes) > kMaxSweepPoints) {
    diags.error(where, "the sweep would have more than " + std::to_string(kMaxSweepPoints) +
                           " points (the product of the axes' lengths); the limit is " + std::to_string(kMaxSweepPoints));
    return false;
  }
  sc.sweep = std::move(axes);
  restrict_expectations(sc, key, axis->labels, false);
  return true;
}

bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags,
                    const Location* origin) {
  const auto eq = assignment.find('=');
  const std::string key = assignment.substr(0, eq);
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
    diags.error(origin ? *origin : Location{"--set " + assignment, 0, 0}, "expected KEY=VALUE, e.g. params.poll=100ms");
    return false;
  }
  const Location where = origin ? *origin : Location{"--set " + key, 0, 0};
  std::string error;
  const std::optional<Value> value = parse_value(assignment.substr(eq + 1), error);
  if (!value) {
    diags.error(where, error);
    return false;
  }
  if (key.rfind("sweep.", 0) == 0) return set_axis(sc, key.substr(6), *value, where, diags);
  // A --set of a sweep axis pins it: the axis goes (a point would replace the value otherwise),
  // and the value holds at the one point left.
  for (auto axis = sc.sweep.begin(); axis != sc.sweep.end(); ++axis) {
    if (axis->key != key) continue;
    Scenario pinned = sc;
    pinned.sweep.erase(pinned.sweep.begin() + (axis - sc.sweep.begin()));
    if (!apply_override(pinned, key, *value, where, diags)) return false;
    pinned.notes.push_back(to_string(where) + " pins sweep axis " + key + " to " + flow_text(*value) + " (the file's " +
                           to_string(axis->where) + " sweeps " + name_list(axis->labels) + ")");
    restrict_expectations(pinned, key, {flow_text(*value)}, true);
    sc = std::move(pinned);
    return true;
  }
  return apply_override(sc, key, *value, where, diags);
}

}  // namespace racesim::scenario
