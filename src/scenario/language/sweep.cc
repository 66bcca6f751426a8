// The sweep (see sweep.h).
#include "src/scenario/language/sweep.h"

#include <algorithm>

#include "src/scenario/language/overrides.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

void parse_sweep(const Value& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  if (!node.is_map() || node.size() == 0) {
    diags.error(at(node, file), "sweep: expected a map of KEY: [values] (KEY as for --set, e.g. "
                                "params.om_bytes: [180MiB, 1GiB])");
    return;
  }
  constexpr std::size_t kMaxPoints = 10'000;
  std::size_t points = 1;
  for (const auto& kv : node.entries()) {
    SweepAxis axis;
    axis.key = kv.first.scalar();
    axis.where = at(kv.first, file);
    if (axis.key == "seeds") {
      diags.error(axis.where, "sweep: 'seeds' cannot be an axis (every point runs the same seeds)");
      continue;
    }
    if (!kv.second.is_list() || kv.second.size() == 0) {
      diags.error(at(kv.second, file), "sweep." + axis.key + ": expected a non-empty list of values");
      continue;
    }
    for (const Value& v : kv.second.items()) {
      Scenario scratch = sc;
      if (!apply_override(scratch, axis.key, v, at(v, file), diags)) continue;
      const std::string label = flow_text(v);
      if (std::find(axis.labels.begin(), axis.labels.end(), label) != axis.labels.end()) {
        diags.error(at(v, file), "sweep." + axis.key + ": '" + label + "' is listed twice");
        continue;
      }
      axis.values.push_back(v);
      axis.labels.push_back(label);
    }
    for (const SweepAxis& other : sc.sweep) {
      if (other.key == axis.key) diags.error(axis.where, "sweep: axis '" + axis.key + "' appears twice");
    }
    // Saturates past the limit, so that 64 axes of 2 values cannot wrap the product to 0.
    points = std::min<std::size_t>(points * std::max<std::size_t>(1, axis.values.size()), kMaxPoints + 1);
    sc.sweep.push_back(std::move(axis));
  }
  if (points > kMaxPoints) {
    diags.error(at(node, file), "sweep: more than " + std::to_string(kMaxPoints) +
                                    " points (the product of the axes' lengths); the limit is " +
                                    std::to_string(kMaxPoints));
  }
}

std::vector<SweepPoint> sweep_points(const Scenario& sc) {
  std::vector<SweepPoint> points(1);
  for (const SweepAxis& axis : sc.sweep) {
    std::vector<SweepPoint> next;
    for (const SweepPoint& p : points) {
      for (std::size_t i = 0; i < axis.values.size(); ++i) {
        SweepPoint q = p;
        q.label += (q.label.empty() ? "" : " ") + axis.key + "=" + axis.labels[i];
        q.values.emplace_back(axis.key, axis.labels[i]);
        q.assignments.emplace_back(axis.key, axis.values[i]);
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::optional<Scenario> at_point(const Scenario& sc, const SweepPoint& point, Diagnostics& diags) {
  Scenario out = sc;
  bool ok = true;
  for (const auto& [key, value] : point.assignments) {
    ok = apply_override(out, key, value, at(value, sc.file), diags) && ok;
  }
  if (!ok) return std::nullopt;
  out.point = point.label;
  out.point_values = point.values;
  return out;
}

}  // namespace racesim::scenario
