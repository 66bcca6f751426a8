// JSON read as results files need it: a document whose objects never repeat a key (nlohmann's
// parser keeps the last of `"outcome":"fail","outcome":"pass"`, which made an edited record read
// as a pass), and numbers read as the exact kind a field takes.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace racesim::report {

// Parses `text`; throws std::invalid_argument naming the key when an object holds one twice, and
// nlohmann's parse_error on malformed JSON.
nlohmann::json parse_strict(const std::string& text);

// Field `key` of `j` as a whole number >= 0 (not a negative, a fraction or text); throws
// std::invalid_argument naming the field otherwise. REQUIRES: j is an object.
std::uint64_t whole_field(const nlohmann::json& j, const char* key);

}  // namespace racesim::report
