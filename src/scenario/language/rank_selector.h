// Which ranks a step (or a fault) acts on: all, rank0, others, a rank, a list, a range "a-b", or
// {every: k, offset: m}. Selectors are resolved against the rank count of the point being
// compiled, so `others` follows `--set ranks=N`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/scenario/file/value.h"

#include "src/scenario/file/diagnostics.h"

namespace racesim::scenario {

// The most ranks a scenario may have: a bound on the numbers a scenario gives (ranks fit an int
// everywhere they are multiplied), not on what runs. Whether a run of that many ranks fits is
// decided by memory, before it starts (run/runner.h, size_work): a million ranks run in 5 GB.
inline constexpr int kMaxRanks = 10'000'000;

struct RankSelector {
  enum class Kind : std::uint8_t { kAll, kList, kEvery };
  Kind kind = Kind::kAll;
  std::vector<int> ranks;  // kList, ascending, unique
  int every = 1;           // kEvery
  int offset = 0;
  bool contains(int rank) const;
  std::string describe() const;
};
// Parses a selector; ranks must be in [0, world). Reports errors to diags.
std::optional<RankSelector> parse_rank_selector(const Value& node, int world,
                                                const std::string& file, Diagnostics& diags);

}  // namespace racesim::scenario
