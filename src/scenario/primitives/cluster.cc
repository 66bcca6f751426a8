// Device and collective primitives (see cluster.h) and `load_weights`, the DTensor weight
// loading of VeOmni's rank0_load_and_broadcast_weights with each dispatch strategy.
#include "src/scenario/primitives/cluster.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/collective/faults.h"
#include "src/scenario/compiler.h"
#include "src/scenario/registry.h"
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
    : sim_(run.sim()), platform_(run.platform()), world_(run.world()), faults_(&run.faults()),
      engine_(sim_, device_side(platform_.collective)) {
  engine_.set_faults(faults_);
  // Until a rank has a comm queue, its main process stands for it in deadlock reports.
  for (std::size_t r = 0; r < run.rank_processes().size(); ++r) {
    engine_.set_process(static_cast<int>(r), run.rank_processes()[r]);
  }
}

void ClusterRuntime::explain(std::vector<std::string>& lines) const {
  for (int r = 0; r < world_; ++r) {
    const std::string w = engine_.describe_wait(r);
    if (!w.empty()) lines.push_back("rank " + std::to_string(r) + ": " + w);
  }
}

device::Device& ClusterRuntime::device(int rank) {
  auto& slot = devices_[rank];
  if (!slot) {
    slot = std::make_unique<device::Device>(sim_, "rank " + std::to_string(rank), platform_.device);
    slot->set_faults(faults_, rank);
  }
  return *slot;
}

collective::CommQueue& ClusterRuntime::queue(int rank) {
  auto& slot = queues_[rank];
  if (!slot) slot = std::make_unique<collective::CommQueue>(sim_, engine_, rank);
  return *slot;
}

collective::Communicator& ClusterRuntime::comm(const std::string& name, int rank) {
  if (!world_comm_) {
    std::vector<int> all(static_cast<std::size_t>(world_));
    for (int r = 0; r < world_; ++r) all[static_cast<std::size_t>(r)] = r;
    world_comm_ = &engine_.communicator("world", all);
  }
  if (name == "world") return *world_comm_;
  const int dim = name == "ep" ? 0 : 1;
  auto& cache = by_rank_[dim];
  if (cache.empty()) cache.assign(static_cast<std::size_t>(world_), nullptr);
  collective::Communicator*& slot = cache[static_cast<std::size_t>(rank)];
  if (!slot) {
    const int ep = platform_.mesh.ep;
    const runtime::DeviceMesh mesh({{"ep", ep}, {"fsdp", world_ / ep}});
    std::vector<int> group = mesh.group(rank, dim);
    slot = static_cast<int>(group.size()) == world_ ? world_comm_ : &engine_.communicator(name, group);
  }
  return *slot;
}

const std::vector<runtime::ParamSpec>& ClusterRuntime::params() {
  if (params_.empty()) params_ = runtime::model_params(platform_.model);
  return params_;
}

void ClusterRuntime::metrics(std::map<std::string, double>& out) const {
  const auto& st = engine_.stats();
  out["collective.count"] = static_cast<double>(st.collectives);
  out["collective.bytes_moved"] = st.bytes_moved;
  double wait = 0;
  for (double w : st.wait_s) wait = std::max(wait, w);
  out["collective.wait_s"] = wait;
  double peak = 0;
  for (const auto& [r, d] : devices_) peak = std::max(peak, static_cast<double>(d->peak()));
  if (!devices_.empty()) out["device.peak_bytes"] = peak;
}

namespace {

using kernel::Time;

[[noreturn]] void raise(const RankContext& ctx, const Step& step, const std::string& check, const std::string& what) {
  throw StepError{check, "rank " + std::to_string(ctx.rank) + ": " + what + " at " +
                             seconds_text(ctx.sim.now()) + " (" +
                             to_string(step.where) + ")"};
}

// ---- collective ----

struct CollectiveStep final : Step {
  std::string comm;         // world, ep, fsdp; or a name for `ranks`
  std::vector<int> ranks;   // an explicit communicator (comm: {name: N, ranks: [...]})
  collective::Op op = collective::Op::kBarrier;
  Distribution bytes = Distribution::constant(0, Unit::kBytes);
  int root = 0;
  void run(RankContext& ctx) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    collective::Communicator& cm =
        ranks.empty() ? c.comm(comm, ctx.rank) : c.engine().communicator(comm, ranks);
    collective::CommQueue& q = c.queue(ctx.rank);
    const auto b = static_cast<std::uint64_t>(std::max(0.0, bytes.sample(ctx.rng)));
    q.enqueue(cm, {op, b, root});
    const auto st = q.sync(&cm, c.platform().collective.exec_timeout);
    if (!st.is_ok()) raise(ctx, *this, "no_deadlock", st.message());
  }
};

std::unique_ptr<Step> compile_collective(const YAML::Node& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"op", "comm", "bytes", "root"}, {"op"}, "collective")) return nullptr;
  auto s = std::make_unique<CollectiveStep>();
  const YAML::Node op = args["op"];
  auto parsed = op.IsScalar() ? collective::op_from_string(op.Scalar()) : std::nullopt;
  if (!parsed) {
    c.error(c.at(op), "collective op: expected broadcast, all_reduce, all_gather, reduce_scatter, all_to_all, scatter or barrier");
    return nullptr;
  }
  s->op = *parsed;
  if (const YAML::Node cm = args["comm"]; cm && cm.IsMap()) {
    // An explicit communicator: {name: N, ranks: SELECTOR}; a rank outside it fails.
    if (!c.keys(cm, {"name", "ranks"}, {"name", "ranks"}, "collective comm")) return nullptr;
    auto name = c.text(cm["name"], "collective comm name");
    Diagnostics local;
    auto sel = parse_rank_selector(cm["ranks"], c.scenario().ranks, c.scenario().file, local);
    for (const auto& d : local.all()) c.error(d.where, d.message);
    if (!name || !sel) return nullptr;
    if (!name->is_literal() || cm["name"].Scalar().find("${") != std::string::npos) {
      c.error(c.at(cm["name"]), "collective comm name: expected a fixed name (every member names it alike)");
      return nullptr;
    }
    s->comm = cm["name"].Scalar();
    c.declare_comm(s->comm);
    for (int r = 0; r < c.scenario().ranks; ++r) {
      if (sel->contains(r)) s->ranks.push_back(r);
    }
  } else if (cm) {
    const std::string v = cm.IsScalar() ? cm.Scalar() : "";
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
  return s;
}

// ---- load_weights ----

enum class Dispatch : std::uint8_t { kImplicit, kCoordinated, kLocalSplit, kBypass, kBypassHostChunk };

// rank0_load_and_broadcast_weights (VeOmni): for each parameter in checkpoint order, rank 0
// reads it; every rank receives its metadata (broadcast_object_list on world, a host sync) and
// the tensor (broadcast on world), slices it for expert parallelism (parallel_plan.shard_tensor,
// on the device, expert by expert) and dispatches it:
//   implicit_redistribute   distribute_tensor(src_data_rank=0): a scatter over the parameter's
//                           fsdp group, enqueued behind the slicing, then copy_; the host goes on
//   coordinated_redistribute the same collectives, but the host waits for each one before the
//                           next parameter, so every device runs them in one global order
//   local_split              distribute_tensor(src_data_rank=None): each rank keeps its own
//                           shard; no collective
//   physical_bypass          PR 642: to_local, tensor.to(device, dtype) of the whole slice,
//                           torch.chunk by the mesh coordinate, copy of the chunk
//   physical_bypass_host_chunk the review's version: torch.chunk first, then only the chunk is
//                           converted and copied to the device
struct LoadWeightsStep final : Step {
  Dispatch dispatch = Dispatch::kImplicit;
  double read_bandwidth = 2e9;  // rank 0's checkpoint reads
  Distribution host_gap;        // per parameter, the host's own work
  Distribution slice_per_expert;

  void run(RankContext& ctx) const override {
    ClusterRuntime& c = ctx.run.model<ClusterRuntime>();
    const Platform& pf = c.platform();
    const int world = c.world(), ep = pf.mesh.ep, fsdp = world / ep;
    const int ckpt = pf.model.checkpoint_bytes, pbytes = pf.model.param_bytes;
    device::Device& dev = c.device(ctx.rank);
    collective::CommQueue& q = c.queue(ctx.rank);
    collective::Communicator& world_comm = c.comm("world", ctx.rank);
    const Time timeout = pf.collective.exec_timeout;
    const Time start = ctx.sim.now();
    const std::vector<runtime::ParamSpec>& params = c.params();
    ctx.run.add("hidden_collectives", 0);
    auto alloc = [&](std::uint64_t bytes, const std::string& name, const char* what) {
      // The description is only built for the error.
      if (bytes > dev.config().memory - dev.used()) {
        auto h = dev.alloc(bytes, name + what);
        raise(ctx, *this, "no_oom", h.message());
      }
      return *dev.alloc(bytes, std::string());
    };
    auto sync = [&](const collective::Communicator* cm) {
      const auto st = q.sync(cm, timeout);
      if (!st.is_ok()) raise(ctx, *this, "no_deadlock", st.message());
    };
    // The model's own shards (DTensor local tensors), allocated before loading (to_empty).
    for (const runtime::ParamSpec& p : params) {
      const int groups = p.expert ? fsdp : world;
      std::int64_t rows = p.expert ? p.shape[0] / ep : p.shape[0];
      const int coord = p.expert ? ctx.rank % fsdp : ctx.rank;
      rows = runtime::dtensor_shard_size(rows, groups, coord);
      alloc(static_cast<std::uint64_t>(rows * (runtime::numel(p.shape) / p.shape[0])) * pbytes, p.name, "");
    }
    for (const runtime::ParamSpec& p : params) {
      const std::uint64_t full = static_cast<std::uint64_t>(runtime::numel(p.shape));
      if (ctx.rank == 0) ctx.sim.sleep_for(to_time(static_cast<double>(full * ckpt) / read_bandwidth * 1e9));
      q.enqueue(world_comm, {collective::Op::kBroadcast, 1024, 0});  // broadcast_object_list
      sync(&world_comm);
      const std::uint64_t recv = alloc(full * ckpt, p.name, " (broadcast)");
      q.enqueue(world_comm, {collective::Op::kBroadcast, full * ckpt, 0});
      // Expert parallelism: this rank's experts only, sliced expert by expert on the device.
      const bool sliced = p.expert && ep > 1;
      const std::int64_t rows = sliced ? p.shape[0] / ep : p.shape[0];
      const std::uint64_t local = static_cast<std::uint64_t>(rows) * (full / static_cast<std::uint64_t>(p.shape[0]));
      Time prep = 0;
      if (sliced) {
        for (std::int64_t e = 0; e < rows; ++e) prep += to_time(slice_per_expert.sample(ctx.rng));
      }
      // The parameter's fsdp group: each ep group's for experts, else every rank (world).
      collective::Communicator& group = p.expert ? c.comm("fsdp", ctx.rank) : world_comm;
      const int k = group.size();
      const int coord = group.group_rank(ctx.rank);
      const std::int64_t want = runtime::dtensor_shard_size(rows, k, coord);
      std::int64_t got = want;
      std::vector<std::uint64_t> temps{recv};
      switch (dispatch) {
        case Dispatch::kImplicit:
        case Dispatch::kCoordinated: {
          temps.push_back(alloc(local * pbytes, p.name, " (tensor.to)"));
          const std::int64_t each = (rows + k - 1) / k;
          q.enqueue(group, {collective::Op::kScatter, static_cast<std::uint64_t>(each * k) * (local / rows) * pbytes, 0}, prep);
          if (&group != &world_comm) ctx.run.add("hidden_collectives", 1);
          if (dispatch == Dispatch::kCoordinated) sync(&group);
          break;
        }
        case Dispatch::kLocalSplit:
          break;
        case Dispatch::kBypass:
        case Dispatch::kBypassHostChunk: {
          const auto chunks = runtime::torch_chunk_sizes(rows, k);
          if (dispatch == Dispatch::kBypass) temps.push_back(alloc(local * pbytes, p.name, " (tensor.to)"));
          if (coord >= static_cast<int>(chunks.size())) {
            ctx.run.add("index_errors", 1);
            if (ctx.run.fail("shards_correct",
                             "rank " + std::to_string(ctx.rank) + ": IndexError in " + p.name + " " +
                                 runtime::to_string(p.shape) + ": torch.chunk(" + std::to_string(rows) +
                                 ", " + std::to_string(k) + ") gives " + std::to_string(chunks.size()) +
                                 " chunks, mesh coordinate " + std::to_string(coord) + " at " +
                                 seconds_text(ctx.sim.now()) +
                                 " (" + to_string(where) + ")")) {
              ctx.sim.sleep_for(kernel::kTimeMax);  // the run is stopping
            }
            got = 0;  // (check off: the real code raised; here the rank goes on without a shard)
          } else {
            got = chunks[static_cast<std::size_t>(coord)];
          }
          temps.push_back(alloc(static_cast<std::uint64_t>(got) * (local / rows) * pbytes, p.name, " (chunk)"));
          break;
        }
      }
      if (got != want && ctx.run.fail("shards_correct", "rank " + std::to_string(ctx.rank) + ": " + p.name +
                                                             ": local shard has " + std::to_string(got) +
                                                             " rows, DTensor's has " + std::to_string(want) +
                                                             " (" + to_string(where) + ")")) {
        ctx.sim.sleep_for(kernel::kTimeMax);
      }
      for (std::uint64_t h : temps) dev.free(h);
      ctx.sim.sleep_for(to_time(host_gap.sample(ctx.rng)));
    }
    sync(nullptr);
    ctx.run.sample("load_s", kernel::to_seconds(ctx.sim.now() - start));
    ctx.run.sample("peak_device_gib", static_cast<double>(dev.peak()) / (1ull << 30));
  }
};

std::unique_ptr<Step> compile_load_weights(const YAML::Node& args, const Location& where, Compiler& c) {
  if (!c.keys(args, {"dispatch", "read_bandwidth", "host_gap", "slice_per_expert"}, {"dispatch"}, "load_weights")) {
    return nullptr;
  }
  auto s = std::make_unique<LoadWeightsStep>();
  const YAML::Node d = args["dispatch"];
  const std::string v = d.IsScalar() ? d.Scalar() : "";
  if (v == "implicit_redistribute") s->dispatch = Dispatch::kImplicit;
  else if (v == "coordinated_redistribute") s->dispatch = Dispatch::kCoordinated;
  else if (v == "local_split") s->dispatch = Dispatch::kLocalSplit;
  else if (v == "physical_bypass") s->dispatch = Dispatch::kBypass;
  else if (v == "physical_bypass_host_chunk") s->dispatch = Dispatch::kBypassHostChunk;
  else {
    c.error(c.at(d), "load_weights dispatch: expected implicit_redistribute, coordinated_redistribute, "
                     "local_split, physical_bypass or physical_bypass_host_chunk");
    return nullptr;
  }
  if (args["read_bandwidth"]) {
    auto b = c.quantity(args["read_bandwidth"], Unit::kBandwidth, "load_weights read_bandwidth");
    if (!b) return nullptr;
    if (!b->is_constant() || b->a <= 0) {
      c.error(c.at(args["read_bandwidth"]), "load_weights read_bandwidth: expected a fixed bandwidth above 0");
      return nullptr;
    }
    s->read_bandwidth = b->a;
  }
  s->host_gap = Distribution::constant(1e6, Unit::kDuration);
  s->slice_per_expert = Distribution::constant(2e4, Unit::kDuration);
  if (args["host_gap"]) {
    auto g = c.quantity(args["host_gap"], Unit::kDuration, "load_weights host_gap");
    if (!g) return nullptr;
    s->host_gap = *g;
  }
  if (args["slice_per_expert"]) {
    auto g = c.quantity(args["slice_per_expert"], Unit::kDuration, "load_weights slice_per_expert");
    if (!g) return nullptr;
    s->slice_per_expert = *g;
  }
  (void)where;
  return s;
}

}  // namespace

void register_cluster_family(Registry& r) {
  r.add_check({"shards_correct", false, "every rank's local shard is the one DTensor would give it"});
  r.add_check({"no_oom", false, "no device allocation exceeds the device's memory"});
  r.add_faults(collective::fault_kinds());
  r.add({"collective",
         "collective: {op: OP, comm: world|ep|fsdp|{name: N, ranks: SELECTOR}, bytes: BYTES, root: N} "
         "- a collective on the rank's group, waited for (exec timeout: platform.collective)",
         compile_collective});
  r.add({"load_weights",
         "load_weights: {dispatch: implicit_redistribute|coordinated_redistribute|local_split|"
         "physical_bypass|physical_bypass_host_chunk, read_bandwidth, host_gap, slice_per_expert} - "
         "rank 0 loads the platform.model checkpoint and broadcasts it; each rank dispatches its shards",
         compile_load_weights});
}

}  // namespace racesim::scenario
