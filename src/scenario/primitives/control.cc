// The control family: compute, sleep, repeat, if, poll_until, wait, mark, fail, slot, spawn,
// join, try, barrier, count; the straggler and crash faults; the run-level checks. Each
// primitive is a Step subclass plus a compile function; register_control_family lists them.
#include <cmath>
#include <memory>
#include <set>

#include "src/scenario/execute/draw.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/execute/interpreter.h"
#include "src/scenario/primitives/host.h"
#include "src/scenario/primitives/storage.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

namespace {

using kernel::Time;

Time sample_time(const Distribution& d, RankContext& ctx) { return draw_time(d, ctx); }


// A step whose only argument is a text (a mark name, a message): StepT has a `Text text`.
template <typename StepT>
std::unique_ptr<Step> compile_text_step(const Value& args, const Location&, Compiler& c,
                                        std::string_view what) {
  auto t = c.text(args, what);
  if (!t) return nullptr;
  auto s = std::make_unique<StepT>();
  s->text = *t;
  return s;
}

// ---- compute / sleep ----

struct SleepStep final : Step {
  Distribution duration;
  bool compute = false;
  bool on_cpu = false;  // a compute step on a platform whose nodes have cores (platform.host.cores)
  // Its duration, and a compute step's opening record.
  Time start(RankContext& ctx) const {
    Time d = sample_time(duration, ctx);
    if (compute) {
      d = ctx.run.faults().compute_time(ctx.rank, d);  // host.compute: a straggler is slower
      ctx.sim.trace_record('B', "compute", "compute");
      ctx.sim.trace_annotate([&] { return "{\"duration\":\"" + kernel::format_duration(d) + "\"}"; });
    }
    return d;
  }
  Stackless stackless() const override { return on_cpu ? Stackless::kNo : Stackless::kSplit; }
  bool arm(RankContext& ctx) const override {
    ctx.sim.arm_sleep_until(ctx.sim.deadline_after(start(ctx)));
    return true;
  }
  void after_wait(RankContext& ctx, kernel::WaitStatus) const override {
    if (compute) ctx.sim.trace_record('E', "compute", "compute");
  }
  void run(RankContext& ctx) const override {
    const Time d = start(ctx);
    if (on_cpu) {
      // d of CPU time on the node's cores, shared with the node's other host work.
      host_work(ctx, d, true);
      ctx.sim.trace_record('E', "compute", "compute");
      return;
    }
    if (ctx.top_level) {
      // Nothing above this step but run_rank: at teardown it returns rather than be unwound
      // (most ranks still alive when a run ends early sleep in their first `sleep: ${start}`).
      if (!ctx.sim.sleep_until_or_teardown(ctx.sim.deadline_after(d))) return;
    } else {
      ctx.sim.sleep_for(d);
    }
    if (compute) ctx.sim.trace_record('E', "compute", "compute");
  }
};

template <bool kCompute>
std::unique_ptr<Step> compile_sleep(const Value& args, const Location&, Compiler& c) {
  auto d = c.quantity(args, Unit::kDuration, kCompute ? "compute" : "sleep");
  if (!d) return nullptr;
  auto s = std::make_unique<SleepStep>();
  s->duration = *d;
  s->compute = kCompute;
  s->on_cpu = kCompute && compute_on_cpu(c);
  return s;
}

// ---- repeat ----

struct RepeatStep final : Step {
  bool container() const override { return true; }
  Stackless stackless() const override { return Stackless::kLoop; }
  const StepList* loop_body() const override { return &body; }
  std::int64_t loop_times() const override { return times; }
  std::vector<const StepList*> bodies() const override { return {&body}; }
  std::int64_t times = 0;
  StepList body;
  void run(RankContext& ctx) const override {
    // Nested repeats multiply: each iteration counts against the event limit (Simulation::spend),
    // so a body that never blocks still ends at limits.events.
    for (std::int64_t i = 0; i < times; ++i) {
      ctx.sim.spend(1);
      run_steps(body, ctx);
    }
  }
};

std::unique_ptr<Step> compile_repeat(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"times", "do"}, {"times", "do"}, "repeat")) return nullptr;
  auto times = c.count(args["times"], 0, 1'000'000, "repeat times");
  auto body = c.steps(args["do"], "repeat do");
  if (!times || !body) return nullptr;
  auto s = std::make_unique<RepeatStep>();
  s->times = *times;
  s->body = std::move(*body);
  return s;
}

// ---- conditions (if) ----

struct Condition {
  enum class Kind : std::uint8_t { kMarked, kRank, kChance, kFile, kExpr };
  Kind kind = Kind::kMarked;
  Text mark;
  RankSelector ranks;
  double chance = 0;
  FileCondition file;
  Distribution expr;         // kExpr: holds when its value is not 0 (a comparison is 1 or 0)
  const char* owner = "if";  // the step that asks it: "if", "poll_until"
  std::string source;        // as written: "rank: 0", "chance: 0.3" (kRank and kChance)
  Location where;
  // Whether it holds now. In a full trace, a slice "if exists /ckpt/latest" (category condition) with
  // where it is written, its result and, for a lookup on nfs, whether the client's cache
  // answered (cache: hit) or the server (miss).
  bool eval(RankContext& ctx) const {
    if (ctx.sim.trace().full()) return eval_traced(ctx);
    return eval_now(ctx, nullptr);
  }
  [[gnu::noinline]] bool eval_traced(RankContext& ctx) const {
    const std::string name = std::string(owner) + " " + what(ctx);
    ctx.sim.trace_timeline('B', "condition", name, "{\"at\":\"" + kernel::json_escape(where_text(where)) + "\"}");
    const char* cache = nullptr;
    const bool holds = eval_now(ctx, &cache);
    ctx.sim.trace_timeline('E', "condition", name,
                           std::string("{\"result\":") + (holds ? "true" : "false") +
                               (cache != nullptr && std::string_view(cache) != "none" ? std::string(",\"cache\":\"") + cache + "\"" : "") + "}");
    return holds;
  }
  // What it asks: "exists /ckpt/latest", "marked ready", "rank: 0".
  std::string what(const RankContext& ctx) const {
    switch (kind) {
      case Kind::kMarked: return "marked " + mark.resolve(ctx);
      case Kind::kFile: return file.describe(ctx);
      default: return source;
    }
  }
  bool eval_now(RankContext& ctx, const char** cache) const {
    switch (kind) {
      case Kind::kMarked:
        return ctx.run.marked(mark.resolve(ctx));
      case Kind::kRank:
        return ranks.contains(ctx.rank);
      case Kind::kChance: {
        // A draw like any other (draw.h): a search may take the low end (else), the more likely
        // branch (the median) or the high end (then) instead of the stream's.
        const bool drawn = ctx.rng.bernoulli(chance);
        if (!ctx.sim.draws_decided() || chance <= 0 || chance >= 1) return drawn;
        switch (ctx.sim.decide_draw()) {
          case 0: return drawn;
          case 1: return false;
          case 2: return chance >= 0.5;
          default: return true;
        }
      }
      case Kind::kFile:
        return file.eval(ctx, cache);
      case Kind::kExpr:
        return draw(expr, ctx) != 0;
    }
    return false;
  }
  std::string describe(const RankContext& ctx) const {
    switch (kind) {
      case Kind::kMarked:
        return "'" + mark.resolve(ctx) + "' not marked";
      case Kind::kFile:
        if (file.kind == FileCondition::Kind::kText) {
          return file.path.resolve(ctx) + " does not read '" + file.equals.resolve(ctx) + "'";
        }
        return (file.kind == FileCondition::Kind::kExists ? "no " : "nothing matches ") +
               file.path.resolve(ctx);
      default:
        return "condition not met";
    }
  }
};

// Conditions: marked: NAME, rank: SELECTOR, chance: P, exists: PATH, glob: PATTERN; exactly one.
std::optional<Condition> compile_condition(const Value& args, Compiler& c,
                                           std::string_view what) {
  Condition cond;
  cond.owner = what == "if" ? "if" : "poll_until";
  cond.where = c.at(args);
  int given = 0;
  for (const char* key : {"exists", "glob"}) {
    if (!args[key]) continue;
    ++given;
    auto t = c.text(args[key], std::string(what) + " " + key);
    if (!t) return std::nullopt;
    cond.kind = Condition::Kind::kFile;
    cond.file.kind = key[0] == 'e' ? FileCondition::Kind::kExists : FileCondition::Kind::kGlob;
    cond.file.path = *t;
    cond.file.where = c.at(args[key]);
  }
  if (const Value tx = args["text"]) {
    ++given;
    if (!c.keys(tx, {"path", "equals"}, {"path", "equals"}, std::string(what) + " text")) return std::nullopt;
    auto p = c.text(tx["path"], std::string(what) + " text path");
    auto e = c.text(tx["equals"], std::string(what) + " text equals");
    if (!p || !e) return std::nullopt;
    cond.kind = Condition::Kind::kFile;
    cond.file.kind = FileCondition::Kind::kText;
    cond.file.path = *p;
    cond.file.equals = *e;
    cond.file.where = c.at(tx);
  }
  if (args["marked"]) {
    ++given;
    auto t = c.text(args["marked"], std::string(what) + " marked");
    if (!t) return std::nullopt;
    cond.kind = Condition::Kind::kMarked;
    cond.mark = *t;
  }
  if (args["rank"]) {
    ++given;
    Diagnostics local;
    auto sel = parse_rank_selector(args["rank"], c.scenario().ranks, c.scenario().file, local);
    for (const auto& d : local.all()) c.error(d.where, d.message);
    if (!sel) return std::nullopt;
    cond.kind = Condition::Kind::kRank;
    cond.ranks = *sel;
    cond.source = "rank: " + flow_text(args["rank"]);
  }
  if (args["chance"]) {
    ++given;
    auto p = c.number(args["chance"], 0.0, 1.0, std::string(what) + " chance");
    if (!p) return std::nullopt;
    cond.kind = Condition::Kind::kChance;
    cond.chance = *p;
    cond.source = "chance: " + flow_text(args["chance"]);
  }
  if (args["expr"]) {
    ++given;
    auto e = c.quantity(args["expr"], Unit::kNumber, std::string(what) + " expr");
    if (!e) return std::nullopt;
    cond.kind = Condition::Kind::kExpr;
    cond.expr = *e;
    cond.source = "expr: " + flow_text(args["expr"]);
  }
  if (given != 1) {
    c.error(c.at(args), std::string(what) + ": expected exactly one condition: marked, rank, chance, exists, glob, text or expr");
    return std::nullopt;
  }
  return cond;
}

struct IfStep final : Step {
  bool container() const override { return true; }
  Condition cond;
  StepList then_steps, else_steps;
  void run(RankContext& ctx) const override {
    run_steps(cond.eval(ctx) ? then_steps : else_steps, ctx);
  }
  // A file condition asks the storage model, which blocks.
  Stackless stackless() const override { return cond.kind == Condition::Kind::kFile ? Stackless::kNo : Stackless::kBlock; }
  const StepList* block_body(RankContext& ctx) const override { return cond.eval(ctx) ? &then_steps : &else_steps; }
  std::vector<const StepList*> bodies() const override { return {&then_steps, &else_steps}; }
};

std::unique_ptr<Step> compile_if(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"marked", "rank", "chance", "exists", "glob", "text", "expr", "then", "else"}, {"then"}, "if")) {
    return nullptr;
  }
  auto cond = compile_condition(args, c, "if");
  auto then_steps = c.steps(args["then"], "if then");
  std::optional<StepList> else_steps = StepList{};
  if (args["else"]) else_steps = c.steps(args["else"], "if else");
  if (!cond || !then_steps || !else_steps) return nullptr;
  auto s = std::make_unique<IfStep>();
  s->cond = *cond;
  s->then_steps = std::move(*then_steps);
  s->else_steps = std::move(*else_steps);
  return s;
}

// ---- poll_until / wait ----

struct PollStep final : Step {
  Condition cond;
  Distribution interval;
  Time timeout = 0;
  bool fail_on_timeout = true;
  void run(RankContext& ctx) const override {
    const Time start = ctx.sim.now();
    // Bounded by the timeout: each iteration advances virtual time by at least 1 ns.
    while (!cond.eval(ctx)) {
      if (ctx.sim.now() - start >= timeout) {
        if (fail_on_timeout) {
          ctx.run.fail_and_halt("poll_until", "rank " + std::to_string(ctx.rank) + ": " + cond.describe(ctx) +
                                         " after " + kernel::format_duration(timeout) +
                                         " of polling (" + where_text(where) + ")");
        }
        return;
      }
      const Time step = std::max<Time>(1, sample_time(interval, ctx));
      ctx.sim.sleep_for(std::min(step, timeout - (ctx.sim.now() - start)));
    }
  }
};

std::unique_ptr<Step> compile_poll(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"marked", "exists", "glob", "text", "interval", "timeout", "on_timeout"},
              {"interval", "timeout"}, "poll_until")) {
    return nullptr;
  }
  auto cond = compile_condition(args, c, "poll_until");
  auto interval = c.quantity(args["interval"], Unit::kDuration, "poll_until interval");
  auto timeout = c.fixed_duration(args["timeout"], "poll_until timeout");
  bool fail = true;
  if (const Value ot = args["on_timeout"]) {
    const std::string v = ot.is_scalar() ? ot.scalar() : "";
    if (v != "fail" && v != "continue") {
      c.error(c.at(ot), "poll_until on_timeout: expected 'fail' or 'continue'");
      return nullptr;
    }
    fail = v == "fail";
  }
  if (!cond || !interval || !timeout) return nullptr;
  auto s = std::make_unique<PollStep>();
  s->cond = *cond;
  s->interval = *interval;
  s->timeout = *timeout;
  s->fail_on_timeout = fail;
  return s;
}

struct WaitStep final : Step {
  Text mark;
  Time timeout = kernel::kTimeMax;
  void run(RankContext& ctx) const override {
    const std::string name = mark.resolve(ctx);
    if (!ctx.run.wait_mark(name, timeout)) {
      ctx.run.fail_and_halt("wait", "rank " + std::to_string(ctx.rank) + ": '" + name + "' not marked within " +
                               kernel::format_duration(timeout) + " (" + where_text(where) + ")");
    }
  }
};

std::unique_ptr<Step> compile_wait(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<WaitStep>();
  if (args.is_scalar()) {
    auto t = c.text(args, "wait");
    if (!t) return nullptr;
    s->mark = *t;
    return s;
  }
  if (!c.keys(args, {"marked", "timeout"}, {"marked"}, "wait")) return nullptr;
  auto t = c.text(args["marked"], "wait marked");
  if (!t) return nullptr;
  s->mark = *t;
  if (args["timeout"]) {
    auto t = c.fixed_duration(args["timeout"], "wait timeout");
    if (!t) return nullptr;
    s->timeout = *t;
  }
  return s;
}

// ---- mark / fail ----

struct MarkStep final : Step {
  Text text;
  // Whether reaching it records NAME_s (the time, per rank): when the scenario asks for it
  // (`metric: true`, or NAME_s or NAME named by `metrics:`, a check or an expectation). For a
  // name that differs between ranks, `asked` lists the names asked for.
  bool metric = false;
  std::shared_ptr<const std::set<std::string, std::less<>>> asked;
  std::string describe(const RankContext& ctx) const override { return text.resolve(ctx); }  // the mark's name
  void run(RankContext& ctx) const override {
    const std::string n = text.resolve(ctx);
    ctx.run.set_mark(n);
    if (metric || (asked && asked->count(n + "_s"))) ctx.run.sample(n + "_s", kernel::to_seconds(ctx.sim.now()), ctx.rank);
    ctx.sim.trace_record('i', "mark", n);
  }
  Stackless stackless() const override { return Stackless::kNoWait; }
};

std::unique_ptr<Step> compile_mark(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<MarkStep>();
  Value name = args;
  bool metric = false;
  if (args.is_map()) {
    if (!c.keys(args, {"name", "metric"}, {"name"}, "mark")) return nullptr;
    name = args["name"];
    const auto m = c.flag(args["metric"], "mark metric", false);
    if (!m) return nullptr;
    metric = *m;
  }
  auto t = c.text(name, "mark");
  if (!t) return nullptr;
  s->text = *t;
  if (!t->uses_locals()) c.declare_mark(*t);
  if (metric) {
    // Asked for by name: recorded on every rank that reaches it.
    if (!c.fixed_name(*t, name, "mark")) return nullptr;
    s->metric = true;
    c.declare_series(*t, "_s");
    return s;
  }
  // Otherwise recorded only where the scenario names it (a local in the name: never).
  if (t->uses_locals()) return s;
  const auto asked = c.asked_series();
  std::set<std::string, std::less<>> mine;
  for (int r = 0; r < (t->is_literal() ? 1 : c.scenario().ranks); ++r) {
    if (std::string n = t->resolve(r) + "_s"; asked->count(n)) mine.insert(std::move(n));
  }
  if (mine.empty()) return s;
  for (const std::string& n : mine) c.declare_series(n);
  if (t->is_literal()) {
    s->metric = true;
  } else {
    s->asked = asked;
  }
  return s;
}

struct FailStep final : Step {
  Text text;  // the diagnosis
  void run(RankContext& ctx) const override {
    ctx.run.fail_and_halt("fail", "rank " + std::to_string(ctx.rank) + ": " + text.resolve(ctx) + " (" +
                             where_text(where) + ")");
  }
};

std::unique_ptr<Step> compile_fail(const Value& args, const Location& where, Compiler& c) {
  return compile_text_step<FailStep>(args, where, c, "fail");
}

// ---- slot ----

// A step list run in place: a slot's binding, a `use` of a definition, an unrolled for_each.
struct BlockStep final : Step {
  bool container() const override { return true; }
  StepList body;
  void run(RankContext& ctx) const override { run_steps(body, ctx); }
  Stackless stackless() const override { return Stackless::kBlock; }
  const StepList* block_body(RankContext&) const override { return &body; }
  std::vector<const StepList*> bodies() const override { return {&body}; }
};

std::unique_ptr<Step> block(std::optional<StepList> body) {
  if (!body) return nullptr;
  auto s = std::make_unique<BlockStep>();
  s->body = std::move(*body);
  return s;
}

std::unique_ptr<Step> compile_slot(const Value& args, const Location& where, Compiler& c) {
  if (!args.is_scalar()) {
    c.error(c.at(args), "slot: expected a slot name");
    return nullptr;
  }
  return block(c.compile_slot(args.scalar(), where));
}

std::unique_ptr<Step> compile_use(const Value& args, const Location& where, Compiler& c) {
  return block(c.compile_use(args, where));
}

std::unique_ptr<Step> compile_for_each(const Value& args, const Location& where, Compiler& c) {
  // Over a listing: run when the program runs (storage.h). Over values: unrolled when compiled.
  if (args.is_map() && args["listing"]) return compile_listing_loop(args, c);
  return block(c.compile_for_each(args, where));
}

// ---- spawn / join ----

struct SpawnStep final : Step {
  Text name;
  StepList body;
  bool daemon = false;  // killed when the rank's main program ends
  void run(RankContext& ctx) const override {
    const std::string n = name.resolve(ctx);
    auto key = std::make_pair(ctx.rank, n);
    if (ctx.run.spawned().count(key)) {
      ctx.run.fail("spawn", "rank " + std::to_string(ctx.rank) + ": '" + n +
                         "' is already running (" + where_text(where) + ")");
      return;
    }
    RunState* run = &ctx.run;
    const StepList* steps = &body;
    const int rank = ctx.rank, world = ctx.world;
    kernel::Simulation* sim = &ctx.sim;
    const std::string stream = "rank" + std::to_string(rank) + "/" + n;
    kernel::Process* p = ctx.run.spawned()[key] = ctx.sim.spawn(
        "rank " + std::to_string(rank) + "/" + n,
        // It starts with a copy of the rank's locals, as a thread's closure would have them.
        [sim, run, steps, rank, world, stream, locals = ctx.locals, texts = ctx.text_locals] {
          RankContext child{*sim, *run, rank, world, sim->stream(stream), locals, texts};
          run_rank(*steps, child);
        },
        {.group = "rank " + std::to_string(rank), .lane = n});
    ctx.run.faults().bind(p, rank);  // the helper acts for its rank at the models' fault points
    if (daemon) ctx.run.daemons().insert(key);
  }
};

std::unique_ptr<Step> compile_spawn(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"name", "do", "daemon"}, {"name", "do"}, "spawn")) return nullptr;
  auto name = c.text(args["name"], "spawn name");
  auto body = c.steps(args["do"], "spawn do");
  auto daemon = c.flag(args["daemon"], "spawn daemon", false);
  if (!name || !body || !daemon) return nullptr;
  if (*daemon) c.declare_counter("daemons_killed");
  auto s = std::make_unique<SpawnStep>();
  s->name = *name;
  s->body = std::move(*body);
  s->daemon = *daemon;
  return s;
}

// ---- semaphore ----

// A cluster-wide semaphore (a lock service, a token file): at most `permits` ranks run `do` at
// once, the others queue in arrival order. Records semaphore.NAME.wait_s (per entry) and the
// counter semaphore.NAME.entries.
struct SemaphoreStep final : Step {
  bool container() const override { return true; }
  Text name;
  int permits = 1;
  StepList body;
  std::string describe(const RankContext& ctx) const override { return name.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const std::string n = name.resolve(ctx);
    const kernel::Time start = ctx.sim.now();
    if (const int actual = ctx.run.semaphore_enter(n, permits); actual != permits) {
      raise_step_error(ctx, *this, "no_errors",
                       "semaphore '" + n + "' has " + std::to_string(actual) +
                           " permits (its first use) but this step asks for " + std::to_string(permits));
    }
    ctx.run.sample("semaphore." + n + ".wait_s", kernel::to_seconds(ctx.sim.now() - start), ctx.rank);
    ctx.run.add("semaphore." + n + ".entries", 1);
    struct Release {  // also when a step fails or the rank is killed inside
      RunState& run;
      kernel::Simulation& sim;
      const std::string& name;
      ~Release() {
        if (!sim.tearing_down()) run.semaphore_leave(name);
      }
    } release{ctx.run, ctx.sim, n};
    run_steps(body, ctx);
  }
};

std::unique_ptr<Step> compile_semaphore(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"name", "permits", "do"}, {"name", "permits", "do"}, "semaphore")) return nullptr;
  auto name = c.text(args["name"], "semaphore name");
  auto permits = c.count(args["permits"], 1, 100'000, "semaphore permits");
  auto body = c.steps(args["do"], "semaphore do");
  if (!name || !permits || !body || !c.fixed_name(*name, args["name"], "semaphore name")) return nullptr;
  for (int r = 0; r < (name->is_literal() ? 1 : c.scenario().ranks); ++r) {
    const std::string n = name->resolve(r);
    c.declare_counter("semaphore." + n + ".entries");
    c.declare_series("semaphore." + n + ".wait_s");
  }
  auto s = std::make_unique<SemaphoreStep>();
  s->name = *name;
  s->permits = static_cast<int>(*permits);
  s->body = std::move(*body);
  return s;
}

struct JoinStep final : Step {
  Text text;  // the spawned process's name
  void run(RankContext& ctx) const override {
    const std::string n = text.resolve(ctx);
    auto it = ctx.run.spawned().find({ctx.rank, n});
    if (it == ctx.run.spawned().end()) {
      ctx.run.fail_and_halt("join", "rank " + std::to_string(ctx.rank) + ": nothing named '" + n +
                                        "' was spawned on this rank (" + where_text(where) + ")");
      return;
    }
    ctx.sim.join(it->second);
  }
};

std::unique_ptr<Step> compile_join(const Value& args, const Location& where, Compiler& c) {
  return compile_text_step<JoinStep>(args, where, c, "join");
}

// ---- try / barrier / count ----

struct TryStep final : Step {
  bool container() const override { return true; }
  StepList body, handler;
  void run(RankContext& ctx) const override {
    try {
      run_steps(body, ctx);
    } catch (const StepError& e) {
      ctx.run.add("caught_errors", 1);
      ctx.sim.trace_record('i', "caught", e.diagnosis);
      run_steps(handler, ctx);
    }
  }
};

std::unique_ptr<Step> compile_try(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"do", "catch"}, {"do", "catch"}, "try")) return nullptr;
  auto body = c.steps(args["do"], "try do");
  auto handler = c.steps(args["catch"], "try catch");
  if (!body || !handler) return nullptr;
  auto s = std::make_unique<TryStep>();
  c.declare_counter("caught_errors");
  s->body = std::move(*body);
  s->handler = std::move(*handler);
  return s;
}

struct BarrierStep final : Step {
  Text text;
  std::string describe(const RankContext& ctx) const override { return text.resolve(ctx); }  // the barrier's name
  void run(RankContext& ctx) const override {
    ctx.run.arrive_and_wait(text.resolve(ctx), ctx.world);
  }
  Stackless stackless() const override { return Stackless::kSplit; }
  bool arm(RankContext& ctx) const override {
    kernel::Barrier& b = ctx.run.barrier(text.resolve(ctx), ctx.world);
    ctx.wait_object = &b;
    return b.arrive(kernel::kTimeMax, ctx.wait_value);
  }
  void after_wait(RankContext& ctx, kernel::WaitStatus status) const override {
    static_cast<kernel::Barrier*>(ctx.wait_object)->wait_ended(status, ctx.wait_value);
  }
  void abandon(RankContext& ctx) const override { after_wait(ctx, kernel::WaitStatus::kKilled); }
};

std::unique_ptr<Step> compile_barrier(const Value& args, const Location& where, Compiler& c) {
  return compile_text_step<BarrierStep>(args, where, c, "barrier");
}

struct CountStep final : Step {
  Text text;
  std::string describe(const RankContext& ctx) const override { return text.resolve(ctx); }  // the counter's name
  void run(RankContext& ctx) const override { ctx.run.add(text.resolve(ctx), 1); }
  Stackless stackless() const override { return Stackless::kNoWait; }
};

std::unique_ptr<Step> compile_count(const Value& args, const Location& where, Compiler& c) {
  auto s = compile_text_step<CountStep>(args, where, c, "count");
  if (!s || !c.fixed_name(static_cast<CountStep&>(*s).text, args, "count")) return nullptr;
  c.declare_counter(static_cast<CountStep&>(*s).text);
  return s;
}

// ---- faults ----

void start_crash(ActiveFault& fault, const FaultStart& start) {
  const Time at = to_time(fault.sample("at"));
  const bool restart = fault.sample("restarts") >= 1;
  const Time after = restart ? to_time(fault.sample("restart_after")) : 0;
  kernel::Simulation& sim = start.sim;
  RunState& run = start.run;
  const int rank = fault.rank();
  // The name is a view into the compiled plan, which outlives the run.
  sim.schedule_at(at, [&sim, &run, rank, restart, after, name = fault.name()] {
    // The rank's process now (a restarted rank has a new one).
    kernel::Process* p = run.rank_processes().at(static_cast<std::size_t>(rank));
    if (p->finished()) return;
    sim.trace_record('i', "fault", "crash rank " + std::to_string(rank));
    run.add("crashed_ranks", 1);
    const std::string cause = "crash fault '" + std::string(name) + "'";
    for (auto& [key, helper] : run.spawned()) {
      if (key.first != rank) continue;
      sim.kill(helper, cause);
      run.release(helper, rank);
    }
    sim.kill(p, cause);
    run.release(p, rank);  // as the kernel does: its flocks go, its files are closed
    // Under a group restart policy the agent restarts every rank instead (platform.elastic).
    switch (run.group_failure(rank, p, cause)) {
      case RunState::GroupOutcome::kRestarting:
        return;
      case RunState::GroupOutcome::kExhausted:
        run.fail("elastic", "rank " + std::to_string(rank) + ": " + cause + " at " + seconds_text(sim.now()) +
                                ", after " + std::to_string(run.group_restarts()) +
                                " group restarts (platform.elastic.max_restarts)");
        return;
      case RunState::GroupOutcome::kNoPolicy:
        break;
    }
    if (!restart) return;
    // A job scheduler starts the rank's program again, from its first step. It is a process of
    // its own, so the run goes on while the restart is pending even when no other process is
    // left (the last rank crashed, the others had ended): a callback would let the run end
    // there, with the restarted program never run.
    sim.spawn("restart of rank " + std::to_string(rank), [&sim, &run, rank, after] {
      sim.sleep_for(after);
      sim.trace_record('i', "fault", "restart rank " + std::to_string(rank));
      for (auto it = run.spawned().begin(); it != run.spawned().end();) {
        it = it->first.first == rank ? run.spawned().erase(it) : std::next(it);
      }
      run.restart_rank(rank);
    }, {.group = "rank " + std::to_string(rank), .lane = "restart"});
  });
}

}  // namespace

void register_control_family(Registry& r) {
  // Every control primitive has a live meaning (add_live): racesim live runs them on real
  // processes (barriers, marks and semaphores on the run's board).
  r.add_check({"no_deadlock", true, "no run ends with every live process blocked (the kernel's diagnosis names who waits for whom)"});
  r.add_check({"no_errors", true, "no rank dies of an error the harness did not expect (an exception)"});
  r.add_check({"no_timeout", false, "the run ends before limits.time and limits.events"});
  r.add_check({"fail", true, "a `fail` step was reached"});
  r.add_check({"wait", true, "a `wait` for a mark timed out"});
  r.add_check({"poll_until", true, "a `poll_until` timed out with on_timeout: fail"});
  r.add_check({"spawn", true, "a `spawn` reused a name that is still running"});
  r.add_check({"join", true, "a `join` named nothing spawned"});
  r.add_faults({kernel::straggler_kind()});
  r.add_fault({"crash",
               "the rank's process (and its spawned helpers) is killed at time AT, as a crashed "
               "process: its waits end, joiners are told; with restarts: 1, its program starts again "
               "from the first step RESTART_AFTER later, as a job scheduler would; records "
               "crashed_ranks and restarts",
               {{"at", Unit::kDuration, ""}, {"restarts", Unit::kCount, "0", 0, 1},
                {"restart_after", Unit::kDuration, "30s"}},
               start_crash, {}, {"crashed_ranks", "restarts"}});
  r.add_live({"compute", "compute: DURATION - busy for a (sampled) duration, traced as compute",
         compile_sleep<true>});
  r.add_live({"sleep", "sleep: DURATION - wait for a (sampled) duration", compile_sleep<false>});
  r.add_live({"repeat", "repeat: {times: N, do: [steps]} - run the steps N times", compile_repeat});
  r.add_live({"if",
         "if: {marked: NAME | rank: SELECTOR | chance: P | exists: PATH | glob: PATTERN | text: {path: P, "
         "equals: TEXT} | expr: \"${A == B}\", then: [steps], else: [steps]} - branch",
         compile_if});
  r.add_live({"poll_until",
         "poll_until: {marked: NAME | exists: PATH | glob: PATTERN | text: {path: P, equals: TEXT}, interval: "
         "DURATION, timeout: DURATION, on_timeout: fail|continue} - check a condition every interval",
         compile_poll});
  r.add_live({"wait", "wait: NAME | {marked: NAME, timeout: DURATION} - block until a mark is set",
         compile_wait});
  r.add_live({"mark", "mark: NAME | {name: NAME, metric: true} - set a mark (any rank may wait for it); records "
                      "NAME_s, the time each rank reached it, with metric: true or where the scenario names "
                      "NAME_s (metrics:, checks, expect)",
         compile_mark});
  r.add_live({"fail", "fail: MESSAGE - fail the run with this diagnosis", compile_fail});
  r.add_live({"slot", "slot: NAME - the steps each strategy binds to NAME", compile_slot});
  r.add_live({"use", "use: NAME | {name: NAME, ARG: VALUE, ...} - the steps of define: NAME, its args bound to these values",
         compile_use});
  r.add_live({"for_each",
         "for_each: {var: V, range: N | [START, STOP, STEP] | in: [values] | listing: PATTERN, index: I, do: [steps]} "
         "- the steps once per value, ${V} (and ${I}, its position) in their values and names; a listing's paths "
         "are taken when the step starts (glob.glob, sorted)",
         compile_for_each});
  r.add_live({"spawn", "spawn: {name: NAME, do: [steps], daemon: false} - run steps concurrently on this rank; a daemon "
                  "is killed when the rank's program ends (job exit)",
         compile_spawn});
  r.add_live({"join", "join: NAME - wait for a spawned NAME on this rank to finish", compile_join});
  r.add_live({"semaphore",
         "semaphore: {name: NAME, permits: N, do: [steps]} - at most N ranks run the steps at once (cluster-wide, "
         "FIFO); records semaphore.NAME.wait_s",
         compile_semaphore});
  r.add_live({"try",
         "try: {do: [steps], catch: [steps]} - run the catch steps if a step fails with an "
         "error (an I/O error, a lock error)",
         compile_try});
  r.add_live({"barrier", "barrier: NAME - wait until every rank has reached this barrier", compile_barrier});
  r.add_live({"count", "count: NAME - add 1 to the counter NAME (a metric)", compile_count});
}

}  // namespace racesim::scenario
