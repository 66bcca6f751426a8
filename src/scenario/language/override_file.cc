// Override files, line by line (see override_file.h).
#include "src/scenario/language/override_file.h"

#include <sstream>

#include "src/scenario/file/input_file.h"

namespace racesim::scenario {

bool parse_override_file(const std::string& text, const std::string& file, std::vector<std::string>& texts,
                         std::vector<Location>& origins, Diagnostics& diags) {
  std::istringstream in(text);
  std::string line;
  // Bounded by kMaxOverrideLines.
  for (int n = 1; std::getline(in, line); ++n) {
    if (n > kMaxOverrideLines) {
      diags.error({file, n, 1}, "more than " + std::to_string(kMaxOverrideLines) + " lines: not an override file");
      return false;
    }
    if (const auto nul = line.find('\0'); nul != std::string::npos) {
      diags.error({file, n, static_cast<int>(nul) + 1}, "a NUL byte: not a text file of KEY=VALUE lines");
      return false;
    }
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string assignment = line.substr(first, last - first + 1);
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
      diags.error({file, n, static_cast<int>(first) + 1},
                  "expected KEY=VALUE (a --set per line, e.g. platform.storage.cache.bandwidth=2GB/s), got '" +
                      excerpt(assignment) + "'");
      return false;
    }
    texts.push_back(assignment);
    origins.push_back({file, n, static_cast<int>(first) + 1});
  }
  return true;
}

}  // namespace racesim::scenario
