// The profiler family: thin bindings of runtime::Profiler (sim/runtime/profiler.h documents the
// schedule, the files and the analysis). The on_trace_ready handler is YAML: the steps given to
// profiler_step, composed from these and the storage primitives (move, pack, spawn, ...).
//
//   profiler_step: {schedule: {skip_first: 1, wait: 0, warmup: 0, active: 2, repeat: 1},
//                   volume: BYTES, on_trace_ready: [steps]}
//   profiler_save: {dir: D, device_slices: 48}
//   profiler_analyse: {dir: D, export_type: text|db, rate: 100MB/s, fixed: 2s}
#include <memory>
#include <string>
#include <vector>

#include "sim/kernel/bytes.h"
#include "sim/runtime/profiler.h"
#include "src/scenario/execute/draw.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/execute/interpreter.h"
#include "src/scenario/primitives/host.h"
#include "src/scenario/primitives/storage.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

namespace {

using storage::FsError;

// Every rank's profiler in one run.
class ProfilerRuntime final : public ModelState {
 public:
  explicit ProfilerRuntime(RunState& run) : ranks_(static_cast<std::size_t>(run.world())) {}
  // The rank's profiler, started with `schedule` by its first prof.step().
  runtime::Profiler& of(int rank, const runtime::ProfilerSchedule& schedule) {
    auto& p = ranks_.at(static_cast<std::size_t>(rank));
    if (!p) p = std::make_unique<runtime::Profiler>(schedule);
    return *p;
  }
  runtime::Profiler* find(int rank) { return ranks_.at(static_cast<std::size_t>(rank)).get(); }
  // profiler.traces (made ready), profiler.files and profiler.bytes (written by save and
  // analyse, wherever they went), summed over ranks.
  void metrics(std::map<std::string, double>& out) const override {
    double traces = 0;
    for (const auto& p : ranks_) traces += p ? p->traces() : 0;
    out["profiler.traces"] = traces;
    out["profiler.files"] = static_cast<double>(files);
    out["profiler.bytes"] = static_cast<double>(bytes);
  }
  std::uint64_t files = 0, bytes = 0;

 private:
  std::vector<std::unique_ptr<runtime::Profiler>> ranks_;
};

void declare_profiler_counters(Compiler& c) {
  for (const char* n : {"profiler.traces", "profiler.files", "profiler.bytes"}) c.declare_counter(n);
}

// ---- profiler_step ----

struct ProfilerStepStep final : Step {
  bool container() const override { return true; }
  runtime::ProfilerSchedule schedule;
  Distribution volume = Distribution::constant(0, Unit::kBytes);
  StepList on_trace_ready;
  std::string describe(const RankContext& ctx) const override {
    runtime::Profiler* p = ctx.run.model<ProfilerRuntime>().find(ctx.rank);
    return "prof.step() #" + std::to_string(p ? p->step_num() : 0);
  }
  void run(RankContext& ctx) const override {
    const double v = draw(volume, ctx);  // drawn every step: the draws do not depend on the schedule
    runtime::Profiler& p = ctx.run.model<ProfilerRuntime>().of(ctx.rank, schedule);
    if (!p.step(v <= 0 ? 0 : static_cast<std::uint64_t>(v))) return;
    ctx.sim.trace_record('i', "profiler", "on_trace_ready (" + kernel::format_bytes(p.trace_bytes()) + ")");
    run_steps(on_trace_ready, ctx);
  }
};

std::unique_ptr<Step> compile_profiler_step(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"schedule", "volume", "on_trace_ready"}, {"schedule", "volume", "on_trace_ready"}, "profiler_step")) {
    return nullptr;
  }
  auto s = std::make_unique<ProfilerStepStep>();
  const Value sch = args["schedule"];
  if (!c.keys(sch, {"skip_first", "wait", "warmup", "active", "repeat"}, {"active"}, "profiler_step schedule")) {
    return nullptr;
  }
  bool ok = true;
  auto field = [&](const char* name, int& out, std::int64_t lo) {
    if (!sch[name]) return;
    if (auto v = c.count(sch[name], lo, 1'000'000, std::string("schedule ") + name)) {
      out = static_cast<int>(*v);
    } else {
      ok = false;
    }
  };
  field("skip_first", s->schedule.skip_first, 0);
  field("wait", s->schedule.wait, 0);
  field("warmup", s->schedule.warmup, 0);
  field("active", s->schedule.active, 1);
  field("repeat", s->schedule.repeat, 0);
  auto volume = c.quantity(args["volume"], Unit::kBytes, "profiler_step volume");
  auto body = c.steps(args["on_trace_ready"], "profiler_step on_trace_ready");
  if (!ok || !volume || !body) return nullptr;
  s->volume = *volume;
  s->on_trace_ready = std::move(*body);
  declare_profiler_counters(c);
  return s;
}

// ---- profiler_save / profiler_analyse ----

// The base of both: the rank's ready trace, and file operations that fail the step with the
// operation and path (no_io_errors), as the storage primitives do.
struct TraceStep : Step {
  Text dir;
  runtime::Profiler& trace(RankContext& ctx) const {
    runtime::Profiler* p = ctx.run.model<ProfilerRuntime>().find(ctx.rank);
    if (p == nullptr || p->traces() == 0) {
      raise_step_error(ctx, *this, "no_errors", "no trace is ready (call it from profiler_step's on_trace_ready)");
    }
    return *p;
  }
  StorageRuntime::Target mount(RankContext& ctx, const std::string& path) const {
    auto t = ctx.run.model<StorageRuntime>().at(path, ctx.rank);
    if (!t.fs) raise_step_error(ctx, *this, "no_io_errors", path + ": no mount holds this path");
    return t;
  }
  void check(RankContext& ctx, const std::string& op, const std::string& path, FsError e) const {
    if (e != FsError::kOk) raise_step_error(ctx, *this, "no_io_errors", op + " " + path + ": " + fs_error_text(e));
  }
  // Writes the files under `root` (their directories made first), counting them.
  void write_files(RankContext& ctx, const std::string& root, const std::vector<std::string>& dirs,
                   const std::vector<runtime::ProfileFile>& files) const {
    const auto t = mount(ctx, root);
    check(ctx, "mkdir", root, t.fs->makedirs(root, t.client, true, true));
    for (const std::string& d : dirs) check(ctx, "mkdir", root + "/" + d, t.fs->makedirs(root + "/" + d, t.client, false, true));
    auto& model = ctx.run.model<ProfilerRuntime>();
    for (const runtime::ProfileFile& f : files) {
      const std::string path = root + "/" + f.path;
      auto fd = t.fs->create(path, t.client, ctx.rank, storage::OpenMode::kTruncate, f.bytes);
      if (!fd) raise_step_error(ctx, *this, "no_io_errors", "open " + path + ": " + fd.message());
      const FsError w = t.fs->write(*fd, f.bytes);
      const FsError cl = t.fs->close(*fd);
      check(ctx, "write", path, w);
      check(ctx, "close", path, cl);
      ++model.files;
      model.bytes += f.bytes;
    }
  }
};

struct ProfilerSaveStep final : TraceStep {
  runtime::ProfileLayout layout;
  std::string describe(const RankContext& ctx) const override { return dir.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const runtime::Profiler& p = trace(ctx);
    const std::string root = dir.resolve(ctx) + "/" + runtime::trace_dir(ctx.rank);
    write_files(ctx, root, runtime::raw_dirs(ctx.rank), runtime::raw_files(layout, ctx.rank, p.trace_bytes()));
  }
};

struct ProfilerAnalyseStep final : TraceStep {
  runtime::ProfileLayout layout;
  runtime::ExportType type = runtime::ExportType::kText;
  bool on_cpu = false;  // the analysis runs on the node's cores (platform.host.cores)
  std::string describe(const RankContext& ctx) const override {
    return dir.resolve(ctx) + (type == runtime::ExportType::kDb ? " (db)" : " (text)");
  }
  void run(RankContext& ctx) const override {
    const runtime::Profiler& p = trace(ctx);
    const std::string root = dir.resolve(ctx) + "/" + runtime::trace_dir(ctx.rank);
    const auto t = mount(ctx, root);
    // The parser walks the trace's directory and reads every raw file back.
    std::vector<std::string> dirs, files;
    check(ctx, "list", root, t.fs->tree(root, t.client, dirs, files));
    for (const std::string& f : files) {
      auto r = t.fs->read(f, t.client);
      if (!r) raise_step_error(ctx, *this, "no_io_errors", "read " + f + ": " + r.message());
    }
    ctx.sim.trace_record('B', "compute", "analyse");
    ctx.sim.trace_annotate([&] { return "{\"raw_bytes\":" + std::to_string(p.trace_bytes()) + "}"; });
    const kernel::Time analysis_start = ctx.sim.now();
    host_work(ctx, ctx.run.faults().compute_time(ctx.rank, runtime::analysis_time(layout, p.trace_bytes())), on_cpu);
    ctx.sim.trace_record('E', "compute", "analyse");
    ctx.sim.trace_annotate([&] { return "{\"duration\":\"" + kernel::format_duration(ctx.sim.now() - analysis_start) + "\"}"; });
    write_files(ctx, root, {"ASCEND_PROFILER_OUTPUT"}, runtime::result_files(ctx.rank, p.trace_bytes(), type));
  }
};

std::optional<Text> dir_arg(const Value& args, Compiler& c, const char* what) {
  auto t = c.text(args["dir"], what);
  const Platform* platform = c.platform();
  if (t && t->uses_locals()) {
    c.error(c.at(args["dir"]), std::string(what) + ": expected a directory fixed before the run (not a local)");
    return std::nullopt;
  }
  if (!t || !platform) return t;
  for (int r = 0; r < (t->is_literal() ? 1 : c.scenario().ranks); ++r) {
    const std::string p = t->resolve(r);
    if (p.empty() || p[0] != '/' || !platform->mount_for(p + "/x")) {
      c.error(c.at(args["dir"]), std::string(what) + ": '" + p + "' is not an absolute path on a platform.storage mount");
      return std::nullopt;
    }
  }
  StorageRuntime::declare_counters(c);
  return t;
}

std::unique_ptr<Step> compile_profiler_save(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"dir", "device_slices"}, {"dir"}, "profiler_save")) return nullptr;
  auto s = std::make_unique<ProfilerSaveStep>();
  auto d = dir_arg(args, c, "profiler_save dir");
  if (!d) return nullptr;
  s->dir = *d;
  if (args["device_slices"]) {
    auto n = c.count(args["device_slices"], 1, 100'000, "profiler_save device_slices");
    if (!n) return nullptr;
    s->layout.device_slices = static_cast<int>(*n);
  }
  declare_profiler_counters(c);
  return s;
}

std::unique_ptr<Step> compile_profiler_analyse(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"dir", "export_type", "rate", "fixed"}, {"dir"}, "profiler_analyse")) return nullptr;
  auto s = std::make_unique<ProfilerAnalyseStep>();
  auto d = dir_arg(args, c, "profiler_analyse dir");
  if (!d) return nullptr;
  s->dir = *d;
  if (const Value e = args["export_type"]) {
    const std::string v = e.is_scalar() ? e.scalar() : "";
    if (v != "text" && v != "db") {
      c.error(c.at(e), "profiler_analyse export_type: expected text (JSON and CSV files and the databases) or db (the "
                       "databases only)");
      return nullptr;
    }
    s->type = v == "db" ? runtime::ExportType::kDb : runtime::ExportType::kText;
  }
  if (args["rate"]) {
    auto r = c.quantity(args["rate"], Unit::kBandwidth, "profiler_analyse rate");
    if (!r) return nullptr;
    if (!r->is_constant() || r->a <= 0) {
      c.error(c.at(args["rate"]), "profiler_analyse rate: expected a fixed bandwidth above 0");
      return nullptr;
    }
    s->layout.analysis_rate = r->a;
  }
  if (args["fixed"]) {
    auto f = c.fixed_duration(args["fixed"], "profiler_analyse fixed");
    if (!f) return nullptr;
    s->layout.analysis_fixed = *f;
  }
  declare_profiler_counters(c);
  s->on_cpu = host_work_on_cpu(c);
  return s;
}

}  // namespace

void register_profiler_family(Registry& r) {
  auto add = [&r](PrimitiveInfo p) {
    p.keeps_process_state = true;  // each rank's profiler schedule and ready traces
    r.add(std::move(p));
  };
  add({"profiler_step",
         "profiler_step: {schedule: {skip_first, wait, warmup, active, repeat}, volume: BYTES, on_trace_ready: [steps]} "
         "- prof.step(): a recorded step adds VOLUME of raw trace; at the end of a cycle's last active step "
         "on_trace_ready runs here, inside the training step",
         compile_profiler_step});
  add({"profiler_save",
         "profiler_save: {dir: D, device_slices: 48} - write the ready trace's raw data under D/rank{R}_ascend_pt "
         "(PROF_*/ and FRAMEWORK/: many small files)",
         compile_profiler_save});
  add({"profiler_analyse",
         "profiler_analyse: {dir: D, export_type: text|db, rate: 100MB/s, fixed: 2s} - parse the raw data back from "
         "D, spend the analysis CPU time, write ASCEND_PROFILER_OUTPUT/ (14 files; db: 2)",
         compile_profiler_analyse});
}

}  // namespace racesim::scenario
