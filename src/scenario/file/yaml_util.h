// Small helpers for reading yaml-cpp nodes with located errors.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <span>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "src/scenario/file/diagnostics.h"

namespace racesim::scenario {

// The node's position (1-based), in `file`.
Location at(const YAML::Node& node, const std::string& file);
// "a map", "a list", "a scalar", "nothing".
const char* kind_of(const YAML::Node& node);
// Reports every key of map `node` that is not in `allowed`, naming the allowed keys.
void check_keys(const YAML::Node& node, std::span<const std::string_view> allowed,
                std::string_view what, const std::string& file, Diagnostics& diags);
inline void check_keys(const YAML::Node& node, std::initializer_list<std::string_view> allowed,
                       std::string_view what, const std::string& file, Diagnostics& diags) {
  check_keys(node, std::span<const std::string_view>(allowed.begin(), allowed.size()), what, file, diags);
}

// Scalar readers: each reports a located error naming `what` and returns nullopt on error.
// A whole number from lo to hi.
std::optional<std::int64_t> read_whole(const YAML::Node& node, std::int64_t lo, std::int64_t hi,
                                       std::string_view what, const std::string& file, Diagnostics& diags);
// Any scalar, as text.
std::optional<std::string> read_text(const YAML::Node& node, std::string_view what,
                                     const std::string& file, Diagnostics& diags);
// true or false.
std::optional<bool> read_bool(const YAML::Node& node, std::string_view what, const std::string& file,
                              Diagnostics& diags);
// The optional numeric bound `key` of map `node` (metric checks and expectations): nullopt when
// absent or invalid (reported).
std::optional<double> read_bound(const YAML::Node& node, const char* key, const std::string& file,
                                 Diagnostics& diags);
// limits.time: a positive duration, in ns.
std::optional<std::int64_t> read_time_limit(const YAML::Node& node, const std::string& file,
                                            Diagnostics& diags);
// A C identifier: a letter or '_', then letters, digits and '_'.
bool is_identifier(const std::string& s);
// A deep copy of `node` that keeps every node's position, tag and style (YAML::Clone resets the
// positions to 1:1, so errors in a copy would point at the top of the file). Aliases are copied
// as often as they occur. REQUIRES: a tree of at most kMaxYamlNodes nodes, as every loaded file
// is (the loader checks; see count_nodes).
YAML::Node clone(const YAML::Node& node);
// The nodes of `node`'s tree, aliases counted as often as they occur, counting stops past
// `limit` (so a billion-laughs file is rejected in bounded time).
std::size_t count_nodes(const YAML::Node& node, std::size_t limit);
inline constexpr std::size_t kMaxYamlNodes = 200'000;
// A YAML value as one line of text (scalars as written, the rest in flow style).
std::string flow_text(const YAML::Node& node);

}  // namespace racesim::scenario
