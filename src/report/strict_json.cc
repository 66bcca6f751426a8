// Strict JSON for results files (see strict_json.h).
#include "src/report/strict_json.h"

#include <cassert>
#include <set>
#include <stdexcept>
#include <vector>

namespace racesim::report {

nlohmann::json parse_strict(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // the keys seen in each object open at this point
  std::string repeated;
  const nlohmann::json::parser_callback_t note = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && repeated.empty()) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  nlohmann::json doc = nlohmann::json::parse(text, note);
  if (!repeated.empty()) throw std::invalid_argument("the key '" + repeated + "' appears twice in one object");
  return doc;
}

std::uint64_t whole_field(const nlohmann::json& j, const char* key) {
  assert(j.is_object());
  const auto& v = j.at(key);
  if (!v.is_number_unsigned()) {
    throw std::invalid_argument(std::string("'") + key + "' is " + v.dump() + ", expected a whole number >= 0");
  }
  return v.get<std::uint64_t>();
}

}  // namespace racesim::report
