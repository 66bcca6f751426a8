// Near misses (see closest.h).
#include "src/scenario/file/closest.h"

#include <algorithm>

namespace racesim::scenario {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row at a time.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t max_edits, std::size_t limit) {
  std::vector<std::pair<std::size_t, std::size_t>> near;  // (distance, index)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::size_t d = edit_distance(name, candidates[i]);
    if (d <= max_edits) near.emplace_back(d, i);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : near) {
    if (out.size() == limit) break;
    out.push_back(candidates[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  // Within a third of the name, and never all of it (any one-letter name is one edit from 'c').
  const auto near = closest_names(name, candidates, std::max<std::size_t>(1, name.size() / 3), 1);
  if (near.empty() || edit_distance(name, near.front()) >= name.size()) return "";
  return "did you mean '" + near.front() + "'? ";
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace racesim::scenario
