#include "sim/collective/engine.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "sim/collective/faults.h"
#include "sim/kernel/bytes.h"

namespace racesim::collective {

const char* to_string(Op op) {
  switch (op) {
    case Op::kBroadcast: return "broadcast";
    case Op::kAllReduce: return "all_reduce";
    case Op::kAllGather: return "all_gather";
    case Op::kReduceScatter: return "reduce_scatter";
    case Op::kAllToAll: return "all_to_all";
    case Op::kScatter: return "scatter";
    case Op::kSend: return "send";
    case Op::kBarrier: return "barrier";
  }
  return "?";
}

std::optional<Op> op_from_string(std::string_view name) {
  for (Op op : {Op::kBroadcast, Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll,
                Op::kScatter, Op::kBarrier, Op::kSend}) {
    if (name == to_string(op)) return op;
  }
  return std::nullopt;
}


std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j - i >= 4) {  // runs of five or more: "0-7"
      out += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
    } else {
      for (std::size_t k = i; k <= j; ++k) out += (k > i ? "," : "") + std::to_string(ranks[k]);
    }
    i = j + 1;
  }
  return out;
}

std::string to_string(const Call& call) {
  std::string s = to_string(call.op);
  if (call.op != Op::kBarrier) s += " " + kernel::format_bytes(call.bytes);
  if (call.op == Op::kBroadcast || call.op == Op::kScatter || call.op == Op::kSend) {
    s += " from " + std::to_string(call.root);
  }
  return s;
}

int Communicator::group_rank(int rank) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank);
  return it != ranks_.end() && *it == rank ? static_cast<int>(it - ranks_.begin()) : -1;
}

// One (communicator, sequence number): who has arrived with which call.
struct Communicator::Rendezvous final : kernel::Waitable {
  Rendezvous(const Engine* e, Communicator* c, std::uint64_t s, const Call& first)
      : engine(e), comm(c), seq(s), call(first), arrived(c->ranks().size(), false),
        arrived_at(c->ranks().size(), 0) {}
  const Engine* engine;
  Communicator* comm;
  std::uint64_t seq;
  Call call;                            // the first arrival's
  std::vector<bool> arrived;            // by group rank
  std::vector<Time> arrived_at;
  int count = 0;
  std::string mismatch;                 // the first disagreement, if any
  bool failed = false;
  Time cost = 0;
  kernel::WaitQueue waiters{this, ""};  // members that wait in run()
  // Members that wait without a process (start()), in arrival order; `timeout`: their exec
  // timeout's callback, when the engine has one.
  struct Notify {
    Arrival* arrival;
    int rank;
    kernel::EventHandle timeout;
  };
  std::vector<Notify> notify;

  std::string describe() const override {
    std::string s = std::string(to_string(call.op)) + " #" + std::to_string(seq) + " on " + comm->name();
    if (!mismatch.empty()) s += " (mismatch: " + mismatch + ")";
    return s;
  }
  void releasers(const kernel::WaitQueue&, const kernel::Process&,
                 std::vector<const kernel::Process*>& out) const override {
    missing(out);
  }
  // The registered processes of the members that have not arrived.
  void missing(std::vector<const kernel::Process*>& out) const {
    for (std::size_t i = 0; i < arrived.size(); ++i) {
      if (arrived[i]) continue;
      if (const kernel::Process* p = engine->process_of(comm->ranks()[i])) out.push_back(p);
    }
  }
};

Engine::Engine(kernel::Simulation& sim, Config config) : sim_(sim), config_(config) {}
Engine::~Engine() = default;

Communicator& Engine::communicator(const std::string& label, std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  auto& slot = comms_[{label, ranks}];
  if (!slot) {
    slot = std::make_unique<Communicator>();
    slot->label_ = label;
    slot->name_ = label;
    if (label != "world") slot->name_ += "{" + rank_list(ranks) + "}";
    slot->ranks_ = std::move(ranks);
    slot->next_seq_.assign(slot->ranks_.size(), 1);
  }
  return *slot;
}

void Engine::set_process(int rank, const kernel::Process* p) {
  assert(rank >= 0 && "set_process REQUIRES a rank");
  const auto r = static_cast<std::size_t>(rank);
  if (r >= processes_.size()) processes_.resize(r + 1, nullptr);
  processes_[r] = p;
}

bool Engine::intra_node(const Communicator& comm) const {
  if (config_.ranks_per_node <= 0 || comm.ranks().empty()) return true;
  const int node = comm.ranks().front() / config_.ranks_per_node;
  for (int r : comm.ranks()) {
    if (r / config_.ranks_per_node != node) return false;
  }
  return true;
}

double Engine::slow_factor(const Communicator& comm) {
  if (faults_ == nullptr || faults_->empty()) return 1;
  const kernel::FaultTarget link{kernel::ResourceKind::kLink, intra_node(comm) ? "intra" : "inter"};
  double factor = 1;
  // Bounded by the number of members.
  for (int r : comm.ranks()) {
    if (kernel::ActiveFault* f = faults_->find(kSlowLink, r, {{kernel::ResourceKind::kComm, comm.label()}, link})) {
      f->bit();
      factor = std::max(factor, f->sample("factor"));
    }
  }
  return factor;
}

Time Engine::cost(const Communicator& comm, const Call& call) const {
  const int n = comm.size();
  if (n <= 1) return 0;
  const Link& l = intra_node(comm) ? config_.intra : config_.inter;
  assert(l.bandwidth > 0 && l.latency >= 0 && "a link has a positive bandwidth and a latency");
  const double s = static_cast<double>(call.bytes) / l.bandwidth;  // seconds
  const double a = kernel::to_seconds(l.latency);
  const double f = static_cast<double>(n - 1) / n;
  double t = 0;
  switch (call.op) {
    case Op::kAllReduce: t = 2 * f * s + 2 * (n - 1) * a; break;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: t = f * s + (n - 1) * a; break;
    case Op::kBroadcast:
    case Op::kSend: t = s + a; break;
    case Op::kScatter: t = f * s + a; break;
    case Op::kBarrier: t = std::ceil(std::log2(static_cast<double>(n))) * a; break;
  }
  return kernel::duration_of_seconds(t);
}

double Engine::bytes_moved(const Communicator& comm, const Call& call) const {
  const double n = comm.size(), s = static_cast<double>(call.bytes);
  switch (call.op) {
    case Op::kAllReduce: return 2 * (n - 1) * s;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
    case Op::kBroadcast: return (n - 1) * s;
    case Op::kScatter: return (n - 1) / n * s;
    case Op::kSend: return s;
    case Op::kBarrier: return 0;
  }
  return 0;
}

std::string Engine::label(const Current& c) const {
  return std::string(to_string(c.call.op)) + " #" + std::to_string(c.seq) + " on " + c.comm->name();
}

std::string Engine::describe_wait(int rank) const {
  const Current* cur = current(rank);
  if (!cur) return "";
  const Current& c = *cur;
  std::string s = label(c);
  auto p = c.comm->pending_.find(c.seq);
  if (p == c.comm->pending_.end()) return s;
  const auto& rv = *p->second;
  if (!rv.mismatch.empty()) s += " (mismatch: " + rv.mismatch + ")";
  // Missing members grouped by where they are: "rank 3 (blocked in broadcast #6 on world)",
  // "ranks 0-6 (blocked in scatter #1 on fsdp{0-7})".
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (std::size_t i = 0; i < rv.arrived.size(); ++i) {
    if (rv.arrived[i]) continue;
    const int m = c.comm->ranks()[i];
    std::string where = "not in a collective";
    if (const Current* w = current(m)) {
      where = "blocked in " + label(*w);
    } else if (const kernel::Process* proc = process_of(m); proc != nullptr && proc->finished()) {
      where = proc->exit_description();
    }
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == where; });
    if (g == groups.end()) {
      groups.push_back({where, {m}});
    } else {
      g->second.push_back(m);
    }
  }
  std::string missing;
  for (const auto& [where, ranks] : groups) {
    missing += (missing.empty() ? "" : ", ") + std::string(ranks.size() > 1 ? "ranks " : "rank ") +
               rank_list(ranks) + " (" + where + ")";
  }
  if (!missing.empty()) s += ": waiting for " + missing;
  std::vector<int> arrived;
  for (std::size_t i = 0; i < rv.arrived.size(); ++i) {
    if (rv.arrived[i]) arrived.push_back(c.comm->ranks()[i]);
  }
  s += std::string("; arrived: ") + (arrived.size() > 1 ? "ranks " : "rank ") + rank_list(arrived);
  return s;
}

std::string Engine::current_label(int rank) const {
  const Current* c = current(rank);
  return c ? label(*c) : std::string();
}

void Engine::missing_members(int rank, std::vector<const kernel::Process*>& out) const {
  const Current* c = current(rank);
  if (!c) return;
  auto p = c->comm->pending_.find(c->seq);
  if (p != c->comm->pending_.end()) p->second->missing(out);
}

kernel::Status Engine::timeout_error(int rank) const {
  return kernel::Status::error("exec timeout after " + kernel::format_duration(config_.exec_timeout) + " in " +
                               describe_wait(rank));
}

kernel::Status Engine::mismatch_error(const Communicator::Rendezvous& rv) {
  return kernel::Status::error("mismatch at " + std::string(to_string(rv.call.op)) + " #" + std::to_string(rv.seq) +
                               " on " + rv.comm->name() + ": " + rv.mismatch);
}

std::vector<std::string> Engine::mismatches() const {
  std::vector<std::string> out;
  for (const auto& [key, comm] : comms_) {
    for (const auto& [seq, rv] : comm->pending_) {
      if (!rv->mismatch.empty()) out.push_back(mismatch_error(*rv).message());
    }
  }
  return out;
}

std::shared_ptr<Communicator::Rendezvous> Engine::join(Communicator& comm, int rank, const Call& call,
                                                       kernel::Status& st) {
  const int g = comm.group_rank(rank);
  if (g < 0) {
    st = kernel::Status::error("rank " + std::to_string(rank) + " is not a member of " + comm.name());
    return nullptr;
  }
  const std::uint64_t seq = comm.next_seq_[static_cast<std::size_t>(g)]++;
  auto& slot = comm.pending_[seq];
  if (!slot) slot = std::make_shared<Communicator::Rendezvous>(this, &comm, seq, call);
  std::shared_ptr<Communicator::Rendezvous> rv = slot;
  // Sequence numbers are per member and only grow, so a member reaches each rendezvous once.
  assert(rv->seq == seq && rv->comm == &comm);
  assert(!rv->arrived[static_cast<std::size_t>(g)] && "a rank arrives once per rendezvous");
  assert(rv->count < comm.size() && "a rendezvous has at most one arrival per member");
  if (static_cast<std::size_t>(rank) >= current_.size()) current_.resize(static_cast<std::size_t>(rank) + 1);
  current_[static_cast<std::size_t>(rank)] = {&comm, seq, call};
  rv->arrived[static_cast<std::size_t>(g)] = true;
  rv->arrived_at[static_cast<std::size_t>(g)] = sim_.now();
  ++rv->count;
  if (!(call == rv->call) && rv->mismatch.empty()) {
    // Named after the first member that arrived with the reference call.
    for (std::size_t i = 0; i < rv->arrived.size(); ++i) {
      if (rv->arrived[i] && comm.ranks()[i] != rank) {
        rv->mismatch = "rank " + std::to_string(comm.ranks()[i]) + " issued " + to_string(rv->call) +
                       ", rank " + std::to_string(rank) + " " + to_string(call);
        break;
      }
    }
    if (!config_.mismatch_hangs) {
      rv->failed = true;
      // Bounded by the number of members.
      sim_.wake_all(rv->waiters);
      tell_arrivals(*rv, sim_.now(), mismatch_error(*rv));
    }
  }
  if (rv->failed) st = mismatch_error(*rv);
  return rv;
}

void Engine::tell_arrivals(Communicator::Rendezvous& rv, Time at, const kernel::Status& st) {
  assert(at >= sim_.now() && "members are told no earlier than now");
  if (rv.notify.empty()) return;
  for (const auto& n : rv.notify) sim_.cancel(n.timeout);
  // One event for every member that waits without a process, told in the order they arrived.
  sim_.schedule_at(at, [this, notify = std::move(rv.notify), st] {
    for (const auto& n : notify) {
      leave(n.rank);
      n.arrival->collective_done(st);
    }
  });
  rv.notify.clear();
}

void Engine::complete(Communicator& comm, Communicator::Rendezvous& rv, const Call& call) {
  assert(rv.count == comm.size() && rv.mismatch.empty() && "only a whole, matching rendezvous completes");
  assert(!rv.failed);
  rv.cost = cost(comm, call);
  if (faults_ != nullptr && !faults_->empty()) {
    rv.cost = kernel::to_time(static_cast<double>(rv.cost) * slow_factor(comm));
  }
  ++stats_.collectives;
  assert(rv.cost >= 0);
  stats_.bytes_moved += bytes_moved(comm, call);
  for (std::size_t i = 0; i < rv.arrived_at.size(); ++i) {
    const auto r = static_cast<std::size_t>(comm.ranks()[i]);
    if (r >= stats_.wait_s.size()) stats_.wait_s.resize(r + 1, 0.0);
    stats_.wait_s[r] += kernel::to_seconds(sim_.now() - rv.arrived_at[i]);
  }
  // Bounded by the number of members.
  sim_.wake_all(rv.waiters);
  tell_arrivals(rv, kernel::add_time(sim_.now(), rv.cost), kernel::Status::ok());
  comm.pending_.erase(rv.seq);  // last: may destroy `rv` (callers hold a reference)
}

kernel::Status Engine::run(Communicator& comm, int rank, const Call& call) {
  kernel::Status st = kernel::Status::ok();
  std::shared_ptr<Communicator::Rendezvous> rv = join(comm, rank, call, st);
  if (!rv) return st;
  auto finish = [&](kernel::Status s) {
    leave(rank);
    return s;
  };
  if (!st.is_ok()) return finish(st);
  if (rv->count == comm.size() && rv->mismatch.empty()) {
    complete(comm, *rv, call);  // the last arrival
  } else {
    const auto w = sim_.wait_on(&rv->waiters, sim_.deadline_after(config_.exec_timeout));
    if (w == kernel::WaitStatus::kTimeout) {
      return finish(timeout_error(rank));
    }
    if (rv->failed) return finish(mismatch_error(*rv));
  }
  if (rv->cost > 0) sim_.sleep_for(rv->cost);
  return finish(kernel::Status::ok());
}

kernel::Status Engine::start(Communicator& comm, int rank, const Call& call, Arrival& done) {
  kernel::Status st = kernel::Status::ok();
  std::shared_ptr<Communicator::Rendezvous> rv = join(comm, rank, call, st);
  if (!rv) return st;
  if (!st.is_ok()) {
    leave(rank);
    return st;
  }
  kernel::EventHandle timeout;
  if (config_.exec_timeout != kernel::kTimeMax) {
    timeout = sim_.schedule_at(sim_.deadline_after(config_.exec_timeout), [this, rv, rank] {
      auto it = std::find_if(rv->notify.begin(), rv->notify.end(), [&](const auto& n) { return n.rank == rank; });
      if (it == rv->notify.end()) return;  // told already
      Arrival* a = it->arrival;
      rv->notify.erase(it);
      const kernel::Status st = timeout_error(rank);
      leave(rank);
      a->collective_done(st);
    });
  }
  rv->notify.push_back({&done, rank, timeout});
  assert(rv->notify.size() <= static_cast<std::size_t>(comm.size()));
  if (rv->count == comm.size() && rv->mismatch.empty()) complete(comm, *rv, call);
  return kernel::Status::ok();
}

}  // namespace racesim::collective
