// The scenario's own small methods (see scenario.h).
#include "src/scenario/language/scenario.h"

#include <cassert>

#include "src/scenario/file/quantity.h"
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

void FaultSpec::set_arg(const std::string& key, YAML::Node value) {
  // Entries are replaced, never assigned to: assigning to a YAML::Node rewrites the node it
  // views, which is the document's (and an alias's).
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      const YAML::Node k = it->first;
      it = args.erase(it);
      args.emplace(it, k, std::move(value));
      return;
    }
  }
  args.emplace_back(YAML::Node(key), std::move(value));
}

YAML::Node FaultSpec::arg(const std::string& key) const {
  for (const auto& [k, v] : args) {
    if (k.IsScalar() && k.Scalar() == key) return v;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool FaultSpec::set_level(const std::string& field, const YAML::Node& value, const Location& where,
                          Diagnostics& diags) {
  assert(is_level_field(field));
  if (field == "times") {
    // A whole number: the most sites the fault fires at in a run.
    auto v = value.IsScalar() ? parse_quantity(value.Scalar(), Unit::kCount) : Result<double>::error("");
    if (!v || *v < 1 || *v > 1e9 || *v != static_cast<double>(static_cast<std::uint64_t>(*v))) {
      diags.error(where, "times: expected a whole number from 1 to 1000000000 (the most sites the fault fires at)");
      return false;
    }
    times = static_cast<std::uint64_t>(*v);
    return true;
  }
  auto v = value.IsScalar() ? parse_quantity(value.Scalar(), Unit::kNumber) : Result<double>::error("");
  if (!v || !(*v >= 0 && *v <= 1)) {
    diags.error(where, field + ": expected a number from 0 to 1");
    return false;
  }
  (field == "fires" ? fires : probability) = *v;
  return true;
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
