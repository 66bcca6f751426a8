// The scenario's own small methods (see scenario.h).
#include "src/scenario/language/scenario.h"

#include "src/scenario/file/yaml_util.h"

namespace racesim::scenario {

std::string FaultSpec::describe_on(int world) const {
  if (!on || on.IsNull()) return "all";
  const bool target = on.IsMap() && (on["ranks"] || on["mount"] || on["comm"] || on["link"]);
  Diagnostics scratch;  // the compiler reports errors; a bad selector here prints as written
  auto ranks = [&](const YAML::Node& n) {
    auto sel = parse_rank_selector(n, world, std::string(), scratch);
    return sel ? sel->describe() : flow_text(n);
  };
  if (!target) return ranks(on);
  std::string s = on["ranks"] ? ranks(on["ranks"]) : "all";
  for (const char* k : {"mount", "comm", "link"}) {
    if (on[k]) s += std::string(", ") + k + " " + flow_text(on[k]);
  }
  return s;
}

Location Scenario::where(const std::string& key, const YAML::Node& node) const {
  auto it = overridden.find(key);
  return it != overridden.end() ? it->second : at(node, file);
}

const Strategy* Scenario::strategy(const std::string& n) const {
  for (const Strategy& s : strategies) {
    if (s.name == n) return &s;
  }
  return nullptr;
}

}  // namespace racesim::scenario
