// The one percentile definition racesim uses (per-run derived metrics and aggregates alike).
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace racesim::scenario {

// Linear interpolation between order statistics ("type 7"), p in [0, 100].
// REQUIRES: `sorted` is non-empty and ascending.
inline double percentile_sorted(const std::vector<double>& sorted, double p) {
  assert(!sorted.empty() && p >= 0 && p <= 100);
  assert(std::is_sorted(sorted.begin(), sorted.end()));
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace racesim::scenario
