// The weights family: loading platform.model's parameters into DTensor shards, one operation a
// primitive, each a thin binding of runtime::ParamLoader (sim/runtime/param_loader.h, which
// documents what each costs and checks). A loading strategy is a composition of these in a
// scenario file; see scenarios/dtensor_implicit_redistribute.yaml.
//
//   to_empty: {}                                 allocate every parameter's local shard
//   for_each_param: {do: [steps]}                the steps once per parameter, checkpoint order
//   read_param: {bandwidth: 2GB/s}               rank 0 reads the parameter
//   broadcast_metadata: {}                       broadcast_object_list on world (host waits)
//   broadcast_param: {}                          the tensor from rank 0 on world (enqueued)
//   p2p_param: {}                                the tensor from rank 0, a send per rank
//   slice_experts: {per_expert: DURATION}        EP slicing on the device
//   distribute_tensor: {src_data_rank: 0|none, wait: false}
//   to_local_chunk: {on: device|host}            PR 642's bypass
//   copy_param: {}                               copy_ into the local shard
//   sync_comm: world|all                         the host waits for enqueued collectives
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/runtime/param_loader.h"
#include "src/scenario/execute/draw.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/execute/interpreter.h"
#include "src/scenario/primitives/cluster.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

namespace {

// The loaders of one run, one per rank, on the cluster's devices and comm queues.
class WeightsRuntime final : public ModelState {
 public:
  explicit WeightsRuntime(RunState& run)
      : cluster_(run.model<ClusterRuntime>()), params_(runtime::model_params(run.platform().model)) {}

  // REQUIRES: 0 <= rank < world.
  runtime::ParamLoader& loader(int rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (r < loaders_.size() && loaders_[r]) return *loaders_[r];  // every step of a rank: keep it short
    return create_loader(r);
  }

  // The rank's loader on first use, out of line so that the lookup stays small.
  [[gnu::noinline]] runtime::ParamLoader& create_loader(std::size_t r) {
    const int rank = static_cast<int>(r);
    if (loaders_.empty()) loaders_.resize(static_cast<std::size_t>(cluster_.world()));
    auto& slot = loaders_.at(r);
    {
      const Platform& pf = cluster_.platform();
      device::Device& dev = cluster_.device(rank);
      collective::CommQueue& q = cluster_.queue(rank);
      collective::Communicator& world = cluster_.comm("world", rank);
      slot = std::make_unique<runtime::ParamLoader>(runtime::LoaderEnv{
          .sim = dev.sim(), .device = dev, .queue = q, .engine = cluster_.engine(), .world = world,
          .expert_group = cluster_.comm("fsdp", rank), .rank = rank, .ep = pf.mesh.ep, .model = pf.model,
          .params = params_, .exec_timeout = pf.collective.exec_timeout});
    }
    return *slot;
  }

  // hidden_collectives, index_errors: summed over ranks (0 when none happened).
  void metrics(std::map<std::string, double>& out) const override {
    double hidden = 0, index = 0;
    for (const auto& l : loaders_) {
      if (!l) continue;
      hidden += static_cast<double>(l->stats().hidden_collectives);
      index += static_cast<double>(l->stats().index_errors);
    }
    out["hidden_collectives"] = hidden;
    out["index_errors"] = index;
  }

 private:
  ClusterRuntime& cluster_;
  std::vector<runtime::ParamSpec> params_;
  std::vector<std::unique_ptr<runtime::ParamLoader>> loaders_;  // by rank, created on first use
};

// The base of every weights step: the rank's loader, and a problem it reports raised as a step
// error (as the Python exception would end the rank's program).
struct LoaderStep : Step {
  static runtime::ParamLoader& loader(RankContext& ctx) { return ctx.run.model<WeightsRuntime>().loader(ctx.rank); }
  void check(RankContext& ctx, const runtime::MaybeIssue& issue) const {
    if (issue) raise_step_error(ctx, *this, issue->check, issue->message);
  }
};

// Steps without arguments: the loader operation they call (a direct call, one class per op).
template <runtime::MaybeIssue (*kOp)(runtime::ParamLoader&)>
struct CallStep final : LoaderStep {
  void run(RankContext& ctx) const override { check(ctx, kOp(loader(ctx))); }
};

template <runtime::MaybeIssue (*kOp)(runtime::ParamLoader&), const char* kName>
std::unique_ptr<Step> compile_call(const Value& args, const Location&, Compiler& c) {
  if (!args.is_null() && !c.keys(args, {}, {}, kName)) return nullptr;
  return std::make_unique<CallStep<kOp>>();
}

constexpr char kToEmpty[] = "to_empty", kBroadcastMetadata[] = "broadcast_metadata",
               kBroadcastParam[] = "broadcast_param", kP2pParam[] = "p2p_param", kCopyParam[] = "copy_param";
runtime::MaybeIssue to_empty(runtime::ParamLoader& l) { return l.to_empty(); }
runtime::MaybeIssue broadcast_metadata(runtime::ParamLoader& l) { return l.broadcast_metadata(); }
runtime::MaybeIssue broadcast_param(runtime::ParamLoader& l) { return l.broadcast_tensor(); }
runtime::MaybeIssue p2p_param(runtime::ParamLoader& l) { return l.p2p_tensor(); }
runtime::MaybeIssue copy_param(runtime::ParamLoader& l) { return l.copy_into_param(); }

struct ForEachParamStep final : LoaderStep {
  StepList body;
  bool container() const override { return true; }
  void run(RankContext& ctx) const override {
    runtime::ParamLoader& l = loader(ctx);
    // Bounded by the model's parameters.
    for (std::size_t i = 0; i < l.param_count(); ++i) {
      l.begin_param(i);
      run_steps(body, ctx);
    }
  }
};

std::unique_ptr<Step> compile_for_each_param(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"do"}, {"do"}, "for_each_param")) return nullptr;
  auto body = c.steps(args["do"], "for_each_param do");
  if (!body) return nullptr;
  auto s = std::make_unique<ForEachParamStep>();
  s->body = std::move(*body);
  return s;
}

struct ReadParamStep final : LoaderStep {
  double bytes_per_s = 2e9;
  void run(RankContext& ctx) const override { loader(ctx).read(bytes_per_s); }
};

std::unique_ptr<Step> compile_read_param(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<ReadParamStep>();
  if (args.is_null()) return s;
  if (!c.keys(args, {"bandwidth"}, {}, "read_param")) return nullptr;
  if (args["bandwidth"]) {
    auto b = c.quantity(args["bandwidth"], Unit::kBandwidth, "read_param bandwidth");
    if (!b) return nullptr;
    if (!b->is_constant() || b->a <= 0) {
      c.error(c.at(args["bandwidth"]), "read_param bandwidth: expected a fixed bandwidth above 0");
      return nullptr;
    }
    s->bytes_per_s = b->a;
  }
  return s;
}

struct SliceExpertsStep final : LoaderStep {
  Distribution per_expert = Distribution::constant(2e4, Unit::kDuration);
  void run(RankContext& ctx) const override {
    loader(ctx).slice_experts([this, &ctx] { return draw_time(per_expert, ctx); });
  }
};

std::unique_ptr<Step> compile_slice_experts(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"per_expert"}, {"per_expert"}, "slice_experts")) return nullptr;
  auto d = c.quantity(args["per_expert"], Unit::kDuration, "slice_experts per_expert");
  if (!d) return nullptr;
  auto s = std::make_unique<SliceExpertsStep>();
  s->per_expert = *d;
  return s;
}

struct DistributeStep final : LoaderStep {
  bool none = false;
  bool wait = false;
  void run(RankContext& ctx) const override { check(ctx, loader(ctx).distribute_tensor(none, wait)); }
};

std::unique_ptr<Step> compile_distribute(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"src_data_rank", "wait"}, {"src_data_rank"}, "distribute_tensor")) return nullptr;
  const Value src = args["src_data_rank"];
  const std::string v = src.is_scalar() ? src.scalar() : "";
  if (v != "0" && v != "none") {
    c.error(c.at(src), "distribute_tensor src_data_rank: expected 0 (rank 0 scatters) or none (each rank "
                       "takes its own shard)");
    return nullptr;
  }
  auto w = c.flag(args["wait"], "distribute_tensor wait", false);
  if (!w) return nullptr;
  auto s = std::make_unique<DistributeStep>();
  s->none = v == "none";
  s->wait = *w;
  return s;
}

struct ChunkStep final : LoaderStep {
  bool on_host = false;
  void run(RankContext& ctx) const override { check(ctx, loader(ctx).to_local_chunk(on_host)); }
};

std::unique_ptr<Step> compile_chunk(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"on"}, {"on"}, "to_local_chunk")) return nullptr;
  const Value on = args["on"];
  const std::string v = on.is_scalar() ? on.scalar() : "";
  if (v != "device" && v != "host") {
    c.error(c.at(on), "to_local_chunk on: expected device (convert the whole tensor, then chunk) or host "
                      "(chunk first, convert only the chunk)");
    return nullptr;
  }
  auto s = std::make_unique<ChunkStep>();
  s->on_host = v == "host";
  return s;
}

struct SyncStep final : LoaderStep {
  bool all = true;
  void run(RankContext& ctx) const override { check(ctx, loader(ctx).sync(all)); }
};

std::unique_ptr<Step> compile_sync(const Value& args, const Location&, Compiler& c) {
  const std::string v = args.is_scalar() ? args.scalar() : "";
  if (v != "world" && v != "all") {
    c.error(c.at(args), "sync_comm: expected world or all");
    return nullptr;
  }
  auto s = std::make_unique<SyncStep>();
  s->all = v == "all";
  return s;
}

}  // namespace

// hidden_collectives and index_errors, and the cluster's metrics the loader drives.
static void declare_weights_metrics(Compiler& c) {
  c.declare_counter("hidden_collectives");
  c.declare_counter("index_errors");
  c.declare_counter("device.peak_bytes");
  declare_cluster_metrics(c);
}

void register_weights_family(Registry& r) {
  auto add = [&r](PrimitiveInfo p) {
    p.declares = declare_weights_metrics;
    p.keeps_process_state = true;  // each rank's load in progress
    r.add(std::move(p));
  };
  add({"to_empty", "to_empty: {} - allocate every platform.model parameter's local DTensor shard on the device",
         compile_call<to_empty, kToEmpty>});
  add({"for_each_param", "for_each_param: {do: [steps]} - the steps once per platform.model parameter, in checkpoint order",
         compile_for_each_param});
  add({"read_param", "read_param: {bandwidth: 2GB/s} - rank 0 reads the parameter from the checkpoint",
         compile_read_param});
  add({"broadcast_metadata", "broadcast_metadata: {} - broadcast_object_list on world; the host waits",
         compile_call<broadcast_metadata, kBroadcastMetadata>});
  add({"broadcast_param", "broadcast_param: {} - the parameter from rank 0 on world into a device buffer (enqueued)",
         compile_call<broadcast_param, kBroadcastParam>});
  add({"p2p_param", "p2p_param: {} - the parameter from rank 0 by a point-to-point send to each rank (enqueued)",
         compile_call<p2p_param, kP2pParam>});
  add({"slice_experts", "slice_experts: {per_expert: DURATION} - keep this rank's experts, sliced on the device",
         compile_slice_experts});
  add({"distribute_tensor",
         "distribute_tensor: {src_data_rank: 0|none, wait: false} - DTensor's factory: 0 scatters over the "
         "parameter's group from its rank 0 (hidden off world), none takes the local shard",
         compile_distribute});
  add({"to_local_chunk", "to_local_chunk: {on: device|host} - torch.chunk by the mesh coordinate (PR 642)",
         compile_chunk});
  add({"copy_param", "copy_param: {} - copy_ into the parameter's local shard (shards_correct checks its shape)",
         compile_call<copy_param, kCopyParam>});
  add({"sync_comm", "sync_comm: world|all - the host waits for the collectives enqueued so far", compile_sync});
}

}  // namespace racesim::scenario
