// Readers of a scenario's values (value.h) with located errors: each names the file, line and
// column, and what was expected.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <span>
#include <string_view>


#include "src/scenario/file/diagnostics.h"
#include "src/scenario/file/value.h"

namespace racesim::scenario {

// The node's position (1-based), in `file`.
Location at(const Value& node, const std::string& file);
// "a map", "a list", "a scalar", "nothing".
const char* kind_of(const Value& node);
// Reports every key of map `node` that is not in `allowed`, naming the allowed keys.
void check_keys(const Value& node, std::span<const std::string_view> allowed,
                std::string_view what, const std::string& file, Diagnostics& diags);
inline void check_keys(const Value& node, std::initializer_list<std::string_view> allowed,
                       std::string_view what, const std::string& file, Diagnostics& diags) {
  check_keys(node, std::span<const std::string_view>(allowed.begin(), allowed.size()), what, file, diags);
}

// Scalar readers: each reports a located error naming `what` and returns nullopt on error.
// A whole number from lo to hi.
std::optional<std::int64_t> read_whole(const Value& node, std::int64_t lo, std::int64_t hi,
                                       std::string_view what, const std::string& file, Diagnostics& diags);
// Any scalar, as text.
std::optional<std::string> read_text(const Value& node, std::string_view what,
                                     const std::string& file, Diagnostics& diags);
// true or false.
std::optional<bool> read_bool(const Value& node, std::string_view what, const std::string& file,
                              Diagnostics& diags);
// The optional numeric bound `key` of map `node` (metric checks and expectations): nullopt when
// absent or invalid (reported).
std::optional<double> read_bound(const Value& node, const char* key, const std::string& file,
                                 Diagnostics& diags);
// limits.time: a positive duration, in ns.
std::optional<std::int64_t> read_time_limit(const Value& node, const std::string& file,
                                            Diagnostics& diags);
// A C identifier: a letter or '_', then letters, digits and '_'.
bool is_identifier(const std::string& s);

}  // namespace racesim::scenario
