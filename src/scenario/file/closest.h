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
// "did you mean 'NEAR'? " for the nearest candidate within a third of `name`'s length (at least 1
// edit, and fewer than the name's length), or "" when none is that near: a hint's start.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);
// "a, b, c" ("none" for no names): a list of what a message's reader could have meant.
std::string name_list(const std::vector<std::string>& names);

}  // namespace racesim::scenario
