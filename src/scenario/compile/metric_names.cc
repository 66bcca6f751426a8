// The metrics a program can record (see metric_names.h).
#include "src/scenario/compile/metric_names.h"

#include <vector>

#include "src/scenario/file/closest.h"

namespace racesim::scenario {

namespace {

std::vector<std::string> all_names(const MetricNames& m, bool with_marks = false) {
  std::vector<std::string> v = {"makespan_s"};
  for (const auto* set : {&m.counters, &m.series, &m.derived}) v.insert(v.end(), set->begin(), set->end());
  if (with_marks) {
    for (const std::string& mark : m.marks) {
      if (!m.series.count(mark + "_s")) v.push_back(mark + "_s");
    }
  }
  return v;
}

}  // namespace

std::string MetricNames::closest(std::string_view name) const {
  const std::vector<std::string> names = all_names(*this, true);
  auto near = closest_names(name, names, 3, 1);
  if (!near.empty()) return near.front();
  // "wait_s" for "collective.wait_s": the same last dotted part.
  const std::string_view tail = name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  for (const std::string& n : names) {
    const auto dot = n.rfind('.');
    if (dot != std::string::npos && std::string_view(n).substr(dot + 1) == tail) return n;
  }
  return "";
}

std::string MetricNames::list(std::size_t limit) const {
  const std::vector<std::string> names = all_names(*this);
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += ", and " + std::to_string(names.size() - limit) + " more";
  return out;
}

}  // namespace racesim::scenario
