// Small values carried by collectives: what `broadcast_object_list` of a flag or an
// `all_reduce` of "does the file exist" gives each member, beside the collective's timing (the
// engine's). A member deposits its value before it issues its call and takes the result once
// the call has completed; the result is the root's value (a broadcast) or the reduction of
// every member's (sum, min, max, or, and). Keyed by (communicator, sequence number): the k-th
// collective of every member on a communicator is one collective (engine.h).
//
// A collective some of whose members carried no value, or carried it for another reduction,
// has no result: take() says which members and how, naming the collective as the engine does
// ("all_reduce #4 on world").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/collective/engine.h"
#include "sim/kernel/status.h"

namespace racesim::collective {

enum class Reduce : std::uint8_t { kRoot, kSum, kMin, kMax, kOr, kAnd };
const char* to_string(Reduce r);  // "the root's", "sum", "min", ...

class CarriedValues {
 public:
  // Rank `rank`'s value for its collective number `seq` on `comm` (named `what`: "all_reduce"),
  // reduced as `how`. REQUIRES: the rank is a member; it deposits once per collective.
  void deposit(const Communicator& comm, std::uint64_t seq, int rank, double value, Reduce how, const char* what);
  // The result for `rank`, after its collective number `seq` on `comm` completed (every member
  // has deposited by then, or never will), with `root` the root's index in the communicator.
  // The entry goes once every member has taken its result. Errors: members that carried no
  // value, or another reduction.
  kernel::Result<double> take(const Communicator& comm, std::uint64_t seq, int rank, int root);
  // Collectives deposited for whose results not every member has come (a member that died
  // after its call): bounded by the run's collectives.
  std::size_t pending() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<double> values;   // by group rank
    std::vector<Reduce> how;      // by group rank
    std::vector<bool> deposited;  // by group rank
    int untaken = 0;              // members yet to take the result
    const char* what = "";
  };
  std::map<std::pair<const Communicator*, std::uint64_t>, Entry> entries_;
};

}  // namespace racesim::collective
