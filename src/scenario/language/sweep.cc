// The sweep (see sweep.h).
#include "src/scenario/language/sweep.h"

#include <algorithm>

#include "src/scenario/language/overrides.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

std::optional<SweepAxis> parse_axis(const std::string& key, const Location& where, const Value& values,
                                    const Scenario& sc, Diagnostics& diags) {
  const std::string& file = sc.file;
  SweepAxis axis;
  axis.key = key;
  axis.where = where;
  if (key == "seeds") {
    diags.error(where, "sweep: 'seeds' cannot be an axis (every point runs the same seeds)");
    return std::nullopt;
  }
  if (key.rfind("sweep.", 0) == 0) {
    diags.error(where, "sweep: '" + key + "' cannot be an axis (an axis is a key --set takes)");
    return std::nullopt;
  }
  if (!values.is_list() || values.size() == 0) {
    diags.error(at(values, file), "sweep." + key + ": expected a non-empty list of values");
    return std::nullopt;
  }
  for (const Value& v : values.items()) {
    Scenario scratch = sc;
    if (!apply_override(scratch, key, v, at(v, file), diags)) continue;
    const std::string label = flow_text(v);
    if (std::find(axis.labels.begin(), axis.labels.end(), label) != axis.labels.end()) {
      diags.error(at(v, file), "sweep." + key + ": '" + label + "' is listed twice");
      continue;
    }
    axis.values.push_back(v);
    axis.labels.push_back(label);
  }
  if (axis.values.empty()) return std::nullopt;
  return axis;
}

std::size_t count_points(const std::vector<SweepAxis>& axes) {
  std::size_t points = 1;
  // Saturates past the limit, so that 64 axes of 2 values cannot wrap the product to 0.
  for (const SweepAxis& axis : axes) {
    points = std::min<std::size_t>(points * std::max<std::size_t>(1, axis.values.size()), kMaxSweepPoints + 1);
  }
  return points;
}

void restrict_expectations(Scenario& sc, const std::string& key, const std::vector<std::string>& labels,
                           bool pinned) {
  std::vector<Expectation> kept;
  for (Expectation& e : sc.expect) {
    auto it = std::find_if(e.at.begin(), e.at.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == e.at.end()) {
      kept.push_back(std::move(e));
      continue;
    }
    if (std::find(labels.begin(), labels.end(), it->second) == labels.end()) {
      sc.notes.push_back("expect." + e.strategy + " at " + key + "=" + it->second + " (" + to_string(e.where) +
                         ") is not judged: " + key + " no longer takes that value");
      continue;
    }
    if (pinned) e.at.erase(it);
    kept.push_back(std::move(e));
  }
  sc.expect = std::move(kept);
}

void parse_sweep(const Value& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  if (!node.is_map() || node.size() == 0) {
    diags.error(at(node, file), "sweep: expected a map of KEY: [values] (KEY as for --set, e.g. "
                                "params.om_bytes: [180MiB, 1GiB])");
    return;
  }
  for (const auto& kv : node.entries()) {
    const std::string key = kv.first.scalar();
    auto axis = parse_axis(key, at(kv.first, file), kv.second, sc, diags);
    if (!axis) continue;
    for (const SweepAxis& other : sc.sweep) {
      if (other.key == key) diags.error(axis->where, "sweep: axis '" + key + "' appears twice");
    }
    sc.sweep.push_back(std::move(*axis));
  }
  if (count_points(sc.sweep) > kMaxSweepPoints) {
    diags.error(at(node, file), "sweep: more than " + std::to_string(kMaxSweepPoints) +
                                    " points (the product of the axes' lengths); the limit is " +
                                    std::to_string(kMaxSweepPoints));
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
