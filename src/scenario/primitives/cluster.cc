// The cluster family (see cluster.h): the collective and record primitives, the collective
// fault kinds and the device checks.
#include "src/scenario/execute/draw.h"
#include "src/scenario/primitives/cluster.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "sim/collective/faults.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/live_link.h"
#include "sim/runtime/dtensor.h"

namespace racesim::scenario {

namespace {
// The exec timeout shows where the host waits (the comm queue's sync, as HCCL's stream sync);
// the device side waits without one, which also keeps one timer per collective out of the
// event queue.
collective::Config device_side(collective::Config c) {
  c.exec_timeout = kernel::kTimeMax;
  return c;
}
}  // namespace

ClusterRuntime::ClusterRuntime(RunState& run)
    : run_(run), sim_(run.sim()), platform_(run.platform()), world_(run.world()), faults_(&run.faults()) {
  start_engine();
}

void ClusterRuntime::start_engine() {
  engine_ = std::make_unique<collective::Engine>(sim_, device_side(platform_.collective));
  engine_->set_faults(faults_);
  // A rank's main process stands for it in deadlock reports; its comm queue registers the
  // process that uses it (a restarted rank's new one).
  for (std::size_t r = 0; r < run_.rank_processes().size(); ++r) {
    engine_->set_process(static_cast<int>(r), run_.rank_processes()[r]);
  }
}

void ClusterRuntime::group_restarted() {
  // Keeps the counts of the collectives done so far and each device's peak; the old engine,
  // queues and devices stay alive until the run ends (callbacks they scheduled may still fire)
  // but no step reaches them again.
  const auto& st = engine_->stats();
  retired_.collectives += st.collectives;
  retired_.bytes_moved += st.bytes_moved;
  for (double w : st.wait_s) retired_wait_s_ = std::max(retired_wait_s_, w);
  for (const auto& d : devices_) {
    if (!d) continue;
    any_device_ = true;
    retired_peak_ = std::max(retired_peak_, static_cast<double>(d->peak()));
  }
  graveyard_.push_back({std::move(engine_), std::move(queues_), std::move(devices_)});
  queues_.clear();
  devices_.clear();
  world_comm_ = nullptr;
  by_rank_[0].clear();
  by_rank_[1].clear();
  carried_ = collective::CarriedValues();
  start_engine();  // communicators formed anew, numbered from 1
}

void ClusterRuntime::explain(std::vector<std::string>& lines) const {
  for (int r = 0; r < world_; ++r) {
    const std::string w = engine_->describe_wait(r);
    if (!w.empty()) lines.push_back("rank " + std::to_string(r) + ": " + w);
  }
}

std::string ClusterRuntime::deadlock_cause() const {
  const std::vector<std::string> m = engine_->mismatches();
  if (m.empty()) return "";
  return m.front() + (m.size() > 1 ? " (and " + std::to_string(m.size() - 1) + " more mismatched collectives)" : "");
}

device::Device& ClusterRuntime::device(int rank) {
  if (devices_.empty()) devices_.resize(static_cast<std::size_t>(world_));
  auto& slot = devices_.at(static_cast<std::size_t>(rank));
  if (!slot) {
    slot = std::make_unique<device::Device>(sim_, "rank " + std::to_string(rank), platform_.device);
    slot->set_faults(faults_, rank);
  }
  return *slot;
}

collective::CommQueue& ClusterRuntime::queue(int rank) {
  if (queues_.empty()) queues_.resize(static_cast<std::size_t>(world_));
  auto& slot = queues_.at(static_cast<std::size_t>(rank));
  if (!slot) slot = std::make_unique<collective::CommQueue>(sim_, *engine_, rank);
  return *slot;
}

collective::Communicator& ClusterRuntime::comm(const std::string& name, int rank) {
  if (!world_comm_) {
    std::vector<int> all(static_cast<std::size_t>(world_));
    for (int r = 0; r < world_; ++r) all[static_cast<std::size_t>(r)] = r;
    world_comm_ = &engine_->communicator("world", all);
  }
  if (name == "world") return *world_comm_;
  const int dim = name == "ep" ? 0 : 1;
  auto& cache = by_rank_[dim];
  if (cache.empty()) cache.assign(static_cast<std::size_t>(world_), nullptr);
  collective::Communicator*& slot = cache[static_cast<std::size_t>(rank)];
  if (!slot) {
    // The group is every member's: built once, for all of them (building it for each member
    // is O(group size) each, O(ranks^2) for a group of every rank: 16% of a DTensor load's
    // instructions at 4,096 ranks).
    const int ep = platform_.mesh.ep;
    const runtime::DeviceMesh mesh({{"ep", ep}, {"fsdp", world_ / ep}});
    const std::vector<int> group = mesh.group(rank, dim);
    collective::Communicator* c =
        static_cast<int>(group.size()) == world_ ? world_comm_ : &engine_->communicator(name, group);
    // Bounded by the group's size; each member's slot is filled once.
    for (int m : group) cache[static_cast<std::size_t>(m)] = c;
  }
  return *slot;
}

void ClusterRuntime::metrics(std::map<std::string, double>& out) const {
  const auto& st = engine_->stats();
  out["collective.count"] = static_cast<double>(st.collectives + retired_.collectives);
  out["collective.bytes_moved"] = st.bytes_moved + retired_.bytes_moved;
  double wait = retired_wait_s_;
  for (double w : st.wait_s) wait = std::max(wait, w);
  out["collective.wait_s"] = wait;
  double peak = retired_peak_;
  bool any = any_device_;
  for (const auto& d : devices_) {
    if (!d) continue;
    any = true;
    peak = std::max(peak, static_cast<double>(d->peak()));
  }
  if (any) out["device.peak_bytes"] = peak;
}

namespace {

using kernel::Time;


// ---- collective ----

struct CollectiveStep final : Step {
  std::string comm;         // world, ep, fsdp; or a name for `ranks`
  std::vector<int> ranks;   // an explicit communicator (comm: {name: N, ranks: [...]})
  collective::Op op = collective::Op::kBarrier;
  Distribution bytes = Distribution::constant(0, Unit::kBytes);
  int root = 0;
  // A carried value (`value: LOCAL`): the local's slot, and how the members' values combine.
  int value_slot = -1;
  collective::Reduce reduce = collective::Reduce::kRoot;
  std::string value_name;
  std::string describe(const RankContext& ctx) const override {
    (void)ctx;
    return std::string(collective::to_string(op)) + " on " + comm +
           (bytes.is_constant() && bytes.a > 0 ? " (" + format_quantity(bytes.a, Unit::kBytes) + ")" : "") +
           (value_slot >= 0 ? " of " + value_name : "");
  }
  // After the sync every collective this rank enqueued on the communicator has run: this one
  // is its last.
  std::string trace_end_args(const RankContext& ctx) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    const collective::Communicator& cm = communicator(c, ctx);
    return "{\"communicator\":\"" + kernel::json_escape(cm.name()) + "\",\"seq\":" +
           std::to_string(cm.last_seq(ctx.rank)) + "}";
  }
  std::string live_refusal() const override {
    if (op == collective::Op::kBarrier && bytes.is_constant() && bytes.a == 0) return "";
    return std::string("collective ") + collective::to_string(op) +
           (op == collective::Op::kBarrier ? " with bytes" : "") +
           " has no live meaning yet (a live run has no devices to move data: it runs a collective barrier, "
           "op: barrier without bytes, as a barrier of the communicator's members)";
  }
  void run(RankContext& ctx) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    collective::Communicator& cm = communicator(c, ctx);
    if (LiveLink* live = ctx.run.live()) {
      // REQUIRES: live_refusal() is "" (check_live refused the program otherwise). The members
      // meet at a barrier of the board named after the communicator (cyclic: the next barrier
      // on it is the next generation); the collective is counted once, by its first member, as
      // the engine counts it.
      assert(live_refusal().empty() && "a live run REQUIRES a collective barrier");
      live->arrive_and_wait("collective barrier on " + cm.name(), cm.size());
      if (cm.group_rank(ctx.rank) == 0) ctx.run.add("collective.count", 1);
      return;
    }
    const std::uint64_t seq = issue(ctx, c, cm);
    complete(ctx, c, cm, seq, c.queue(ctx.rank).sync(&cm, c.platform().collective.exec_timeout));
  }
  // Simulated only (a stackless rank is never live).
  Stackless stackless() const override { return Stackless::kSplit; }
  bool arm(RankContext& ctx) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    collective::Communicator& cm = communicator(c, ctx);
    const std::uint64_t seq = issue(ctx, c, cm);
    collective::CommQueue& q = c.queue(ctx.rank);
    if (!q.arm_sync(&cm, c.platform().collective.exec_timeout)) {
      complete(ctx, c, cm, seq, q.status());
      return false;
    }
    ctx.wait_object = &cm;
    ctx.wait_value = seq;
    return true;
  }
  void after_wait(RankContext& ctx, kernel::WaitStatus status) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    const Time timeout = c.platform().collective.exec_timeout;
    complete(ctx, c, *static_cast<collective::Communicator*>(ctx.wait_object), ctx.wait_value,
             c.queue(ctx.rank).sync_ended(status, timeout));
  }
  void abandon(RankContext& ctx) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    c.queue(ctx.rank).sync_ended(kernel::WaitStatus::kKilled, c.platform().collective.exec_timeout);
  }

 private:
  collective::Communicator& communicator(ClusterRuntime& c, const RankContext& ctx) const {
    return ranks.empty() ? c.comm(comm, ctx.rank) : c.engine().communicator(comm, ranks);
  }
  // Enqueues the call on the rank's comm queue (its value deposited first); returns its number
  // on the communicator.
  std::uint64_t issue(RankContext& ctx, ClusterRuntime& c, collective::Communicator& cm) const {
    collective::CommQueue& q = c.queue(ctx.rank);
    const auto b = static_cast<std::uint64_t>(std::max(0.0, draw(bytes, ctx)));
    // The call's number on the communicator: its value is deposited under it before the call
    // is issued, so every member's is there once the call completes.
    const std::uint64_t seq = q.enqueued(cm) + 1;
    if (value_slot >= 0) {
      c.carried().deposit(cm, seq, ctx.rank, ctx.local(value_slot), reduce,
                          collective::to_string(op));
    }
    q.enqueue(cm, {op, b, root});
    return seq;
  }
  // Once the sync returned `st`: its error, or the carried value taken.
  void complete(RankContext& ctx, ClusterRuntime& c, collective::Communicator& cm, std::uint64_t seq,
                const kernel::Status& st) const {
    if (!st.is_ok()) {
      ctx.run.add("collective.exec_timeouts", 1);
      raise_step_error(ctx, *this, "no_deadlock", st.message());
    }
    if (value_slot >= 0) {
      const auto v = c.carried().take(cm, seq, ctx.rank, root);
      if (!v) raise_step_error(ctx, *this, "no_errors", v.message());
      ctx.local(value_slot) = *v;
    }
  }
};

// `reduce:` of a collective that carries a value.
std::optional<collective::Reduce> parse_reduce(const Value& node, Compiler& c) {
  const std::string v = node.is_scalar() ? node.scalar() : "";
  for (auto r : {collective::Reduce::kSum, collective::Reduce::kMin, collective::Reduce::kMax,
                 collective::Reduce::kOr, collective::Reduce::kAnd}) {
    if (v == collective::to_string(r)) return r;
  }
  c.error(c.at(node), "collective reduce: expected sum, min, max, or or and");
  return std::nullopt;
}

std::unique_ptr<Step> compile_collective(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"op", "comm", "bytes", "root", "value", "reduce"}, {"op"}, "collective")) return nullptr;
  auto s = std::make_unique<CollectiveStep>();
  const Value op = args["op"];
  auto parsed = op.is_scalar() ? collective::op_from_string(op.scalar()) : std::nullopt;
  if (!parsed) {
    c.error(c.at(op), "collective op: expected broadcast, all_reduce, all_gather, reduce_scatter, all_to_all, scatter or barrier");
    return nullptr;
  }
  s->op = *parsed;
  if (const Value cm = args["comm"]; cm && cm.is_map()) {
    // An explicit communicator: {name: N, ranks: SELECTOR}; a rank outside it fails.
    if (!c.keys(cm, {"name", "ranks"}, {"name", "ranks"}, "collective comm")) return nullptr;
    auto name = c.text(cm["name"], "collective comm name");
    Diagnostics local;
    auto sel = parse_rank_selector(cm["ranks"], c.scenario().ranks, c.scenario().file, local);
    for (const auto& d : local.all()) c.error(d.where, d.message);
    if (!name || !sel) return nullptr;
    if (!name->is_literal() || cm["name"].scalar().find("${") != std::string::npos) {
      c.error(c.at(cm["name"]), "collective comm name: expected a fixed name (every member names it alike)");
      return nullptr;
    }
    s->comm = cm["name"].scalar();
    c.declare_comm(s->comm);
    for (int r = 0; r < c.scenario().ranks; ++r) {
      if (sel->contains(r)) s->ranks.push_back(r);
    }
  } else if (cm) {
    const std::string v = cm.is_scalar() ? cm.scalar() : "";
    if (v != "world" && v != "ep" && v != "fsdp") {
      c.error(c.at(cm), "collective comm: expected world, ep, fsdp (the rank's group along that mesh "
                        "dimension) or {name: N, ranks: SELECTOR}");
      return nullptr;
    }
    s->comm = v;
  } else {
    s->comm = "world";
  }
  if (args["bytes"]) {
    auto d = c.quantity(args["bytes"], Unit::kBytes, "collective bytes");
    if (!d) return nullptr;
    s->bytes = *d;
  }
  if (args["root"]) {
    auto r = c.count(args["root"], 0, 1'000'000, "collective root");
    if (!r) return nullptr;
    s->root = static_cast<int>(*r);
  }
  if (const Value v = args["value"]) {
    // A local that the collective carries: the root's (broadcast, as broadcast_object_list) or
    // the members' reduced (all_reduce), in every member's local when it returns.
    if (s->op != collective::Op::kBroadcast && s->op != collective::Op::kAllReduce) {
      c.error(c.at(v), "collective value: carried by broadcast and all_reduce only");
      return nullptr;
    }
    const std::string name = v.is_scalar() ? v.scalar() : "";
    const auto b = c.lookup(name);
    if (!b || b->kind != Binding::Kind::kLocal) {
      c.error(c.at(v), "collective value: expected a local declared by `let` before this step, got '" + name + "'");
      return nullptr;
    }
    s->value_slot = b->slot;
    s->value_name = name;
    s->reduce = s->op == collective::Op::kBroadcast ? collective::Reduce::kRoot : collective::Reduce::kSum;
    if (!args["bytes"]) s->bytes = Distribution::constant(8, Unit::kBytes);  // a number
  }
  if (const Value r = args["reduce"]) {
    if (s->op != collective::Op::kAllReduce || s->value_slot < 0) {
      c.error(c.at(r), "collective reduce: only an all_reduce that carries a value (value: LOCAL) reduces one");
      return nullptr;
    }
    auto how = parse_reduce(r, c);
    if (!how) return nullptr;
    s->reduce = *how;
  }
  if (s->value_slot >= 0 && !s->ranks.empty() && s->root >= static_cast<int>(s->ranks.size())) {
    c.error(c.at(args["root"]), "collective root: the communicator has " + std::to_string(s->ranks.size()) + " members");
    return nullptr;
  }
  return s;
}

// ---- record ----

// A reading of the rank's models, recorded into a series: device.peak_gib, device.used_gib.
struct RecordStep final : Step {
  std::string series;
  bool peak = true;
  void run(RankContext& ctx) const override {
    device::Device& dev = ctx.run.model<ClusterRuntime>().device(ctx.rank);
    const double bytes = static_cast<double>(peak ? dev.peak() : dev.used());
    ctx.run.sample(series, bytes / static_cast<double>(1ull << 30));
  }
};

std::unique_ptr<Step> compile_record(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"series", "value"}, {"series", "value"}, "record")) return nullptr;
  const Value series = args["series"], value = args["value"];
  if (!series.is_scalar() || !is_identifier(series.scalar())) {
    c.error(c.at(series), "record series: expected a name (an identifier)");
    return nullptr;
  }
  const std::string v = value.is_scalar() ? value.scalar() : "";
  if (v != "device.peak_gib" && v != "device.used_gib") {
    c.error(c.at(value), "record value: expected device.peak_gib or device.used_gib");
    return nullptr;
  }
  auto s = std::make_unique<RecordStep>();
  s->series = series.scalar();
  c.declare_series(s->series);
  c.declare_counter("device.peak_bytes");
  s->peak = v == "device.peak_gib";
  return s;
}

}  // namespace

void declare_cluster_metrics(Compiler& c) {
  for (const char* m : {"collective.count", "collective.bytes_moved", "collective.wait_s", "collective.exec_timeouts"}) {
    c.declare_counter(m);
  }
}

void register_cluster_family(Registry& r) {
  r.add_check({"shards_correct", false, "every rank's local shard is the one DTensor would give it"});
  r.add_check({"no_oom", false, "no device allocation exceeds the device's memory, and no host allocation its node's (platform.host)"});
  r.add_faults(collective::fault_kinds());
  r.add_live({"collective",
         "collective: {op: OP, comm: world|ep|fsdp|{name: N, ranks: SELECTOR}, bytes: BYTES, root: N, value: LOCAL, "
         "reduce: sum|min|max|or|and} - a collective on the rank's group, waited for (exec timeout: "
         "platform.collective); with value, a broadcast gives every member the root's local and an "
         "all_reduce the members' locals reduced",
         compile_collective, declare_cluster_metrics});
  r.add({"record",
         "record: {series: NAME, value: device.peak_gib|device.used_gib} - append a reading of the "
         "rank's device to a series (a metric: its maximum; `metrics:` derives others)",
         compile_record, declare_cluster_metrics});
}

}  // namespace racesim::scenario
