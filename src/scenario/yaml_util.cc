#include "src/scenario/yaml_util.h"

namespace racesim::scenario {

Location at(const YAML::Node& node, const std::string& file) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

const char* kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

void check_keys(const YAML::Node& node, std::initializer_list<std::string_view> allowed,
                std::string_view what, const std::string& file, Diagnostics& diags) {
  if (!node.IsMap()) return;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    bool ok = false;
    for (std::string_view a : allowed) ok = ok || a == key;
    if (ok) continue;
    std::string list;
    for (std::string_view a : allowed) {
      if (!list.empty()) list += ", ";
      list += a;
    }
    diags.error(at(kv.first, file),
                "unknown key '" + key + "' in " + std::string(what) + " (expected one of: " + list +
                    ")");
  }
}

}  // namespace racesim::scenario
