// The scenario's own small methods (see scenario.h).
#include "src/scenario/language/scenario.h"

#include <cassert>

#include "src/scenario/file/quantity.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

std::string FaultSpec::describe_on(int world) const {
  if (!on || on.is_null()) return "all";
  const bool target = on.is_map() && (on["ranks"] || on["mount"] || on["comm"] || on["link"]);
  Diagnostics scratch;  // the compiler reports errors; a bad selector here prints as written
  auto ranks = [&](const Value& n) {
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

void FaultSpec::set_arg(const std::string& key, Value value) {
  for (auto& [k, v] : args) {
    if (k.is_scalar() && k.scalar() == key) {
      v = std::move(value);
      return;
    }
  }
  args.emplace_back(Value::scalar_of(key), std::move(value));
}

Value FaultSpec::arg(const std::string& key) const {
  for (const auto& [k, v] : args) {
    if (k.is_scalar() && k.scalar() == key) return v;
  }
  return Value();
}

bool FaultSpec::set_level(const std::string& field, const Value& value, const Location& where,
                          Diagnostics& diags) {
  assert(is_level_field(field));
  if (field == "times") {
    // A whole number: the most sites the fault fires at in a run.
    auto v = value.is_scalar() ? parse_quantity(value.scalar(), Unit::kCount) : Result<double>::error("");
    if (!v || *v < 1 || *v > 1e9 || *v != static_cast<double>(static_cast<std::uint64_t>(*v))) {
      diags.error(where, "times: expected a whole number from 1 to 1000000000 (the most sites the fault fires at)");
      return false;
    }
    times = static_cast<std::uint64_t>(*v);
    return true;
  }
  auto v = value.is_scalar() ? parse_quantity(value.scalar(), Unit::kNumber) : Result<double>::error("");
  if (!v || !(*v >= 0 && *v <= 1)) {
    diags.error(where, field + ": expected a number from 0 to 1");
    return false;
  }
  (field == "fires" ? fires : probability) = *v;
  return true;
}

Location Scenario::where(const std::string& key, const Value& node) const {
  auto it = overridden.find(key);
  return it != overridden.end() ? it->second : at(node, file);
}

std::vector<std::string> Scenario::strategy_names() const {
  std::vector<std::string> names;
  for (const Strategy& s : strategies) names.push_back(s.name);
  return names;
}

const Strategy* Scenario::strategy(const std::string& n) const {
  for (const Strategy& s : strategies) {
    if (s.name == n) return &s;
  }
  return nullptr;
}

}  // namespace racesim::scenario
