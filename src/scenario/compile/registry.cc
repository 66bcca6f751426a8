// The registry (see registry.h).
#include "src/scenario/compile/registry.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "src/scenario/file/closest.h"

namespace racesim::scenario {

void Registry::add_faults(const std::vector<kernel::FaultKindSpec>& kinds, FaultStartFn start) {
  for (const kernel::FaultKindSpec& k : kinds) {
    FaultKindInfo info{k.name, k.help, {}, start, k.aimable};
    for (const kernel::FaultArgSpec& a : k.args) {
      const Unit unit = a.unit == "duration" ? Unit::kDuration : a.unit == "bytes" ? Unit::kBytes : Unit::kNumber;
      assert((a.unit == "duration" || a.unit == "bytes" || a.unit == "number") && "a fault argument's unit");
      info.args.push_back({a.name, unit, a.default_value, a.min, a.max});
    }
    add_fault(std::move(info));
  }
}

std::string Registry::closest(std::string_view name) const {
  std::vector<std::string> names;
  for (const PrimitiveInfo* p : primitives_.all()) names.push_back(p->name);
  auto near = closest_names(name, names, 2, 1);
  return near.empty() ? "" : near.front();
}

std::string Registry::names() const {
  std::string s;
  for (const PrimitiveInfo* p : primitives_.all()) s += (s.empty() ? "" : ", ") + p->name;
  return s;
}

const Registry& builtin_registry() {
  static const Registry r = [] {
    Registry reg;
    register_families(reg);
    return reg;
  }();
  return r;
}

}  // namespace racesim::scenario
