// The collective engine: communicators over ranks, rendezvous by (communicator, sequence
// number), mismatch detection, an exec timeout, and alpha-beta costs per algorithm.
//
// Semantics (as NCCL and HCCL): a rank's k-th collective on a communicator has sequence number
// k; it completes only when every member has issued its k-th collective there. Members that
// issue different calls at the same sequence number (another op, size or root) are a mismatch:
// `hang` (what the libraries do: nobody returns) or `error` (a debug mode: every member gets the
// error). A member that never issues it, or issues collectives on several communicators in an
// order that differs from the others', leaves the rest waiting: with no exec timeout the
// kernel reports the deadlock, naming per rank the collective, its communicator and number,
// who is missing and where they are blocked:
//
//   rank 1: scatter #5 on fsdp{0,1,2,3}: waiting for rank 3 (blocked in broadcast #6 on world)
//
// With an exec timeout (HCCL_EXEC_TIMEOUT, 1836 s by default in HCCL) the waiting call fails
// with the same description instead.
//
// Cost, once all have arrived (alpha-beta, ring algorithms; n members, S bytes, link bandwidth
// B and latency a; the link is intra-node when every member is on one node, else inter-node):
//   all_reduce                             2(n-1)/n * S/B + 2(n-1) a
//   all_gather, reduce_scatter, all_to_all  (n-1)/n * S/B + (n-1) a
//   broadcast                                        S/B + a
//   scatter                                 (n-1)/n * S/B + a
//   send (point to point, n = 2)                     S/B + a
//   barrier                                 ceil(log2 n) a
// S is the full buffer: the broadcast tensor, the gathered (or reduced) whole.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kernel/faults.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/status.h"

namespace racesim::collective {

using kernel::Time;

// kSend is a point-to-point send and its receive: a collective of a two-member communicator,
// root the sender's index there.
enum class Op : std::uint8_t { kBroadcast, kAllReduce, kAllGather, kReduceScatter, kAllToAll, kScatter, kBarrier, kSend };
const char* to_string(Op op);
std::optional<Op> op_from_string(std::string_view name);

struct Link {
  double bandwidth = 50e9;  // bytes/s
  Time latency = 5 * kernel::kMicrosecond;
};

struct Config {
  int ranks_per_node = 8;  // 0: all on one node
  Link intra{50e9, 5 * kernel::kMicrosecond};
  Link inter{12.5e9, 20 * kernel::kMicrosecond};
  bool mismatch_hangs = true;
  Time exec_timeout = kernel::kTimeMax;
};

struct Call {
  Call() = default;
  Call(Op op_in, std::uint64_t bytes_in, int root_in) : bytes(bytes_in), root(root_in), op(op_in) {}
  // In this order a call is 16 bytes: a rank's comm queue holds one per waiting collective.
  std::uint64_t bytes = 0;
  int root = 0;  // the root's index in the communicator (broadcast, scatter)
  Op op = Op::kBarrier;
  bool operator==(const Call&) const = default;
};
static_assert(sizeof(Call) == 16, "a Call is held per waiting collective of every rank: keep it small");
std::string to_string(const Call& call);  // "broadcast 4 MiB from 0"
// Sorted ranks as text, runs of five or more as ranges: "0,1,2,3", "0-7", "0,8", "0-4,9".
std::string rank_list(const std::vector<int>& ranks);

struct Stats {
  std::uint64_t collectives = 0;      // completed
  double bytes_moved = 0;             // sent over links, summed over members
  std::vector<double> wait_s;         // by rank: time from its arrivals to the last arrivals
};

class Engine;

// A member of a collective that waits without a process (a rank's comm queue: the device runs
// collectives, the host does not block in them). Told once, from a callback, when its
// collective ends: at completion plus the collective's cost (ok), at the failure of a mismatch
// in error mode, or at its exec timeout (the same messages as Engine::run returns).
class Arrival {
 public:
  virtual void collective_done(const kernel::Status& st) = 0;

 protected:
  ~Arrival() = default;
};

class Communicator {
 public:
  // "fsdp{0,1,2,3}"; "world" for the communicator of every rank.
  const std::string& name() const { return name_; }
  // The label it was created with ("fsdp", "world"): what a fault plan aims at.
  const std::string& label() const { return label_; }
  const std::vector<int>& ranks() const { return ranks_; }
  int size() const { return static_cast<int>(ranks_.size()); }
  // The rank's index in the communicator, or -1.
  int group_rank(int rank) const;
  // The sequence number of the rank's last collective on it that has started (0: none yet).
  // REQUIRES: the rank is a member.
  std::uint64_t last_seq(int rank) const { return next_seq_.at(static_cast<std::size_t>(group_rank(rank))) - 1; }

 private:
  friend class Engine;
  struct Rendezvous;
  std::string label_;
  std::string name_;
  std::vector<int> ranks_;
  std::vector<std::uint64_t> next_seq_;  // per member
  std::map<std::uint64_t, std::shared_ptr<Rendezvous>> pending_;
};

class Engine {
 public:
  Engine(kernel::Simulation& sim, Config config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  const Config& config() const { return config_; }
  const Stats& stats() const { return stats_; }
  // The run's fault seam (sim/collective/faults.h: slow_link at collective.enter); nullptr: none.
  void set_faults(kernel::FaultSeam* seam) { faults_ = seam; }

  // The communicator `label` over `ranks` (sorted, distinct; created on first use). The world
  // communicator is label "world" over every rank.
  Communicator& communicator(const std::string& label, std::vector<int> ranks);
  // Registers the process that acts for `rank`, so that deadlock reports can say where a
  // missing member is. REQUIRES: rank >= 0.
  void set_process(int rank, const kernel::Process* p);
  // The process registered for `rank`, or nullptr.
  const kernel::Process* process_of(int rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < processes_.size() ? processes_[static_cast<std::size_t>(rank)] : nullptr;
  }

  // Issues `call` as `rank` on `comm` and blocks until it completes (REQUIRES: a simulated
  // process). Errors: the rank is not a member; a mismatch in error mode; the exec timeout
  // (the message describes the wait, as in deadlock reports).
  kernel::Status run(Communicator& comm, int rank, const Call& call);
  // Issues `call` as `rank` on `comm` without blocking (callable from a process or a
  // callback). An error found on arrival (not a member, a mismatch in error mode) is returned
  // and `done` is not told; otherwise `done` is told once when the collective ends (Arrival).
  // REQUIRES: `done` outlives the run, or the rank's collectives end before it dies.
  kernel::Status start(Communicator& comm, int rank, const Call& call, Arrival& done);

  // The alpha-beta cost, without faults.
  Time cost(const Communicator& comm, const Call& call) const;
  // Whether every member of `comm` is on one node (its collectives use the intra-node link).
  bool intra_node(const Communicator& comm) const;
  double bytes_moved(const Communicator& comm, const Call& call) const;
  // Where `rank` is blocked: "scatter #5 on fsdp{0,1,2,3}: waiting for rank 3 (blocked in
  // broadcast #6 on world); arrived: ranks 0,1,2"; "" when it is not in a collective.
  std::string describe_wait(int rank) const;
  // Every collective in progress whose members issued different calls ("mismatch at broadcast #4
  // on world: rank 0 issued broadcast 1 KiB from 0, rank 1 all_reduce 1 KiB"), by communicator
  // and sequence number: under `mismatch: hang` the cause of a deadlock.
  std::vector<std::string> mismatches() const;
  // What `rank` is in: "scatter #5 on fsdp{0,1,2,3}"; "" when it is not in a collective.
  std::string current_label(int rank) const;
  // Appends the registered processes of the members that `rank`'s current collective still
  // waits for (nothing when it is in none): who can release it, for deadlock reports.
  void missing_members(int rank, std::vector<const kernel::Process*>& out) const;

 private:
  struct Current {
    Communicator* comm = nullptr;
    std::uint64_t seq = 0;
    Call call;
  };
  std::string label(const Current& c) const;  // "scatter #5 on fsdp{0,1,2,3}"
  // Records `rank`'s arrival at its next collective on `comm` (nullptr and `st` set: not a
  // member). `st` is set to the mismatch error when the rendezvous failed (error mode).
  std::shared_ptr<Communicator::Rendezvous> join(Communicator& comm, int rank, const Call& call,
                                                 kernel::Status& st);
  // The last arrival: costs, statistics, wakes the waiting processes and tells the waiting
  // Arrivals at now + cost.
  void complete(Communicator& comm, Communicator::Rendezvous& rv, const Call& call);
  // Tells every waiting Arrival of `rv` that its collective ended with `st`, from one callback
  // at `at` (cancelling their exec timeouts).
  void tell_arrivals(Communicator::Rendezvous& rv, Time at, const kernel::Status& st);
  static kernel::Status mismatch_error(const Communicator::Rendezvous& rv);
  // "exec timeout after 1836s in <describe_wait(rank)>" (before `rank` leaves the collective).
  kernel::Status timeout_error(int rank) const;
  void leave(int rank) { current_[static_cast<std::size_t>(rank)].comm = nullptr; }
  // The fault point collective.enter: the largest slow_link factor among the members of `comm`
  // (1 without one).
  double slow_factor(const Communicator& comm);

  kernel::Simulation& sim_;
  Config config_;
  Stats stats_;
  std::map<std::pair<std::string, std::vector<int>>, std::unique_ptr<Communicator>> comms_;
  std::vector<Current> current_;  // by rank; comm == nullptr: not in a collective
  const Current* current(int rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < current_.size() && current_[static_cast<std::size_t>(rank)].comm
               ? &current_[static_cast<std::size_t>(rank)]
               : nullptr;
  }
  std::vector<const kernel::Process*> processes_;  // by rank; nullptr where none is registered
  kernel::FaultSeam* faults_ = nullptr;
};

}  // namespace racesim::collective
