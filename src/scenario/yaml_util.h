// Small helpers for reading yaml-cpp nodes with located errors.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "src/scenario/diagnostics.h"

namespace racesim::scenario {

// The node's position (1-based), in `file`.
Location at(const YAML::Node& node, const std::string& file);
// "a map", "a list", "a scalar", "nothing".
const char* kind_of(const YAML::Node& node);
// Reports every key of map `node` that is not in `allowed`, naming the allowed keys.
void check_keys(const YAML::Node& node, std::initializer_list<std::string_view> allowed,
                std::string_view what, const std::string& file, Diagnostics& diags);

}  // namespace racesim::scenario
