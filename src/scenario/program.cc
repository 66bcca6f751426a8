#include "src/scenario/program.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "src/scenario/cluster.h"
#include "src/scenario/platform.h"
#include "src/scenario/stats.h"
#include "src/scenario/storage.h"
#include "src/scenario/yaml_util.h"

namespace racesim::scenario {

// ---- RunState ----

namespace {
const Platform& empty_platform() {
  static const Platform p;
  return p;
}
}  // namespace

RunState::RunState(kernel::Simulation& sim, const Platform* platform, int world)
    : sim_(sim), platform_(platform ? platform : &empty_platform()), world_(world) {}

RunState::~RunState() = default;

StorageRuntime& RunState::storage() {
  if (!storage_) storage_ = std::make_unique<StorageRuntime>(sim_, *platform_, &faults_);
  return *storage_;
}

void RunState::set_rank_processes(std::vector<kernel::Process*> ranks) {
  rank_processes_ = std::move(ranks);
  for (std::size_t r = 0; r < rank_processes_.size(); ++r) faults_.bind(rank_processes_[r], static_cast<int>(r));
}

ClusterRuntime& RunState::cluster() {
  if (!cluster_) {
    cluster_ = std::make_unique<ClusterRuntime>(sim_, *platform_, world_, &faults_);
    // Until a rank has a comm queue, its main process stands for it in deadlock reports.
    for (std::size_t r = 0; r < rank_processes_.size(); ++r) {
      cluster_->engine().set_process(static_cast<int>(r), rank_processes_[r]);
    }
  }
  return *cluster_;
}

kernel::Barrier& RunState::barrier(const std::string& name, int parties) {
  auto& slot = barriers_[name];
  if (!slot) {
    slot = std::make_unique<kernel::Barrier>(sim_, "barrier '" + name + "'",
                                             static_cast<std::size_t>(std::max(1, parties)));
  }
  return *slot;
}

void RunState::release(const kernel::Process* p, int rank) {
  if (storage_) storage_->release(p, rank);
}

kernel::Event& RunState::mark(const std::string& name) {
  auto it = marks_.find(name);
  if (it == marks_.end()) {
    it = marks_.emplace(name, std::make_unique<kernel::Event>(sim_, "mark '" + name + "'")).first;
  }
  return *it->second;
}

bool RunState::marked(const std::string& name) const {
  auto it = marks_.find(name);
  return it != marks_.end() && it->second->is_set();
}

void RunState::sample(const std::string& series, double value) {
  auto& v = series_[series];
  // Bounded: a series holds at most one value per step a rank runs, and steps are bounded by
  // the run's event limit; this cap keeps a runaway loop from exhausting memory regardless.
  if (v.size() < (std::size_t{1} << 24)) v.push_back(value);
}

void RunState::add(const std::string& counter, double delta) { counters_[counter] += delta; }

namespace {

double statistic(std::vector<double> v, const std::string& stat) {
  if (stat == "count") return static_cast<double>(v.size());
  if (stat == "sum" || stat == "mean") {
    double sum = 0;
    for (double x : v) sum += x;
    return stat == "sum" ? sum : sum / static_cast<double>(v.size());
  }
  std::sort(v.begin(), v.end());
  if (stat == "min") return v.front();
  if (stat == "max") return v.back();
  // p50/p90/p99, as the reports compute them.
  return percentile_sorted(v, std::stod(stat.substr(1)));
}

}  // namespace

std::map<std::string, double> RunState::metrics(const std::vector<MetricDef>& defs) const {
  std::map<std::string, double> out;
  for (const auto& [name, v] : series_) {
    if (!v.empty()) out[name] = *std::max_element(v.begin(), v.end());
  }
  for (const auto& [name, total] : counters_) out[name] = total;
  // Every fault of the plan has its hits, 0 where it was inactive or never bit, so no
  // statistic is taken over only the runs in which it happened to be active.
  for (const std::string& name : fault_names_) out["faults." + name + ".hits"] = 0;
  for (const kernel::ActiveFault& f : faults_.all()) {
    out["faults." + f.name() + ".hits"] += static_cast<double>(f.hit_count());
  }
  if (storage_) storage_->metrics(out);
  if (cluster_) cluster_->metrics(out);
  for (const MetricDef& d : defs) {
    auto it = series_.find(d.of);
    if (it != series_.end() && !it->second.empty()) {
      out[d.name] = statistic(it->second, d.stat);
    } else if (auto c = counters_.find(d.of); c != counters_.end()) {
      out[d.name] = statistic({c->second}, d.stat);
    }
  }
  return out;
}

void RunState::arm_faults(const std::vector<CompiledFault>& faults, int world) {
  std::vector<const CompiledFault*> started;  // parallel to faults_.all()
  for (const CompiledFault& f : faults) {
    kernel::RandomStream draw = sim_.stream("fault/" + f.name);
    double active = 0;
    for (int r = 0; r < world; ++r) {
      if (!f.on.contains(r)) continue;
      // Always draw, so a probability of 1 and of 0.99 consume the stream alike.
      const bool on = draw.uniform01() < f.probability;
      if (!on) continue;
      kernel::ActiveFault a(f.name, f.kind->name, r, sim_.stream("fault/" + f.name + "/" + std::to_string(r)));
      for (const auto& [kind, name] : f.aims) a.aim(kind, name);
      for (const auto& [arg, d] : f.args) {
        a.set_arg(arg, [d = d](kernel::RandomStream& rng) { return d.sample(rng); });
      }
      faults_.add(std::move(a));
      started.push_back(&f);
      ++active;
    }
    counters_["faults." + f.name] += active;
    fault_names_.push_back(f.name);
  }
  for (std::size_t i = 0; i < started.size(); ++i) {
    if (FaultStartFn start = started[i]->kind->start) {
      kernel::ActiveFault& a = faults_.all()[i];
      start(a, {sim_, *this, rank_processes_.at(static_cast<std::size_t>(a.rank()))});
    }
  }
}

bool RunState::fail(std::string check, std::string diagnosis) {
  if ((check == "model_loads_intact" || check == "no_io_errors" || check == "shards_correct" ||
       check == "no_oom") &&
      checks_ && !checks_->empty() &&
      std::find(checks_->begin(), checks_->end(), check) == checks_->end()) {
    add("ignored." + check, 1);
    return false;
  }
  if (failure_) return true;
  failure_ = Failure{std::move(check), diagnosis};
  sim_.stop(std::move(diagnosis));
  return true;
}

// ---- Text ----

std::string Text::resolve(const RankContext& ctx) const {
  std::string out;
  for (const Part& p : parts_) {
    if (!p.var) {
      out += p.text;
    } else if (p.text == "rank") {
      out += std::to_string(ctx.rank);
    } else {
      out += std::to_string(ctx.world);
    }
  }
  return out;
}

// ---- Interpreter ----

void run_steps(const StepList& steps, RankContext& ctx) {
  for (const auto& s : steps) {
    if (s->on && !s->on->contains(ctx.rank)) continue;
    s->run(ctx);
  }
}

std::string seconds_text(kernel::Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", kernel::to_seconds(t));
  return buf;
}

void run_rank(const StepList& steps, RankContext& ctx) {
  try {
    run_steps(steps, ctx);
  } catch (const StepError& e) {
    ctx.run.fail(e.check, e.diagnosis);
  }
}

// ---- Registry ----

void Registry::add(PrimitiveInfo info) {
  const std::string name = info.name;
  [[maybe_unused]] const bool inserted = by_name_.emplace(name, std::move(info)).second;
  assert(inserted && "primitive registered twice");
}

const PrimitiveInfo* Registry::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

std::vector<const PrimitiveInfo*> Registry::all() const {
  std::vector<const PrimitiveInfo*> out;
  for (const auto& [n, p] : by_name_) out.push_back(&p);
  return out;
}

void Registry::add_faults(const std::vector<kernel::FaultKindSpec>& kinds, FaultStartFn start) {
  for (const kernel::FaultKindSpec& k : kinds) {
    FaultKindInfo info{k.name, k.help, {}, start, k.aimable};
    for (const kernel::FaultArgSpec& a : k.args) {
      const Unit unit = a.unit == "duration" ? Unit::kDuration : a.unit == "bytes" ? Unit::kBytes : Unit::kNumber;
      assert((a.unit == "duration" || a.unit == "bytes" || a.unit == "number") && "a fault argument's unit");
      info.args.push_back({a.name, unit, a.default_value});
    }
    add_fault(std::move(info));
  }
}

void Registry::add_fault(FaultKindInfo info) {
  const std::string name = info.name;
  [[maybe_unused]] const bool inserted = faults_.emplace(name, std::move(info)).second;
  assert(inserted && "fault kind registered twice");
}

const FaultKindInfo* Registry::find_fault(std::string_view name) const {
  auto it = faults_.find(name);
  return it == faults_.end() ? nullptr : &it->second;
}

std::vector<const FaultKindInfo*> Registry::all_faults() const {
  std::vector<const FaultKindInfo*> out;
  for (const auto& [n, f] : faults_) out.push_back(&f);
  return out;
}

std::string Registry::names() const {
  std::string s;
  for (const auto& [n, p] : by_name_) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const Registry& builtin_registry() {
  static const Registry r = [] {
    Registry reg;
    register_control_primitives(reg);
    register_storage_primitives(reg);
    register_cluster_primitives(reg);
    return reg;
  }();
  return r;
}

// ---- Compiler ----

bool Compiler::keys(const YAML::Node& node, std::initializer_list<std::string_view> allowed,
                    std::initializer_list<std::string_view> required, std::string_view what) {
  const std::size_t before = diags_.count();
  if (!node.IsMap()) {
    diags_.error(at(node), std::string(what) + ": expected a map, got " + kind_of(node));
    return false;
  }
  check_keys(node, allowed, what, sc_.file, diags_);
  for (std::string_view k : required) {
    if (!node[std::string(k)]) {
      diags_.error(at(node), std::string(what) + ": missing '" + std::string(k) + "'");
    }
  }
  return diags_.count() == before;
}

std::optional<Distribution> Compiler::quantity(const YAML::Node& node, Unit unit,
                                               std::string_view what) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s.size() > 3 && s.compare(0, 2, "${") == 0 && s.back() == '}' &&
        s.find("${", 2) == std::string::npos) {
      const std::string name = s.substr(2, s.size() - 3);
      auto it = sc_.params.find(name);
      if (it == sc_.params.end()) {
        // The loader already reported undefined names; rank/world are not quantities here.
        if (name == "rank" || name == "world") {
          diags_.error(at(node), std::string(what) + ": ${" + name + "} is not a " + to_string(unit));
        }
        return std::nullopt;
      }
      Distribution d = it->second.value;
      // Unitless params are numbers; one that is a constant whole number >= 0 serves as a count.
      const bool whole = d.is_constant() && d.a >= 0 && d.a == std::floor(d.a);
      if ((unit == Unit::kNumber && d.unit == Unit::kCount) ||
          (unit == Unit::kCount && d.unit == Unit::kNumber && whole)) {
        d.unit = unit;
      }
      if (d.unit != unit) {
        diags_.error(at(node), std::string(what) + ": param '" + name + "' is a " +
                                   to_string(d.unit) + " (" + d.describe() + "), expected a " +
                                   to_string(unit) + " like " + example_of(unit));
        return std::nullopt;
      }
      return d;
    }
  }
  std::string prefixed(what);
  Diagnostics local;
  auto d = parse_distribution(node, unit, sc_.file, local);
  for (const Diagnostic& x : local.all()) diags_.error(x.where, prefixed + ": " + x.message);
  return d;
}

std::optional<std::int64_t> Compiler::count(const YAML::Node& node, std::int64_t lo,
                                            std::int64_t hi, std::string_view what) {
  auto d = quantity(node, Unit::kCount, what);
  if (!d) return std::nullopt;
  if (!d->is_constant() || d->a < static_cast<double>(lo) || d->a > static_cast<double>(hi)) {
    diags_.error(at(node), std::string(what) + ": expected a whole number from " +
                               std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                               d->describe());
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d->a);
}

std::optional<double> Compiler::number(const YAML::Node& node, double lo, double hi,
                                       std::string_view what) {
  auto d = quantity(node, Unit::kNumber, what);
  if (!d) return std::nullopt;
  if (!d->is_constant() || d->a < lo || d->a > hi) {
    diags_.error(at(node), std::string(what) + ": expected a number from " +
                               format_quantity(lo, Unit::kNumber) + " to " +
                               format_quantity(hi, Unit::kNumber) + ", got " + d->describe());
    return std::nullopt;
  }
  return d->a;
}

std::optional<kernel::Time> Compiler::fixed_duration(const YAML::Node& node, std::string_view what) {
  auto d = quantity(node, Unit::kDuration, what);
  if (!d) return std::nullopt;
  if (!d->is_constant()) {
    diags_.error(at(node), std::string(what) + ": expected a fixed duration");
    return std::nullopt;
  }
  return static_cast<kernel::Time>(d->a);
}

std::optional<bool> Compiler::flag(const YAML::Node& node, std::string_view what, bool fallback) {
  if (!node) return fallback;
  if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) {
    return node.Scalar() == "true";
  }
  diags_.error(at(node), std::string(what) + ": expected true or false");
  return std::nullopt;
}

std::optional<Text> Compiler::text(const YAML::Node& node, std::string_view what) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    diags_.error(at(node), std::string(what) + ": expected a non-empty name, got " + kind_of(node));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  Text t;
  std::string literal;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t open = s.find("${", pos);
    if (open == std::string::npos) {
      literal += s.substr(pos);
      break;
    }
    literal += s.substr(pos, open - pos);
    const std::size_t close = s.find('}', open);
    if (close == std::string::npos) return std::nullopt;  // reported by the loader
    const std::string name = s.substr(open + 2, close - open - 2);
    if (name == "rank" || name == "world") {
      if (!literal.empty()) t.parts_.push_back({false, std::move(literal)});
      literal.clear();
      t.parts_.push_back({true, name});
    } else {
      auto it = sc_.params.find(name);
      if (it == sc_.params.end()) return std::nullopt;  // reported by the loader
      if (!it->second.value.is_constant()) {
        diags_.error(at(node), std::string(what) + ": param '" + name +
                                   "' is a distribution and cannot be part of a name");
        return std::nullopt;
      }
      literal += format_quantity(it->second.value.a, it->second.value.unit);
    }
    pos = close + 1;
  }
  if (!literal.empty()) t.parts_.push_back({false, std::move(literal)});
  return t;
}

std::optional<StepList> Compiler::steps(const YAML::Node& node, std::string_view what) {
  if (!node.IsSequence()) {
    diags_.error(at(node), std::string(what) + ": expected a list of steps, got " + kind_of(node));
    return std::nullopt;
  }
  return compile_list(node);
}

StepList Compiler::compile_list(const YAML::Node& steps) {
  StepList out;
  for (const auto& n : steps) {
    if (auto s = compile_step(n)) out.push_back(std::move(s));
  }
  return out;
}

std::unique_ptr<Step> Compiler::compile_step(const YAML::Node& node) {
  const std::string expected =
      "expected a step: a map with one primitive (" + registry_.names() + ") and optionally 'on'";
  if (!node.IsMap()) {
    diags_.error(at(node), expected + ", got " + kind_of(node));
    return nullptr;
  }
  // (A default YAML::Node is a defined null node, so presence is tracked with flags.)
  YAML::Node prim_key, prim_args, on_node;
  bool has_prim = false, has_on = false;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (key == "on") {
      on_node = kv.second;
      has_on = true;
    } else if (has_prim) {
      diags_.error(at(kv.first), "a step has one primitive, but '" + prim_key.Scalar() +
                                     "' and '" + key + "' are both here");
      return nullptr;
    } else {
      prim_key = kv.first;
      prim_args = kv.second;
      has_prim = true;
    }
  }
  if (!has_prim) {
    diags_.error(at(node), expected);
    return nullptr;
  }
  const PrimitiveInfo* info = registry_.find(prim_key.Scalar());
  if (info == nullptr) {
    diags_.error(at(prim_key), "unknown primitive '" + prim_key.Scalar() + "' (known: " +
                                   registry_.names() + "; `racesim list` describes each)");
    return nullptr;
  }
  std::optional<RankSelector> on;
  if (has_on) {
    on = parse_rank_selector(on_node, sc_.ranks, sc_.file, diags_);
    if (!on) return nullptr;
  }
  const Location where = at(prim_key);
  std::unique_ptr<Step> step = info->compile(prim_args, where, *this);
  if (step) {
    step->where = where;
    step->on = std::move(on);
  }
  return step;
}

std::optional<CompiledFault> Compiler::fault(const FaultSpec& spec, const Platform* platform) {
  const FaultKindInfo* kind = registry_.find_fault(spec.kind);
  if (kind == nullptr) {
    std::string known;
    for (const FaultKindInfo* k : registry_.all_faults()) known += (known.empty() ? "" : ", ") + k->name;
    diags_.error(spec.where, "unknown fault kind '" + spec.kind + "' (known: " + known +
                                 "; `racesim list` describes each)");
    return std::nullopt;
  }
  const std::size_t before = diags_.count();
  CompiledFault f;
  f.name = spec.name;
  f.kind = kind;
  f.where = spec.where;
  f.probability = spec.probability;
  if (spec.on && !spec.on.IsNull()) resolve_fault_target(spec, *kind, platform, f);
  std::vector<std::string> given;
  for (const auto& kv : spec.args) {
    const std::string key = kv.first.Scalar();
    given.push_back(key);
    const FaultArg* arg = nullptr;
    for (const FaultArg& a : kind->args) {
      if (a.name == key) arg = &a;
    }
    if (arg == nullptr) {
      std::string known = "name, kind, on, probability";
      for (const FaultArg& a : kind->args) known += ", " + a.name;
      diags_.error(sc_.where("faults." + spec.name + "." + key, kv.first),
                   "fault '" + spec.name + "' (" + spec.kind + "): unknown key '" + key +
                       "' (expected " + known + ")");
      continue;
    }
    Diagnostics local;
    Compiler sub(sc_, strategy_, registry_, local);
    if (auto d = sub.quantity(kv.second, arg->unit, spec.name + "." + key)) f.args.emplace(key, *d);
    for (const Diagnostic& x : local.all()) {
      diags_.error(sc_.where("faults." + spec.name + "." + key, kv.second), x.message);
    }
  }
  for (const FaultArg& a : kind->args) {
    if (std::find(given.begin(), given.end(), a.name) != given.end()) continue;
    if (a.default_value.empty()) {
      diags_.error(spec.where, "fault '" + spec.name + "' (" + spec.kind + "): missing '" +
                                   a.name + "' (a " + to_string(a.unit) + ")");
      continue;
    }
    auto d = parse_quantity(a.default_value, a.unit);
    assert(d && "a fault kind's default must parse");
    f.args.emplace(a.name, Distribution::constant(*d, a.unit));
  }
  if (diags_.count() != before) return std::nullopt;
  return f;
}

void Compiler::resolve_fault_target(const FaultSpec& spec, const FaultKindInfo& kind,
                                    const Platform* platform, CompiledFault& f) {
  const std::string key = "faults." + spec.name + ".on";
  const bool overridden = sc_.overridden.count(key) > 0;
  // Errors inside a value given by --set or a sweep point are reported where it came from.
  auto report = [&](const Location& where, const std::string& message) {
    diags_.error(overridden ? sc_.where(key, spec.on) : where,
                 "fault '" + spec.name + "' (" + spec.kind + ") on: " + message);
  };
  auto selector = [&](const YAML::Node& node) {
    Diagnostics local;
    if (auto sel = parse_rank_selector(node, sc_.ranks, sc_.file, local)) f.on = *sel;
    for (const Diagnostic& x : local.all()) report(x.where, x.message);
  };
  const YAML::Node& on = spec.on;
  const bool target = on.IsMap() && (on["ranks"] || on["mount"] || on["comm"] || on["link"]);
  if (!target) {
    selector(on);
    return;
  }
  {
    Diagnostics local;
    check_keys(on, {"ranks", "mount", "comm", "link"}, "a fault's on", sc_.file, local);
    for (const Diagnostic& x : local.all()) report(x.where, x.message);
  }
  if (on["ranks"]) selector(on["ranks"]);
  auto aim = [&](const char* field, kernel::ResourceKind rk, const std::vector<std::string>& known) {
    const YAML::Node n = on[field];
    if (!n) return;
    if (std::find(kind.aimable.begin(), kind.aimable.end(), rk) == kind.aimable.end()) {
      std::string can;
      for (kernel::ResourceKind k : kind.aimable) can += std::string(", a ") + kernel::to_string(k);
      report(at(n), "a " + spec.kind + " fault cannot be aimed at a " + kernel::to_string(rk) +
                        " (it can be aimed at ranks" + can + ")");
      return;
    }
    const std::string v = n.IsScalar() ? n.Scalar() : "";
    if (std::find(known.begin(), known.end(), v) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      report(at(n), std::string("unknown ") + field + " '" + (n.IsScalar() ? v : kind_of(n)) +
                        "' (expected one of: " + (list.empty() ? std::string("none defined") : list) + ")");
      return;
    }
    f.aims.emplace_back(rk, v);
  };
  std::vector<std::string> mounts;
  if (platform) {
    for (const MountSpec& m : platform->mounts) mounts.push_back(m.name);
  }
  std::vector<std::string> comms = {"world", "ep", "fsdp"};
  comms.insert(comms.end(), comms_.begin(), comms_.end());
  aim("mount", kernel::ResourceKind::kMount, mounts);
  aim("comm", kernel::ResourceKind::kComm, comms);
  aim("link", kernel::ResourceKind::kLink, {"intra", "inter"});
}

StepList Compiler::compile_slot(const std::string& slot, const Location& where) {
  auto it = strategy_.slots.find(slot);
  if (it == strategy_.slots.end()) {
    diags_.error(where, "strategy '" + strategy_.name + "' has no binding for slot '" + slot + "'");
    return {};
  }
  for (const auto& s : slot_stack_) {
    if (s == slot) {
      diags_.error(where, "slot '" + slot + "' expands into itself");
      return {};
    }
  }
  slot_stack_.push_back(slot);
  StepList out = compile_list(it->second);
  slot_stack_.pop_back();
  return out;
}

std::optional<CompiledProgram> compile_program(const Scenario& sc, const Strategy& strategy,
                                               Diagnostics& diags, const Registry& registry) {
  const std::size_t before = diags.count();
  Compiler c(sc, strategy, registry, diags);
  CompiledProgram p;
  p.scenario = &sc;
  p.strategy = &strategy;
  if (auto platform = parse_platform(sc, diags)) {
    p.platform = std::make_shared<const Platform>(std::move(*platform));
  }
  p.steps = c.compile_list(sc.program);
  for (const FaultSpec& spec : sc.faults) {
    if (auto f = c.fault(spec, p.platform.get())) p.faults.push_back(std::move(*f));
  }
  if (diags.count() != before) return std::nullopt;
  return p;
}

}  // namespace racesim::scenario
