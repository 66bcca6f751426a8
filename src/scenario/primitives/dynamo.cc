// The dynamo family: a rank's torch under a vendor device mock and dynamo's guarded compile
// cache, as thin bindings of runtime::Torch (sim/runtime/dynamo.h documents the mechanism).
//
//   import: torch | {module: torch_dipu, mock_cuda: true, route_default_device: false}
//   set_default_device: cuda | cuda:0
//   dynamo_config: {cache_size_limit: 8, accumulated_recompile_limit: 256,
//                   fail_on_recompile_limit_hit: false, canonicalize_guard_devices: false,
//                   assume_static_by_default: true, guard_check: 2us}
//   compiled_call: {fn: NAME, file: PATH, eager: DURATION, speedup: NUMBER, compile: DURATION,
//                   shape: COUNT}
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/runtime/dynamo.h"
#include "src/scenario/execute/draw.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/primitives/host.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

namespace {

// Every rank's torch in one run; the rank's compile cache lives as long as the run.
class DynamoRuntime final : public ModelState {
 public:
  explicit DynamoRuntime(RunState& run)
      : eager_lost_s(static_cast<std::size_t>(run.world()), 0.0), ranks_(static_cast<std::size_t>(run.world())) {}
  runtime::Torch& torch(int rank) { return ranks_.at(static_cast<std::size_t>(rank)); }
  // dynamo.compiles, .recompiles, .guard_failures, .eager_calls, .fallbacks (summed over ranks),
  // dynamo.recompiles_rank_max (the rank that recompiled most), dynamo.recompiles.FN per
  // function (summed over ranks) and dynamo.eager_lost_s (compute time lost to eager calls, the
  // largest of any rank).
  void metrics(std::map<std::string, double>& out) const override {
    runtime::DynamoStats sum;
    std::uint64_t worst = 0;
    for (const runtime::Torch& t : ranks_) {
      for (const std::string& fn : t.functions()) {
        // A function's first compile is not a recompile.
        const std::uint64_t c = t.compiles_of(fn);
        out["dynamo.recompiles." + fn] += static_cast<double>(c > 0 ? c - 1 : 0);
      }
      const runtime::DynamoStats& s = t.stats();
      sum.compiles += s.compiles;
      sum.recompiles += s.recompiles;
      sum.guard_failures += s.guard_failures;
      sum.eager_calls += s.eager_calls;
      sum.fallbacks += s.fallbacks;
      worst = std::max(worst, s.recompiles);
    }
    out["dynamo.compiles"] = static_cast<double>(sum.compiles);
    out["dynamo.recompiles"] = static_cast<double>(sum.recompiles);
    out["dynamo.guard_failures"] = static_cast<double>(sum.guard_failures);
    out["dynamo.eager_calls"] = static_cast<double>(sum.eager_calls);
    out["dynamo.fallbacks"] = static_cast<double>(sum.fallbacks);
    out["dynamo.recompiles_rank_max"] = static_cast<double>(worst);
    out["dynamo.eager_lost_s"] = *std::max_element(eager_lost_s.begin(), eager_lost_s.end());
  }

  // steady_state: the first recompile of the run, in dynamo's words, fails it (judged at the
  // end, so the run shows what the recompiles cost).
  std::optional<Failure> conclude() const override {
    if (first_recompile.empty()) return std::nullopt;
    return Failure{"steady_state", first_recompile};
  }

  // The number every rank's torch knows `fn` by (Torch::call's slot): found in this run's
  // short list, not in each rank's cache.
  std::size_t slot(const std::string& fn) {
    for (std::size_t i = 0; i < functions_.size(); ++i) {
      if (functions_[i] == fn) return i;
    }
    functions_.push_back(fn);  // bounded: the compiled_call steps' function names
    return functions_.size() - 1;
  }

  std::vector<double> eager_lost_s;  // by rank: eager time minus compiled time, summed
  std::string first_recompile;       // "rank R: Recompiling function ... at T (where)"

 private:
  std::vector<runtime::Torch> ranks_;
  std::vector<std::string> functions_;  // by slot
};

runtime::Torch& torch_of(RankContext& ctx) { return ctx.run.model<DynamoRuntime>().torch(ctx.rank); }

// "cuda" or "cuda:1" as (type, index).
std::optional<runtime::TorchDevice> parse_device(const Value& node, Compiler& c, const char* what) {
  const std::string s = node.is_scalar() ? node.scalar() : "";
  const auto colon = s.find(':');
  runtime::TorchDevice d{s.substr(0, colon), 0};
  bool ok = !d.type.empty() && is_identifier(d.type);
  if (ok && colon != std::string::npos) {
    const std::string idx = s.substr(colon + 1);
    ok = !idx.empty() && idx.size() < 6 && std::all_of(idx.begin(), idx.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (ok) d.index = std::stoi(idx);
  }
  if (!ok) {
    c.error(c.at(node), std::string(what) + ": expected a device like cuda or cuda:0, got " +
                            (node.is_scalar() ? "'" + s + "'" : kind_of(node)));
    return std::nullopt;
  }
  return d;
}

// ---- import ----

struct ImportStep final : Step {
  bool vendor = false;
  bool mock_cuda = false;
  bool route = false;
  void run(RankContext& ctx) const override {
    if (vendor) torch_of(ctx).import_vendor(mock_cuda, route);
  }
};

std::unique_ptr<Step> compile_import(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<ImportStep>();
  if (args.is_scalar() && args.scalar() == "torch") return s;  // the order is the point
  if (!c.keys(args, {"module", "mock_cuda", "route_default_device"}, {"module"}, "import")) return nullptr;
  if (!args["module"].is_scalar() || args["module"].scalar() != "torch_dipu") {
    c.error(c.at(args["module"]), "import module: expected torch_dipu (the vendor's module; `import: torch` "
                                  "for torch itself)");
    return nullptr;
  }
  auto mock = c.flag(args["mock_cuda"], "import mock_cuda", false);
  auto route = c.flag(args["route_default_device"], "import route_default_device", false);
  if (!mock || !route) return nullptr;
  s->vendor = true;
  s->mock_cuda = *mock;
  s->route = *route;
  return s;
}

// ---- set_default_device ----

struct SetDefaultDeviceStep final : Step {
  runtime::TorchDevice device;
  void run(RankContext& ctx) const override { torch_of(ctx).set_default_device(device.type, device.index); }
};

std::unique_ptr<Step> compile_set_default_device(const Value& args, const Location&, Compiler& c) {
  auto d = parse_device(args, c, "set_default_device");
  if (!d) return nullptr;
  auto s = std::make_unique<SetDefaultDeviceStep>();
  s->device = *d;
  return s;
}

// ---- dynamo_config ----

struct DynamoConfigStep final : Step {
  std::optional<int> limit, accumulated;
  std::optional<bool> fail_on_limit, canonicalize, assume_static;
  std::optional<kernel::Time> guard_check;
  void run(RankContext& ctx) const override {
    runtime::DynamoConfig& cfg = torch_of(ctx).config();
    if (limit) cfg.recompile_limit = *limit;
    if (accumulated) cfg.accumulated_recompile_limit = *accumulated;
    if (fail_on_limit) cfg.fail_on_recompile_limit_hit = *fail_on_limit;
    if (canonicalize) cfg.canonicalize_guard_devices = *canonicalize;
    if (guard_check) cfg.guard_check_cost = *guard_check;
    if (assume_static) cfg.assume_static_by_default = *assume_static;
  }
};

std::unique_ptr<Step> compile_dynamo_config(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"cache_size_limit", "accumulated_recompile_limit", "fail_on_recompile_limit_hit",
                     "canonicalize_guard_devices", "assume_static_by_default", "guard_check"},
              {}, "dynamo_config")) {
    return nullptr;
  }
  auto s = std::make_unique<DynamoConfigStep>();
  for (auto [key, slot] : {std::pair{"cache_size_limit", &s->limit}, std::pair{"accumulated_recompile_limit", &s->accumulated}}) {
    if (!args[key]) continue;
    auto n = c.count(args[key], 1, 100'000, std::string("dynamo_config ") + key);
    if (!n) return nullptr;
    *slot = static_cast<int>(*n);
  }
  for (auto [key, slot] : {std::pair{"fail_on_recompile_limit_hit", &s->fail_on_limit},
                           std::pair{"canonicalize_guard_devices", &s->canonicalize},
                           std::pair{"assume_static_by_default", &s->assume_static}}) {
    if (!args[key]) continue;
    auto f = c.flag(args[key], std::string("dynamo_config ") + key, true);
    if (!f) return nullptr;
    *slot = *f;
  }
  if (args["guard_check"]) {
    auto t = c.fixed_duration(args["guard_check"], "dynamo_config guard_check");
    if (!t) return nullptr;
    s->guard_check = *t;
  }
  return s;
}

// ---- compiled_call ----

struct CompiledCallStep final : Step {
  std::string fn, file;
  Distribution eager, compile;
  double speedup = 1;
  std::int64_t shape = 1;
  bool on_cpu = false;  // its compiles run on the node's cores (platform.host.cores)
  void run(RankContext& ctx) const override {
    DynamoRuntime& rt = ctx.run.model<DynamoRuntime>();
    runtime::Torch& t = rt.torch(ctx.rank);
    const runtime::CallOutcome out = t.call(rt.slot(fn), fn, file, shape);
    const kernel::Time guards = kernel::scale_time(t.config().guard_check_cost, static_cast<double>(out.entries_checked));
    using K = runtime::CallOutcome::Kind;
    const bool compiles = out.kind == K::kCompiled || out.kind == K::kRecompiled;
    // A call that runs a cached entry or eagerly checks its guards and runs in one stretch of
    // the rank's time (one sleep: nothing of the rank happens in between); a compile and the
    // limit's error come after the checks.
    if (compiles || out.kind == K::kLimitError) ctx.sim.sleep_for(guards);
    if (out.kind == K::kLimitError) raise_step_error(ctx, *this, "recompile_limit", out.message);
    if (compiles) {
      if (out.kind == K::kRecompiled) {
        ctx.sim.trace_record('i', "dynamo", out.message);
        std::string& first = rt.first_recompile;
        if (first.empty()) {
          first = "rank " + std::to_string(ctx.rank) + ": " + out.message + " at " + seconds_text(ctx.sim.now()) +
                  " (" + where_text(where) + ")";
        }
      }
      host_work(ctx, draw_time(compile, ctx), on_cpu);  // Inductor's compile: the host's CPU
      ctx.run.sample("last_compile_s", kernel::to_seconds(ctx.sim.now()));
    }
    const double eager_ns = draw(eager, ctx);
    const double run_ns = out.kind == K::kEager ? eager_ns : eager_ns / speedup;
    if (out.kind == K::kEager) {
      rt.eager_lost_s[static_cast<std::size_t>(ctx.rank)] += (eager_ns - eager_ns / speedup) / 1e9;
    }
    const kernel::Time run = ctx.run.faults().compute_time(ctx.rank, to_time(run_ns));
    ctx.sim.sleep_for(compiles ? run : kernel::add_time(guards, run));
  }
};

std::unique_ptr<Step> compile_compiled_call(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"fn", "file", "eager", "speedup", "compile", "shape"}, {"fn", "eager", "compile"},
              "compiled_call")) {
    return nullptr;
  }
  auto s = std::make_unique<CompiledCallStep>();
  s->on_cpu = host_work_on_cpu(c);
  if (!args["fn"].is_scalar() || !is_identifier(args["fn"].scalar())) {
    c.error(c.at(args["fn"]), "compiled_call fn: expected a function name (an identifier)");
    return nullptr;
  }
  s->fn = args["fn"].scalar();
  c.declare_counter("dynamo.recompiles." + s->fn);
  c.declare_series("last_compile_s");
  s->file = args["file"] && args["file"].is_scalar() ? args["file"].scalar() : "model.py";
  auto eager = c.quantity(args["eager"], Unit::kDuration, "compiled_call eager");
  auto compile = c.quantity(args["compile"], Unit::kDuration, "compiled_call compile");
  if (!eager || !compile) return nullptr;
  s->eager = *eager;
  s->compile = *compile;
  if (args["speedup"]) {
    auto x = c.number(args["speedup"], 0.01, 1000, "compiled_call speedup");
    if (!x) return nullptr;
    s->speedup = *x;
  }
  if (args["shape"]) {
    auto n = c.count(args["shape"], 1, std::int64_t{1} << 40, "compiled_call shape");
    if (!n) return nullptr;
    s->shape = *n;
  }
  return s;
}

}  // namespace

// DynamoRuntime's metrics (its metrics() lists them).
static void declare_dynamo_metrics(Compiler& c) {
  for (const char* m : {"dynamo.compiles", "dynamo.recompiles", "dynamo.guard_failures", "dynamo.eager_calls",
                        "dynamo.fallbacks", "dynamo.recompiles_rank_max", "dynamo.eager_lost_s"}) {
    c.declare_counter(m);
  }
}

void register_dynamo_family(Registry& r) {
  auto add = [&r](PrimitiveInfo p) {
    p.declares = declare_dynamo_metrics;
    p.keeps_process_state = true;  // each rank's compile caches and guards
    r.add(std::move(p));
  };
  r.add_check({"recompile_limit", true,
               "dynamo raised at its recompile limit (fail_on_recompile_limit_hit): the rank stops"});
  r.add_check({"steady_state", false,
               "no compiled call fails its guards after its function's first compile (judged at the end of the run)"});
  add({"import", "import: torch | {module: torch_dipu, mock_cuda: true, route_default_device: false} - import a "
                   "module; the vendor's mock patches torch.device from then on",
         compile_import});
  add({"set_default_device",
         "set_default_device: cuda[:N] - torch.set_default_device: stores CURRENT_DEVICE, built by the "
         "torch.device installed now",
         compile_set_default_device});
  add({"dynamo_config",
         "dynamo_config: {cache_size_limit: 8, accumulated_recompile_limit: 256, fail_on_recompile_limit_hit: "
         "false, canonicalize_guard_devices: false, assume_static_by_default: true, guard_check: 2us} - set "
         "torch._dynamo.config on this rank",
         compile_dynamo_config});
  add({"compiled_call",
         "compiled_call: {fn: NAME, file: PATH, eager: DURATION, speedup: N, compile: DURATION, shape: N} - call "
         "a torch.compile'd function: guards, a (re)compile or the eager fallback, then its run time",
         compile_compiled_call});
}

}  // namespace racesim::scenario
