// Near misses for error messages: "unknown X 'colective.wait_s' (did you mean
// 'collective.wait_s'?)". Used for primitive names, metric names and sweep point labels.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace racesim::scenario {

// Levenshtein distance (insertions, deletions, substitutions), O(|a| * |b|).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates within `max_edits` of `name`, nearest first (ties in the candidates' order), at
// most `limit` of them.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t max_edits, std::size_t limit);

}  // namespace racesim::scenario
