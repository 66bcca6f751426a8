// Small values carried by collectives (see carried_values.h).
#include "sim/collective/carried_values.h"

#include <algorithm>
#include <cassert>

namespace racesim::collective {

const char* to_string(Reduce r) {
  switch (r) {
    case Reduce::kRoot: return "the root's";
    case Reduce::kSum: return "sum";
    case Reduce::kMin: return "min";
    case Reduce::kMax: return "max";
    case Reduce::kOr: return "or";
    case Reduce::kAnd: return "and";
  }
  return "?";
}

void CarriedValues::deposit(const Communicator& comm, std::uint64_t seq, int rank, double value, Reduce how,
                            const char* what) {
  const int g = comm.group_rank(rank);
  assert(g >= 0 && "deposit REQUIRES a member");
  Entry& e = entries_[{&comm, seq}];
  if (e.values.empty()) {
    const auto n = static_cast<std::size_t>(comm.size());
    e.values.assign(n, 0);
    e.how.assign(n, Reduce::kRoot);
    e.deposited.assign(n, false);
    e.untaken = comm.size();
    e.what = what;
  }
  const auto i = static_cast<std::size_t>(g);
  assert(!e.deposited[i] && "a member deposits once per collective");
  e.values[i] = value;
  e.how[i] = how;
  e.deposited[i] = true;
}

kernel::Result<double> CarriedValues::take(const Communicator& comm, std::uint64_t seq, int rank, int root) {
  const auto it = entries_.find({&comm, seq});
  assert(it != entries_.end() && "take REQUIRES the rank's own deposit");
  Entry& e = it->second;
  const auto g = static_cast<std::size_t>(comm.group_rank(rank));
  const Reduce how = e.how[g];
  const std::string name = std::string(e.what) + " #" + std::to_string(seq) + " on " + comm.name();
  // Who carried nothing, and who reduced otherwise (each a short list of ranks).
  std::vector<int> none, other;
  for (std::size_t i = 0; i < e.values.size(); ++i) {
    if (!e.deposited[i]) none.push_back(comm.ranks()[i]);
    else if (e.how[i] != how) other.push_back(comm.ranks()[i]);
  }
  std::string error;
  if (how == Reduce::kRoot && (root < 0 || root >= comm.size())) {
    error = name + ": root " + std::to_string(root) + " is not a member index (the communicator has " +
            std::to_string(comm.size()) + " members)";
  } else if (!none.empty()) {
    error = name + " carries a value on rank " + std::to_string(rank) + " but none on " +
            (none.size() > 1 ? "ranks " : "rank ") + rank_list(none) + " (issued there without `value:`)";
  } else if (!other.empty()) {
    error = name + ": rank " + std::to_string(rank) + " reduces by " + to_string(how) + ", " +
            (other.size() > 1 ? "ranks " : "rank ") + rank_list(other) + " otherwise";
  }
  double result = 0;
  if (error.empty()) {
    const std::vector<double>& v = e.values;
    switch (how) {
      case Reduce::kRoot:
        result = v.at(static_cast<std::size_t>(root));
        break;
      case Reduce::kSum:
        for (double x : v) result += x;
        break;
      case Reduce::kMin:
        result = *std::min_element(v.begin(), v.end());
        break;
      case Reduce::kMax:
        result = *std::max_element(v.begin(), v.end());
        break;
      case Reduce::kOr:
        result = std::any_of(v.begin(), v.end(), [](double x) { return x != 0; }) ? 1 : 0;
        break;
      case Reduce::kAnd:
        result = std::all_of(v.begin(), v.end(), [](double x) { return x != 0; }) ? 1 : 0;
        break;
    }
  }
  if (--e.untaken == 0) entries_.erase(it);
  if (!error.empty()) return kernel::Result<double>::error(error);
  return result;
}

}  // namespace racesim::collective
