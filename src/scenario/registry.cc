// The registry (see registry.h).
#include "src/scenario/registry.h"

#include <algorithm>
#include <cassert>
#include <vector>

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
  // Levenshtein distance, one row at a time: O(|a| * |b|) per name, names are short.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_d = 3;  // at most 2 edits
  for (const PrimitiveInfo* p : primitives_.all()) {
    const std::size_t d = distance(name, p->name);
    if (d < best_d) {
      best_d = d;
      best = p->name;
    }
  }
  return best;
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
