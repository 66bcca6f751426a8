// The compiler (see compiler.h).
#include "src/scenario/compile/compiler.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "src/scenario/file/closest.h"
#include "src/scenario/language/group_restart.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/language/platform.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

void Compiler::report(const Location& given, std::string message) {
  // A key the author left out is a Value made by no line (line 0): the error is at the step that
  // lacks it, so every error names a line.
  const Location& where = (given.line == 0 && !step_sites_.empty()) ? *step_sites_.back() : given;
  if (uses_.empty()) {
    diags_.error(where, std::move(message));
    return;
  }
  // Inside a `use`: at the outermost use, which is what the author of this program wrote; the
  // definition's line is named in the message.
  std::string chain;
  for (const UseFrame& u : uses_) chain += (chain.empty() ? "" : " > ") + u.name;
  diags_.error(uses_.front().site, std::move(message) + " (in `use: " + chain + "`, at " + where_text(where) + ")");
}

void Compiler::declare_counter(const Text& name) {
  if (name.is_literal()) {
    metrics_.counters.insert(name.resolve(0));
    return;
  }
  for (int r = 0; r < sc_.ranks; ++r) metrics_.counters.insert(name.resolve(r));
}

void Compiler::declare_mark(const Text& name) {
  const int n = name.is_literal() ? 1 : sc_.ranks;
  for (int r = 0; r < n; ++r) metrics_.marks.insert(name.resolve(r));
}

void Compiler::declare_series(const Text& name, std::string_view suffix) {
  const int n = name.is_literal() ? 1 : sc_.ranks;
  for (int r = 0; r < n; ++r) metrics_.series.insert(name.resolve(r) + std::string(suffix));
}

bool Compiler::keys(const Value& node, std::initializer_list<std::string_view> allowed,
                    std::initializer_list<std::string_view> required, std::string_view what) {
  const std::size_t before = diags_.count();
  if (!node.is_map()) {
    report(at(node), std::string(what) + ": expected a map, got " + kind_of(node));
    return false;
  }
  {
    Diagnostics local;
    check_keys(node, allowed, what, sc_.file, local);
    for (const Diagnostic& x : local.all()) report(x.where, x.message);
  }
  for (std::string_view k : required) {
    if (!node[std::string(k)]) {
      report(at(node), std::string(what) + ": missing '" + std::string(k) + "'");
    }
  }
  return diags_.count() == before;
}

int Compiler::ranks_per_node() const {
  return platform_ && platform_->ranks_per_node > 0 ? platform_->ranks_per_node : sc_.ranks;
}

std::string Compiler::known_names() const {
  std::string out;
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    for (const auto& [name, b] : *s) out += name + ", ";
  }
  for (const auto& [name, p] : sc_.params) out += name + ", ";
  return out + "rank, world, node, local_rank, ranks_per_node, nodes";
}

std::optional<Binding> Compiler::lookup(std::string_view name) {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    if (auto it = s->find(name); it != s->end()) return it->second;
  }
  if (auto it = sc_.params.find(std::string(name)); it != sc_.params.end()) {
    const Param& p = it->second;
    Binding b;
    if (p.text) {
      b.kind = Binding::Kind::kText;
      b.text = *p.text;
      return b;
    }
    if (!p.expr) {
      if (p.value.is_constant()) {
        b.number = p.value.a;
        b.unit = p.value.unit;
      } else {
        b.kind = Binding::Kind::kDistribution;
        b.dist = p.value;
      }
      return b;
    }
    // A param defined by an expression over other params (and built-ins, not loop variables).
    if (std::find(resolving_.begin(), resolving_.end(), p.name) != resolving_.end()) {
      std::string cycle;
      for (const std::string& r : resolving_) cycle += r + " -> ";
      report(p.where, "param '" + p.name + "' is defined in terms of itself (" + cycle + p.name + ")");
      return std::nullopt;
    }
    resolving_.push_back(p.name);
    auto saved = std::move(scopes_);
    scopes_.clear();
    auto e = Expr::parse(*p.expr, [this](std::string_view n) { return lookup(n); },
                         [this] { return known_names(); }, ranks_per_node());
    scopes_ = std::move(saved);
    resolving_.pop_back();
    if (!e) {
      report(p.where, "param '" + p.name + "': ${" + *p.expr + "}: " + e.message());
      return std::nullopt;
    }
    const Expr& x = **e;
    if (x.text()) {
      b.kind = Binding::Kind::kText;
      b.text = *x.text();
      return b;
    }
    if (!x.uses_rank() && !x.random()) {
      auto v = x.eval(0, nullptr);
      if (!v) {
        report(p.where, "param '" + p.name + "': ${" + *p.expr + "} divides by zero");
        return std::nullopt;
      }
      b.number = *v;
      b.unit = x.unit();
      return b;
    }
    b.kind = Binding::Kind::kDistribution;
    b.dist = Distribution::expression(*e, x.unit());
    return b;
  }
  Binding b;
  b.unit = Unit::kCount;
  if (name == "rank") {
    b.kind = Binding::Kind::kRank;
  } else if (name == "node") {
    b.kind = Binding::Kind::kNode;
  } else if (name == "local_rank") {
    b.kind = Binding::Kind::kLocalRank;
  } else if (name == "world") {
    b.number = sc_.ranks;
  } else if (name == "ranks_per_node") {
    b.number = ranks_per_node();
  } else if (name == "nodes") {
    b.number = (sc_.ranks + ranks_per_node() - 1) / ranks_per_node();
  } else {
    return std::nullopt;
  }
  return b;
}

std::shared_ptr<const Expr> Compiler::expression(const std::string& source, const Value& node,
                                                 std::string_view what) {
  auto e = Expr::parse(source, [this](std::string_view n) { return lookup(n); },
                       [this] { return known_names(); }, ranks_per_node());
  if (!e) {
    report(at(node), std::string(what) + ": ${" + source + "}: " + e.message());
    return nullptr;
  }
  return *e;
}

std::optional<Distribution> Compiler::quantity(const Value& node, Unit unit,
                                               std::string_view what) {
  if (node.is_scalar() && node.scalar().find("${") != std::string::npos) {
    const std::string& s = node.scalar();
    const auto whole = whole_expression(s);
    if (!whole) {
      report(at(node), std::string(what) + ": expected a " + to_string(unit) + " like " + example_of(unit) +
                                 " or one expression ${...} with nothing around it, got '" + s + "'");
      return std::nullopt;
    }
    const std::string& source = *whole;
    // A param alone is that param's value (a distribution keeps its description).
    auto param = sc_.params.find(source);
    bool shadowed = false;
    for (const auto& scope : scopes_) shadowed = shadowed || scope.count(source);
    if (param != sc_.params.end() && !param->second.text && !param->second.expr && !shadowed) {
      Distribution d = param->second.value;
      // Unitless params are numbers; one that is a constant whole number >= 0 serves as a count.
      const bool whole = d.is_constant() && d.a >= 0 && d.a == std::floor(d.a);
      if ((unit == Unit::kNumber && d.unit == Unit::kCount) ||
          (unit == Unit::kCount && d.unit == Unit::kNumber && whole)) {
        d.unit = unit;
      }
      if (d.unit != unit) {
        report(at(node), std::string(what) + ": param '" + source + "' is a " +
                                   to_string(d.unit) + " (" + d.describe() + "), expected a " +
                                   to_string(unit) + " like " + example_of(unit));
        return std::nullopt;
      }
      return d;
    }
    auto e = expression(source, node, what);
    if (!e) return std::nullopt;
    if (e->is_text()) {
      report(at(node), std::string(what) + ": ${" + source + "} is text" + (e->text() ? " (\"" + *e->text() + "\")" : "") +
                           ", expected a " + to_string(unit) + " like " + example_of(unit));
      return std::nullopt;
    }
    Unit got = e->unit();
    if ((unit == Unit::kNumber && got == Unit::kCount) || (unit == Unit::kCount && got == Unit::kNumber)) got = unit;
    if (got != unit) {
      report(at(node), std::string(what) + ": ${" + source + "} is " +
                                 (e->unit() == Unit::kCount || e->unit() == Unit::kNumber ? "a number" : std::string("a ") + to_string(e->unit())) +
                                 ", expected a " + to_string(unit) + " like " + example_of(unit));
      return std::nullopt;
    }
    if (e->random() || e->uses_locals()) {
      if (e->divides_by_random()) {
        report(at(node), std::string(what) + ": ${" + source + "} divides by a value drawn from a "
                                                       "distribution or held in a local, which may be 0");
        return std::nullopt;
      }
      return Distribution::expression(e, unit);
    }
    // Checked for every rank (or once, for a constant): defined, and whole where a count is. An
    // expression monotone in the rank is checked at the two ranks where it takes its extremes,
    // which decide it for all (a loop unrolled 100,000 times over 4,096 ranks is checked in
    // 200,000 evaluations, not 400 million).
    std::vector<int> ranks = {0};
    if (e->uses_rank()) {
      if (const auto ends = e->extreme_ranks(sc_.ranks, unit == Unit::kCount)) {
        ranks = {std::min(ends->first, ends->second), std::max(ends->first, ends->second)};
      } else {
        ranks.resize(static_cast<std::size_t>(sc_.ranks));
        for (int r = 0; r < sc_.ranks; ++r) ranks[static_cast<std::size_t>(r)] = r;
      }
    }
    double lo = 0, hi = 0;
    for (const int r : ranks) {
      const auto v = e->eval(r, nullptr);
      const std::string at_rank = e->uses_rank() ? " at rank " + std::to_string(r) : "";
      if (!v) {
        report(at(node), std::string(what) + ": ${" + source + "} divides by zero" + at_rank);
        return std::nullopt;
      }
      if (unit == Unit::kCount && (*v != std::floor(*v) || *v < 0)) {
        report(at(node), std::string(what) + ": ${" + source + "} is " + format_for_name(*v, Unit::kNumber) +
                                   at_rank + ", expected a whole number >= 0");
        return std::nullopt;
      }
      if ((unit == Unit::kDuration || unit == Unit::kBytes || unit == Unit::kBandwidth) && *v < 0) {
        report(at(node), std::string(what) + ": ${" + source + "} is " + format_quantity(*v, unit) + at_rank +
                                   ", and a " + to_string(unit) + " cannot be negative");
        return std::nullopt;
      }
      lo = r == ranks.front() ? *v : std::min(lo, *v);
      hi = r == ranks.front() ? *v : std::max(hi, *v);
    }
    if (!e->uses_rank()) return Distribution::constant(lo, unit);
    Distribution d = Distribution::expression(e, unit);
    d.a = lo;
    d.b = hi;
    return d;
  }
  std::string prefixed(what);
  Diagnostics local;
  auto d = parse_distribution(node, unit, sc_.file, local);
  for (const Diagnostic& x : local.all()) report(x.where, prefixed + ": " + x.message);
  return d;
}

std::optional<std::int64_t> Compiler::count(const Value& node, std::int64_t lo,
                                            std::int64_t hi, std::string_view what) {
  auto d = quantity(node, Unit::kCount, what);
  if (!d) return std::nullopt;
  if (!d->is_constant() || d->a < static_cast<double>(lo) || d->a > static_cast<double>(hi)) {
    report(at(node), std::string(what) + ": expected a whole number from " +
                               std::to_string(lo) + " to " + std::to_string(hi) + ", got " +
                               d->describe());
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d->a);
}

std::optional<double> Compiler::number(const Value& node, double lo, double hi,
                                       std::string_view what) {
  auto d = quantity(node, Unit::kNumber, what);
  if (!d) return std::nullopt;
  if (!d->is_constant() || d->a < lo || d->a > hi) {
    report(at(node), std::string(what) + ": expected a number from " +
                               format_quantity(lo, Unit::kNumber) + " to " +
                               format_quantity(hi, Unit::kNumber) + ", got " + d->describe());
    return std::nullopt;
  }
  return d->a;
}

std::optional<kernel::Time> Compiler::fixed_duration(const Value& node, std::string_view what) {
  auto d = quantity(node, Unit::kDuration, what);
  if (!d) return std::nullopt;
  if (!d->is_constant()) {
    report(at(node), std::string(what) + ": expected a fixed duration");
    return std::nullopt;
  }
  return static_cast<kernel::Time>(d->a);
}

std::optional<bool> Compiler::flag(const Value& node, std::string_view what, bool fallback) {
  if (!node) return fallback;
  if (node.is_scalar() && (node.scalar() == "true" || node.scalar() == "false")) {
    return node.scalar() == "true";
  }
  // ${ARG}: a use's argument or a text param that is true or false, the same on every rank.
  if (node.is_scalar()) {
    if (const auto source = whole_expression(node.scalar())) {
      auto e = expression(*source, node, what);
      if (!e) return std::nullopt;
      if (e->text() && (*e->text() == "true" || *e->text() == "false")) return *e->text() == "true";
    }
  }
  report(at(node), std::string(what) + ": expected true or false (or ${NAME} of a use's argument that is one)");
  return std::nullopt;
}

std::optional<Text> Compiler::text(const Value& node, std::string_view what) {
  if (!node.is_scalar() || node.scalar().empty()) {
    report(at(node), std::string(what) + ": expected a non-empty name, got " + kind_of(node));
    return std::nullopt;
  }
  const std::string& s = node.scalar();
  Text t;
  std::string literal;
  std::size_t pos = 0;
  // Bounded: each iteration consumes at least the "${...}" it found.
  while (pos < s.size()) {
    const std::size_t open = s.find("${", pos);
    if (open == std::string::npos) {
      literal += s.substr(pos);
      break;
    }
    literal += s.substr(pos, open - pos);
    const std::size_t close = s.find('}', open);
    if (close == std::string::npos) {
      report(at(node), std::string(what) + ": unterminated '${' in '" + s + "' (expected ${name} or ${expression})");
      return std::nullopt;
    }
    auto e = expression(s.substr(open + 2, close - open - 2), node, what);
    if (!e) return std::nullopt;
    if (e->text()) {
      literal += *e->text();
    } else if (!e->text_parts().empty()) {
      // A use's argument that is text resolved per rank: its parts, spliced in.
      for (const TextPart& part : e->text_parts()) {
        if (!part.expr && part.local < 0) {
          literal += part.text;
          continue;
        }
        if (!literal.empty()) t.parts_.push_back({std::move(literal), nullptr});
        literal.clear();
        t.parts_.push_back(part);
      }
    } else if (e->random()) {
      report(at(node), std::string(what) + ": ${" + e->source() +
                                 "} draws from a distribution, and a name cannot be random");
      return std::nullopt;
    } else if (e->uses_locals()) {
      // A local's value, in the name when the step runs ("step${i}").
      if (e->divides_by_random()) {
        report(at(node), std::string(what) + ": ${" + e->source() + "} divides by a local, which may be 0");
        return std::nullopt;
      }
      if (!literal.empty()) t.parts_.push_back({std::move(literal), nullptr});
      literal.clear();
      t.parts_.push_back({std::string(), e});
    } else if (!e->uses_rank()) {
      auto v = e->eval(0, nullptr);
      if (!v) {
        report(at(node), std::string(what) + ": ${" + e->source() + "} divides by zero");
        return std::nullopt;
      }
      literal += format_for_name(*v, e->unit());
    } else {
      for (int r = 0; r < sc_.ranks; ++r) {
        if (!e->eval(r, nullptr)) {
          report(at(node), std::string(what) + ": ${" + e->source() + "} divides by zero at rank " +
                                     std::to_string(r));
          return std::nullopt;
        }
      }
      if (!literal.empty()) t.parts_.push_back({std::move(literal), nullptr});
      literal.clear();
      t.parts_.push_back({std::string(), e});
    }
    pos = close + 1;
  }
  if (!literal.empty()) t.parts_.push_back({std::move(literal), nullptr});
  return t;
}

std::optional<StepList> Compiler::steps(const Value& node, std::string_view what) {
  if (!node.is_list()) {
    report(at(node), std::string(what) + ": expected a list of steps, got " + kind_of(node));
    return std::nullopt;
  }
  return compile_list(node);
}

StepList Compiler::compile_list(const Value& steps) {
  StepList out;
  if (nesting_ >= kMaxNesting) {
    report(at(steps), "steps nested more than " + std::to_string(kMaxNesting) +
                                " deep (slots included); flatten the program or use a named slot once");
    return out;
  }
  ++nesting_;
  push_scope({});  // the locals its `let` steps declare: visible to the steps after them, and within them
  for (const auto& n : steps.items()) {
    if (auto s = compile_step(n)) out.push_back(std::move(s));
  }
  pop_scope();
  --nesting_;
  return out;
}

std::unique_ptr<Step> Compiler::compile_step(const Value& node) {
  // Built only for an error: the list of every primitive is long.
  auto expected = [&] {
    return "expected a step: a map with one primitive (" + registry_.names() + ") and optionally 'on'";
  };
  if (!node.is_map()) {
    report(at(node), expected() + ", got " + kind_of(node));
    return nullptr;
  }
  // The primitive (the one key other than `on`) and `on`, when given.
  Value prim_key, prim_args, on_node;
  bool has_prim = false, has_on = false;
  for (const auto& kv : node.entries()) {
    const std::string key = kv.first.scalar();
    if (key == "on") {
      on_node = kv.second;
      has_on = true;
    } else if (has_prim) {
      report(at(kv.first), "a step has one primitive, but '" + prim_key.scalar() +
                                     "' and '" + key + "' are both here");
      return nullptr;
    } else {
      prim_key = kv.first;
      prim_args = kv.second;
      has_prim = true;
    }
  }
  if (!has_prim) {
    report(at(node), expected());
    return nullptr;
  }
  const PrimitiveInfo* info = registry_.find(prim_key.scalar());
  if (info == nullptr) {
    const std::string near = registry_.closest(prim_key.scalar());
    report(at(prim_key), "unknown primitive '" + prim_key.scalar() + "' (" +
                                   (near.empty() ? "" : "did you mean '" + near + "'? ") + "known: " +
                                   registry_.names() + "; `racesim list` describes each)");
    return nullptr;
  }
  std::optional<RankSelector> on;
  if (has_on && info->name == "let") {
    // A local is read by the steps after its `let` on every rank: a `let` that some ranks skip
    // would leave them reading a value never set.
    report(at(on_node), "let: a local is declared on every rank (no `on:`); give it a value per rank with an "
                        "expression (\"${rank == 0}\") or declare it inside an `if`");
    return nullptr;
  }
  if (has_on) {
    Diagnostics local;
    on = parse_rank_selector(on_node, sc_.ranks, sc_.file, local);
    for (const Diagnostic& x : local.all()) report(x.where, x.message);
    if (!on) return nullptr;
  }
  if (++steps_ > max_steps_) {
    if (steps_ == max_steps_ + 1) {
      report(at(prim_key), "the program compiles to more than " + std::to_string(max_steps_) +
                               " steps (for_each loops unrolled); use repeat for long loops");
    }
    return nullptr;
  }
  const Location where = at(prim_key);
  step_sites_.push_back(&where);
  std::unique_ptr<Step> step = info->compile(prim_args, where, *this);
  step_sites_.pop_back();
  if (step) {
    step->where = sc_.run_place(where);  // what runs report (errors here name the file)
    step->on = std::move(on);
    step->primitive = info->name.c_str();
    step->touches = footprint_of(info->name, prim_args, [this](const std::string& path) {
      const MountSpec* m = platform_ ? platform_->mount_of_written(path) : nullptr;
      return m ? m->name : std::string();
    });
    step_uses_.push_back({info, where, step->live_refusal()});
    if (info->declares) info->declares(*this);
  }
  return step;
}

std::optional<CompiledFault> Compiler::fault(const FaultSpec& spec, const Platform* platform) {
  const FaultKindInfo* kind = registry_.find_fault(spec.kind);
  if (kind == nullptr) {
    std::string known;
    for (const FaultKindInfo* k : registry_.all_faults()) known += (known.empty() ? "" : ", ") + k->name;
    report(spec.where, "unknown fault kind '" + spec.kind + "' (known: " + known +
                                 "; `racesim list` describes each)");
    return std::nullopt;
  }
  const std::size_t before = diags_.count();
  CompiledFault f;
  f.name = spec.name;
  f.kind = kind;
  f.where = spec.where;
  f.probability = spec.probability;
  f.fires = spec.fires;
  f.times = spec.times;
  if (spec.on && !spec.on.is_null()) resolve_fault_target(spec, *kind, platform, f);
  std::vector<std::string> given;
  for (const auto& kv : spec.args) {
    const std::string key = kv.first.scalar();
    given.push_back(key);
    const FaultArg* arg = nullptr;
    for (const FaultArg& a : kind->args) {
      if (a.name == key) arg = &a;
    }
    if (arg == nullptr) {
      std::string known = "name, kind, on, probability, fires, times";
      for (const FaultArg& a : kind->args) known += ", " + a.name;
      report(sc_.where("faults." + spec.name + "." + key, kv.first),
                   "fault '" + spec.name + "' (" + spec.kind + "): unknown key '" + key +
                       "' (expected " + known + ")");
      continue;
    }
    Diagnostics local;
    Compiler sub(sc_, strategy_, registry_, local);
    const Location where = sc_.where("faults." + spec.name + "." + key, kv.second);
    auto d = sub.quantity(kv.second, arg->unit, spec.name + "." + key);
    for (const Diagnostic& x : local.all()) report(where, x.message);
    if (!d) continue;  // quantity() reported why
    const double hi = arg->hi < 0 ? max_of(arg->unit) : arg->hi;
    if (const std::string why = d->outside(arg->lo, hi); !why.empty()) {
      report(where, "fault '" + spec.name + "' (" + spec.kind + ") " + key + ": expected values from " +
                              format_quantity(arg->lo, arg->unit) + " to " + format_quantity(hi, arg->unit) +
                              (d->is_constant() ? ", got " + d->describe() : ", but " + d->describe() + ": " + why));
      continue;
    }
    f.args.emplace(key, *d);
  }
  for (const FaultArg& a : kind->args) {
    if (std::find(given.begin(), given.end(), a.name) != given.end()) continue;
    if (a.default_value.empty()) {
      report(spec.where, "fault '" + spec.name + "' (" + spec.kind + "): missing '" +
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
  auto selector = [&](const Value& node) {
    Diagnostics local;
    if (auto sel = parse_rank_selector(node, sc_.ranks, sc_.file, local)) f.on = *sel;
    for (const Diagnostic& x : local.all()) report(x.where, x.message);
  };
  const Value& on = spec.on;
  const bool target = on.is_map() && (on["ranks"] || on["mount"] || on["comm"] || on["link"]);
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
    const Value n = on[field];
    if (!n) return;
    if (std::find(kind.aimable.begin(), kind.aimable.end(), rk) == kind.aimable.end()) {
      std::string can;
      for (kernel::ResourceKind k : kind.aimable) can += std::string(", a ") + kernel::to_string(k);
      report(at(n), "a " + spec.kind + " fault cannot be aimed at a " + kernel::to_string(rk) +
                        " (it can be aimed at ranks" + can + ")");
      return;
    }
    const std::string v = n.is_scalar() ? n.scalar() : "";
    if (std::find(known.begin(), known.end(), v) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      report(at(n), std::string("unknown ") + field + " '" + (n.is_scalar() ? v : kind_of(n)) +
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

namespace {
bool reserved_name(const std::string& n) {
  return n == "rank" || n == "world" || n == "node" || n == "local_rank" || n == "ranks_per_node" || n == "nodes";
}
}  // namespace

std::optional<Binding> Compiler::declare_local(const Value& name, Unit unit, bool is_text, std::string_view what) {
  const std::string n = name.is_scalar() ? name.scalar() : "";
  if (!is_identifier(n) || reserved_name(n)) {
    report(at(name), std::string(what) + ": expected a name (an identifier other than rank, world, node, "
                                         "local_rank, ranks_per_node and nodes), got '" + n + "'");
    return std::nullopt;
  }
  if (const auto b = lookup(n)) {
    const bool local = b->kind == Binding::Kind::kLocal || b->kind == Binding::Kind::kLocalText;
    report(at(name), std::string(what) + ": '" + n + "' is already " +
                         (local ? "a local here (`set` gives it a new value)"
                                : sc_.params.count(n) ? "a param" : "a loop variable or an argument here") +
                         "; a local takes a name of its own");
    return std::nullopt;
  }
  assert(!scopes_.empty() && "a local is declared inside a step list");
  Binding b;
  b.kind = is_text ? Binding::Kind::kLocalText : Binding::Kind::kLocal;
  b.unit = unit;
  b.slot = is_text ? text_locals_++ : locals_++;
  scopes_.back()[n] = b;
  return b;
}

std::shared_ptr<const std::set<std::string, std::less<>>> Compiler::asked_series() {
  if (asked_) return asked_;
  auto names = std::make_shared<std::set<std::string, std::less<>>>();
  for (const MetricDef& d : sc_.metric_defs) {
    if (!d.of.empty()) names->insert(d.of);
    for (const std::string& m : d.between) names->insert(m + "_s");
  }
  for (const MetricCheck& m : sc_.metric_checks) names->insert(m.metric);
  for (const Expectation& e : sc_.expect) {
    for (const MetricExpectation& m : e.metrics) names->insert(m.metric);
  }
  asked_ = std::move(names);
  return asked_;
}

bool Compiler::fixed_name(const Text& name, const Value& node, std::string_view what) {
  if (!name.uses_locals()) return true;
  report(at(node), std::string(what) + ": '" + node.scalar() + "' names a metric, whose name is fixed before "
                       "the run: it cannot read a local variable");
  return false;
}

std::optional<Binding> Compiler::value_binding(const Value& node, std::string_view what) {
  Binding b;
  if (node.is_scalar() && node.scalar().find("${") != std::string::npos) {
    const std::string& s = node.scalar();
    const auto whole = whole_expression(s);
    if (!whole) {
      // Text around expressions ("k.${stage}", "/c/d${rank}"): a name, the same on every rank or
      // resolved per rank.
      auto t = text(node, what);
      if (!t) return std::nullopt;
      if (t->is_literal()) {
        b.kind = Binding::Kind::kText;
        b.text = t->resolve(0);
      } else {
        b.kind = Binding::Kind::kTextTemplate;
        b.parts = t->parts_;
      }
      return b;
    }
    auto e = expression(*whole, node, what);
    if (!e) return std::nullopt;
    if (e->text()) {
      b.kind = Binding::Kind::kText;
      b.text = *e->text();
    } else if (!e->text_parts().empty()) {
      b.kind = Binding::Kind::kTextTemplate;
      b.parts = e->text_parts();
    } else if (!e->uses_rank() && !e->random() && !e->uses_locals()) {
      auto v = e->eval(0, nullptr);
      if (!v) {
        report(at(node), std::string(what) + ": ${" + e->source() + "} divides by zero");
        return std::nullopt;
      }
      b.number = *v;
      b.unit = e->unit();
    } else {
      b.kind = Binding::Kind::kDistribution;
      b.dist = Distribution::expression(e, e->unit());
    }
    return b;
  }
  if (node.is_scalar()) {
    const std::string& s = node.scalar();
    if (auto u = infer_unit(s)) {
      auto v = parse_quantity(s, *u);
      if (!v) {
        report(at(node), std::string(what) + ": " + v.message());
        return std::nullopt;
      }
      b.number = *v;
      b.unit = *u;
      return b;
    }
    b.kind = Binding::Kind::kText;
    b.text = s;
    return b;
  }
  Diagnostics local;
  auto d = parse_distribution(node, std::nullopt, sc_.file, local);
  for (const Diagnostic& x : local.all()) report(x.where, std::string(what) + ": " + x.message);
  if (!d) return std::nullopt;
  b.kind = Binding::Kind::kDistribution;
  b.dist = *d;
  return b;
}

std::optional<StepList> Compiler::compile_for_each(const Value& args, const Location& where) {
  (void)where;
  if (!keys(args, {"var", "range", "in", "index", "do"}, {"var", "do"}, "for_each")) return std::nullopt;
  if (!args["range"] == !args["in"]) {
    report(at(args), "for_each: expected one of range (numbers) or in (a list of values)");
    return std::nullopt;
  }
  auto name_of = [&](const char* key) -> std::optional<std::string> {
    const Value n = args[key];
    const std::string v = n.is_scalar() ? n.scalar() : "";
    if (!is_identifier(v) || reserved_name(v)) {
      report(at(n), std::string("for_each ") + key + ": expected a name (an identifier other than rank, world, "
                                                     "node, local_rank, ranks_per_node and nodes)");
      return std::nullopt;
    }
    return v;
  };
  const auto var = name_of("var");
  std::optional<std::string> index;
  if (args["index"]) index = name_of("index");
  if (!var || (args["index"] && !index)) return std::nullopt;
  if (!args["do"].is_list()) {
    report(at(args["do"]), std::string("for_each do: expected a list of steps, got ") + kind_of(args["do"]));
    return std::nullopt;
  }
  std::vector<Binding> values;
  if (const Value r = args["range"]) {
    // range: STOP, or [START, STOP] or [START, STOP, STEP], as Python's range.
    std::vector<double> bounds;
    const std::vector<Value> parts = r.is_list() ? r.items()
                                                         : std::vector<Value>{r};
    if (parts.empty() || parts.size() > 3) {
      report(at(r), "for_each range: expected STOP, [START, STOP] or [START, STOP, STEP]");
      return std::nullopt;
    }
    for (const Value& p : parts) {
      auto n = number(p, -1e15, 1e15, "for_each range");
      if (!n) return std::nullopt;
      if (*n != std::floor(*n)) {
        report(at(p), "for_each range: expected whole numbers, got " + format_for_name(*n, Unit::kNumber));
        return std::nullopt;
      }
      bounds.push_back(*n);
    }
    const double start = parts.size() == 1 ? 0 : bounds[0];
    const double stop = parts.size() == 1 ? bounds[0] : bounds[1];
    const double step = parts.size() == 3 ? bounds[2] : 1;
    if (step == 0) {
      report(at(parts[2]), "for_each range: the step cannot be 0");
      return std::nullopt;
    }
    const double count = std::max(0.0, std::ceil((stop - start) / step));
    if (count > static_cast<double>(kMaxIterations)) {
      report(at(r), "for_each range: " + format_for_name(count, Unit::kCount) + " iterations, more than the " +
                        std::to_string(kMaxIterations) + " one for_each may unroll (use repeat for a long loop)");
      return std::nullopt;
    }
    for (double i = 0; i < count; ++i) {
      Binding b;
      b.number = start + i * step;
      b.unit = Unit::kCount;
      if (b.number < 0) b.unit = Unit::kNumber;
      values.push_back(b);
    }
  } else {
    const Value list = args["in"];
    if (!list.is_list()) {
      report(at(list), std::string("for_each in: expected a list of values, got ") + kind_of(list));
      return std::nullopt;
    }
    if (list.size() > static_cast<std::size_t>(kMaxIterations)) {
      report(at(list), "for_each in: more than " + std::to_string(kMaxIterations) + " values");
      return std::nullopt;
    }
    for (const auto& v : list.items()) {
      auto b = value_binding(v, "for_each in");
      if (!b) return std::nullopt;
      values.push_back(*b);
    }
  }
  StepList out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::map<std::string, Binding, std::less<>> scope{{*var, values[i]}};
    if (index) {
      Binding b;
      b.number = static_cast<double>(i);
      b.unit = Unit::kCount;
      scope[*index] = b;
    }
    push_scope(std::move(scope));
    const std::size_t before = diags_.count();
    StepList body = compile_list(args["do"]);
    pop_scope();
    if (diags_.count() != before) return std::nullopt;  // once, not once per value
    for (auto& step : body) out.push_back(std::move(step));
  }
  return out;
}

std::optional<StepList> Compiler::compile_use(const Value& args, const Location& where) {
  const Value name_node = args.is_map() ? args["name"] : args;
  const std::string name = name_node && name_node.is_scalar() ? name_node.scalar() : "";
  if (name.empty()) {
    report(at(args), "use: expected NAME or {name: NAME, ARG: VALUE, ...}");
    return std::nullopt;
  }
  auto it = sc_.defines.find(name);
  if (it == sc_.defines.end()) {
    std::vector<std::string> known;
    for (const auto& [n, d] : sc_.defines) known.push_back(n);
    const auto near = closest_names(name, known, 2, 1);
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    report(at(name_node), "use: no step list '" + name + "' is defined (" +
                              (near.empty() ? "" : "did you mean '" + near.front() + "'? ") +
                              "define: " + (list.empty() ? std::string("none") : list) + ")");
    return std::nullopt;
  }
  const Definition& def = it->second;
  for (const UseFrame& u : uses_) {
    if (u.name == name) {
      report(where, "use: '" + name + "' uses itself");
      return std::nullopt;
    }
  }
  // Its args, evaluated where it is used.
  std::map<std::string, Binding, std::less<>> bound;
  bool ok = true;
  if (args.is_map()) {
    for (const auto& kv : args.entries()) {
      const std::string key = kv.first.scalar();
      if (key == "name") continue;
      if (std::find(def.args.begin(), def.args.end(), key) == def.args.end()) {
        std::string list;
        for (const auto& a : def.args) list += (list.empty() ? "" : ", ") + a;
        report(at(kv.first), "use " + name + ": no arg '" + key + "' (its args: " + (list.empty() ? "none" : list) + ")");
        ok = false;
        continue;
      }
      auto b = value_binding(kv.second, "use " + name + " " + key);
      if (!b) ok = false;
      else bound[key] = *b;
    }
  }
  for (const std::string& a : def.args) {
    if (!bound.count(a) && ok) {
      report(at(args), "use " + name + ": missing arg '" + a + "' (define." + name + " at " + where_text(def.where) + ")");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  // Lexical: the definition sees its args, the params and the built-ins, not the loop
  // variables around the use.
  auto saved = std::move(scopes_);
  scopes_.clear();
  push_scope(std::move(bound));
  uses_.push_back({name, where});
  StepList out = compile_list(def.body);
  uses_.pop_back();
  pop_scope();  // its locals' slots come after those of the use's place, which stay live
  scopes_ = std::move(saved);
  return out;
}

StepList Compiler::compile_slot(const std::string& slot, const Location& where) {
  auto it = strategy_.slots.find(slot);
  if (it == strategy_.slots.end()) {
    report(where, "strategy '" + strategy_.name + "' has no binding for slot '" + slot + "'");
    return {};
  }
  for (const auto& s : slot_stack_) {
    if (s == slot) {
      report(where, "slot '" + slot + "' expands into itself");
      return {};
    }
  }
  slot_stack_.push_back(slot);
  StepList out = compile_list(it->second);
  slot_stack_.pop_back();
  return out;
}

std::optional<CompiledProgram> compile_program(const Scenario& sc, const Strategy& strategy,
                                               Diagnostics& diags, const Registry& registry,
                                               std::size_t max_steps) {
  const std::size_t before = diags.count();
  Compiler c(sc, strategy, registry, diags, max_steps);
  CompiledProgram p;
  p.scenario = &sc;
  p.strategy = &strategy;
  if (auto platform = parse_platform(sc, diags, registry)) {
    p.platform = std::make_shared<const Platform>(std::move(*platform));
  }
  c.set_platform(p.platform.get());
  p.steps = c.compile_list(sc.program);
  if (const auto* policy = p.platform ? p.platform->find_section<GroupRestartPolicy>("elastic") : nullptr;
      policy && policy->on()) {
    c.declare_counter("elastic.restarts");
    for (const StepUse& u : c.step_uses()) {
      if (!u.primitive->keeps_process_state) continue;
      diags.error(u.where, "'" + u.primitive->name + "' keeps state in the rank's process that a group restart "
                           "does not reset yet: platform.elastic is not supported with it (restart only the "
                           "crashed rank: a crash fault's restarts: 1)");
      break;
    }
  }
  for (const FaultSpec& spec : sc.faults) {
    if (auto f = c.fault(spec, p.platform.get())) p.faults.push_back(std::move(*f));
    c.declare_counter("faults." + spec.name);
    c.declare_counter("faults." + spec.name + ".hits");
    if (const FaultKindInfo* kind = registry.find_fault(spec.kind)) {
      for (const std::string& counter : kind->counters) c.declare_counter(counter);
    }
  }
  // A soft check that is off counts its violations (RunState::fail).
  for (const CheckInfo* check : registry.all_checks()) {
    const bool on = sc.checks.empty() || std::find(sc.checks.begin(), sc.checks.end(), check->name) != sc.checks.end();
    if (!check->hard && !on) c.declare_counter("ignored." + check->name);
  }
  if (diags.count() != before) return std::nullopt;
  p.metric_names = c.metric_names();
  p.uses = c.step_uses();
  p.stackless = runs_stackless(p.steps);
  for (const MetricDef& d : sc.metric_defs) p.metric_names.derived.insert(d.name);
  return p;
}

bool runs_stackless(const StepList& steps) {
  for (const auto& s : steps) {
    switch (s->stackless()) {
      case Step::Stackless::kNo:
        return false;
      case Step::Stackless::kLoop:
      case Step::Stackless::kBlock:
        for (const StepList* body : s->bodies()) {
          if (!runs_stackless(*body)) return false;
        }
        break;
      case Step::Stackless::kNoWait:
      case Step::Stackless::kSplit:
        break;
    }
  }
  return true;
}

}  // namespace racesim::scenario
