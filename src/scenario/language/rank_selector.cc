// Rank selectors (see rank_selector.h).
#include "src/scenario/language/rank_selector.h"

#include <algorithm>

#include "src/scenario/file/quantity.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

bool RankSelector::contains(int rank) const {
  switch (kind) {
    case Kind::kAll:
      return true;
    case Kind::kList:
      return std::binary_search(ranks.begin(), ranks.end(), rank);
    case Kind::kEvery:
      return rank >= offset && (rank - offset) % every == 0;
  }
  return false;
}

std::string RankSelector::describe() const {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kEvery:
      return "every " + std::to_string(every) + " from " + std::to_string(offset);
    case Kind::kList: {
      std::string s = "[";
      for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
      return s + "]";
    }
  }
  return "?";
}

std::optional<RankSelector> parse_rank_selector(const Value& node, int world,
                                                const std::string& file, Diagnostics& diags) {
  const std::string expected =
      "expected a rank selector: all, rank0, others, a rank, a list of ranks, a range 'A-B', or "
      "{every: K, offset: M}";
  RankSelector sel;
  auto check_rank = [&](long r, const Value& where) {
    if (r < 0 || r >= world) {
      diags.error(at(where, file), "rank " + std::to_string(r) + " is out of range (ranks are 0 to " +
                                       std::to_string(world - 1) + ")");
      return false;
    }
    return true;
  };
  if (node.is_scalar()) {
    const std::string& s = node.scalar();
    if (s == "all") return sel;
    sel.kind = RankSelector::Kind::kList;
    if (s == "rank0") {
      sel.ranks = {0};
      return sel;
    }
    if (s == "others") {
      for (int r = 1; r < world; ++r) sel.ranks.push_back(r);
      return sel;
    }
    const auto dash = s.find('-');
    auto a = parse_quantity(s.substr(0, dash), Unit::kCount);
    if (dash == std::string::npos) {
      if (!a) {
        diags.error(at(node, file), expected + ", got '" + s + "'");
        return std::nullopt;
      }
      if (!check_rank(static_cast<long>(*a), node)) return std::nullopt;
      sel.ranks = {static_cast<int>(*a)};
      return sel;
    }
    auto b = parse_quantity(s.substr(dash + 1), Unit::kCount);
    if (!a || !b || *b < *a) {
      diags.error(at(node, file), expected + ", got '" + s + "'");
      return std::nullopt;
    }
    if (!check_rank(static_cast<long>(*a), node) || !check_rank(static_cast<long>(*b), node)) {
      return std::nullopt;
    }
    for (int r = static_cast<int>(*a); r <= static_cast<int>(*b); ++r) sel.ranks.push_back(r);
    return sel;
  }
  if (node.is_list()) {
    sel.kind = RankSelector::Kind::kList;
    for (const auto& n : node.items()) {
      auto r = read_whole(n, 0, kMaxRanks, "rank", file, diags);
      if (!r || !check_rank(static_cast<long>(*r), n)) return std::nullopt;
      sel.ranks.push_back(static_cast<int>(*r));
    }
    std::sort(sel.ranks.begin(), sel.ranks.end());
    sel.ranks.erase(std::unique(sel.ranks.begin(), sel.ranks.end()), sel.ranks.end());
    if (sel.ranks.empty()) {
      diags.error(at(node, file), "the rank list is empty: a step on no rank never runs");
      return std::nullopt;
    }
    return sel;
  }
  if (node.is_map() && node["every"]) {
    check_keys(node, {"every", "offset"}, "rank selector", file, diags);
    auto k = read_whole(node["every"], 1, kMaxRanks, "every", file, diags);
    std::optional<std::int64_t> m = 0;
    if (node["offset"]) m = read_whole(node["offset"], 0, kMaxRanks, "offset", file, diags);
    if (!k || !m) return std::nullopt;
    if (*m >= world) {
      check_rank(static_cast<long>(*m), node["offset"]);
      return std::nullopt;
    }
    sel.kind = RankSelector::Kind::kEvery;
    sel.every = static_cast<int>(*k);
    sel.offset = static_cast<int>(*m);
    return sel;
  }
  diags.error(at(node, file), expected + ", got " + kind_of(node));
  return std::nullopt;
}

}  // namespace racesim::scenario
