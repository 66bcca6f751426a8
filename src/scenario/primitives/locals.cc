// The locals family: a program's local variables, values a rank keeps while it runs and that are
// not metrics (a flag found on storage, a count of retries, a deadline).
//
//   let: {found: false, tries: 0, deadline: "${start + 30s}"}   declares locals, in order
//   set: {tries: "${tries + 1}"}                                gives declared ones a new value
//
// A local is a number of one unit (a count, a duration, a size, a flag as 1 or 0), fixed by its
// first value; an expression (${...}) anywhere in the steps after its `let`, in its step list and
// the lists inside them, reads it: a condition (`if: {expr: "${found == 0}"}`), a duration, a
// name ("step${tries}"). Each rank (and each process it spawns, from a copy) has its own. A
// collective may carry one to every rank (cluster.cc), and `for_each` over a listing holds each
// name in one (storage.cc).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/scenario/compile/compiler.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/draw.h"

namespace racesim::scenario {

namespace {

// Gives locals their values, in the order written (a later one may read an earlier one).
struct AssignStep final : Step {
  struct Assignment {
    int slot = 0;
    Distribution value;
  };
  std::vector<Assignment> assignments;
  std::string describe(const RankContext& ctx) const override {
    (void)ctx;
    return names;
  }
  std::string names;  // "found, tries", for a full trace
  void run(RankContext& ctx) const override {
    for (const Assignment& a : assignments) ctx.local(a.slot) = draw(a.value, ctx);
  }
  Stackless stackless() const override { return Stackless::kNoWait; }
};

// A flag's value, 1 or 0, for a local that is a number; nullopt for anything else.
std::optional<Distribution> flag_value(const Value& node, Unit unit) {
  if ((unit != Unit::kNumber && unit != Unit::kCount) || !node.is_scalar()) return std::nullopt;
  if (node.scalar() != "true" && node.scalar() != "false") return std::nullopt;
  return Distribution::constant(node.scalar() == "true" ? 1 : 0, unit);
}

// A local's first value: a number or quantity, a flag, a distribution or an expression; its
// unit is the value's. nullopt (reported) for text.
std::optional<Distribution> first_value(const Value& node, Compiler& c, const std::string& what) {
  auto no_text = [&] {
    c.error(c.at(node), what + ": expected a number, a quantity (like 30s or 1GiB), true or false, or an "
                               "expression ${...}; a local holds no text");
    return std::nullopt;
  };
  if (auto f = flag_value(node, Unit::kNumber)) return f;
  if (node.is_scalar()) {
    if (const auto source = whole_expression(node.scalar())) {
      // An expression: of its own unit, read as any quantity of that unit is (checked, folded).
      const auto e = c.expression(*source, node, what);
      if (!e) return std::nullopt;
      if (e->is_text()) return no_text();
      return c.quantity(node, e->unit(), what);
    }
  }
  auto b = c.value_binding(node, what);
  if (!b) return std::nullopt;
  if (b->kind == Binding::Kind::kNumber) return Distribution::constant(b->number, b->unit);
  if (b->kind == Binding::Kind::kDistribution) return b->dist;
  return no_text();
}

// let and set: {NAME: VALUE, ...}, each entry turned into its slot and value by `assign`
// (nullopt when it reported an error).
template <typename Assign>
std::unique_ptr<Step> compile_assignments(const Value& args, Compiler& c, const char* what, const char* expected,
                                          Assign assign) {
  if (!args.is_map() || args.entries().empty()) {
    c.error(c.at(args), std::string(what) + ": expected {NAME: VALUE, ...}, " + expected);
    return nullptr;
  }
  auto s = std::make_unique<AssignStep>();
  for (const auto& [key, value] : args.entries()) {
    auto a = assign(key, value);
    if (!a) return nullptr;
    s->assignments.push_back(std::move(*a));
    s->names += (s->names.empty() ? "" : ", ") + key.scalar();
  }
  return s;
}

std::unique_ptr<Step> compile_let(const Value& args, const Location&, Compiler& c) {
  return compile_assignments(args, c, "let", "the locals to declare and their first values",
                             [&](const Value& key, const Value& value) -> std::optional<AssignStep::Assignment> {
                               // Its value first: it cannot read the local it declares.
                               auto v = first_value(value, c, "let " + key.scalar());
                               if (!v) return std::nullopt;
                               auto b = c.declare_local(key, v->unit, false, "let");
                               if (!b) return std::nullopt;
                               return AssignStep::Assignment{b->slot, *v};
                             });
}

std::unique_ptr<Step> compile_set(const Value& args, const Location&, Compiler& c) {
  return compile_assignments(
      args, c, "set", "locals declared by `let` and their new values",
      [&](const Value& key, const Value& value) -> std::optional<AssignStep::Assignment> {
        const std::string name = key.scalar();
        const auto b = c.lookup(name);
        if (!b || b->kind != Binding::Kind::kLocal) {
          c.error(c.at(key), "set: '" + name + "' is " +
                                 (!b ? std::string("not declared (declare it with `let` first, in this step list or one around it)")
                                     : b->kind == Binding::Kind::kLocalText ? "a listing's name, which `set` does not change"
                                                                            : "not a local (a param, loop variable or argument keeps its value)"));
          return std::nullopt;
        }
        // The local's unit; a count and a number are one, and a flag is a number.
        if (auto f = flag_value(value, b->unit)) return AssignStep::Assignment{b->slot, *f};
        auto v = c.quantity(value, b->unit, "set " + name);
        if (!v) return std::nullopt;
        return AssignStep::Assignment{b->slot, *v};
      });
}

}  // namespace

void register_locals_family(Registry& r) {
  // A local lives in the rank's process, in a live run as in a simulation.
  r.add_live({"let",
              "let: {NAME: VALUE, ...} - declare local variables (numbers, quantities, true/false; not metrics), "
              "read as ${NAME} by the steps after it",
              compile_let});
  r.add_live({"set", "set: {NAME: VALUE, ...} - give locals declared by `let` new values (${NAME + 1})",
              compile_set});
}

}  // namespace racesim::scenario
