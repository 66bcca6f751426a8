#include "src/scenario/language/distribution.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/kernel/time.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

namespace {

// Parses one quantity scalar, inferring or checking its unit.
std::optional<double> quantity(const Value& node, std::optional<Unit>& unit,
                               const std::string& file, Diagnostics& diags, std::string_view role) {
  if (!node || !node.is_scalar()) {
    diags.error(at(node, file), std::string(role) + ": expected a quantity, got " + kind_of(node));
    return std::nullopt;
  }
  const std::string& text = node.scalar();
  if (!unit) {
    auto u = infer_unit(text);
    if (!u) {
      diags.error(at(node, file), std::string(role) + ": " + u.message());
      return std::nullopt;
    }
    unit = *u == Unit::kCount ? Unit::kNumber : *u;
  }
  auto v = parse_quantity(text, *unit);
  if (!v && *unit == Unit::kNumber) v = parse_quantity(text, Unit::kNumber);
  if (!v) {
    const auto got = infer_unit(text);
    // A value of the right unit that is out of range or finer than its grain: the reason says which.
    std::string msg = got && *got == *unit ? std::string(role) + ": " + v.message()
                                           : std::string(role) + ": expected a " + to_string(*unit) + " like " +
                                                 example_of(*unit) + ", got '" + text + "'";
    if (got && *got != *unit) msg += " (a " + std::string(to_string(*got)) + ")";
    diags.error(at(node, file), msg);
    return std::nullopt;
  }
  return *v;
}

// The largest lognormal sigma: beyond it a draw is a huge number more often than not.
constexpr double kMaxSigma = 10;

std::optional<double> unitless(const Value& node, const std::string& file, Diagnostics& diags,
                               std::string_view role) {
  std::optional<Unit> u = Unit::kNumber;
  return quantity(node, u, file, diags, role);
}

// A drawn value as the models take it. Durations, sizes and counts are whole and never negative;
// a duration beyond max_of(unit) is beyond any limit (kernel::to_time saturates it to kTimeMax,
// and a step that waits that long ends its run as a timeout at the limit); a size or a count
// beyond it is max_of(unit), so no conversion to an integer overflows.
double in_range(double v, Unit unit) {
  assert(!std::isnan(v) && "a draw is a number: every parameter is finite and bounded");
  if (unit != Unit::kDuration && unit != Unit::kBytes && unit != Unit::kCount) return v;
  if (!(v > 0)) return 0;
  if (v > max_of(unit)) return unit == Unit::kDuration ? static_cast<double>(kernel::kTimeMax) : max_of(unit);
  return std::round(v);
}

}  // namespace

const char* scope_name(DrawScope scope) {
  switch (scope) {
    case DrawScope::kUse: return "use";
    case DrawScope::kRank: return "rank";
    case DrawScope::kRun: return "run";
  }
  return "use";
}

std::optional<DrawScope> parse_scope(std::string_view text) {
  for (DrawScope s : {DrawScope::kUse, DrawScope::kRank, DrawScope::kRun}) {
    if (text == scope_name(s)) return s;
  }
  return std::nullopt;
}

Distribution Distribution::with_scope(DrawScope s, std::string_view name) const {
  assert((random() || s == DrawScope::kUse) && "with_scope REQUIRES a random distribution");
  Distribution d = *this;
  d.scope = s;
  d.scope_key = s == DrawScope::kUse ? 0 : kernel::fnv1a64(std::string("param ") + std::string(name));
  return d;
}

bool Distribution::uses_rank() const { return kind == Kind::kExpr && expr->uses_rank(); }
bool Distribution::random() const { return kind == Kind::kExpr ? expr->random() : kind != Kind::kConstant; }
bool Distribution::uses_locals() const { return kind == Kind::kExpr && expr->uses_locals(); }

double Distribution::sample_decided(kernel::RandomStream& rng, int rank, DrawDecider* decider,
                                    const double* locals) const {
  const double sampled = sample(rng, rank, decider, locals);
  if (decider == nullptr || is_constant() || kind == Kind::kExpr || scope != DrawScope::kUse) return sampled;
  const std::uint64_t which = decider->decide();
  if (which == 0) return sampled;
  return representative(static_cast<int>(which)).value_or(sampled);
}

double Distribution::sample(kernel::RandomStream& rng, int rank, DrawDecider* decider, const double* locals) const {
  if (scope != DrawScope::kUse) {
    // The param's own stream: per run one for every rank, per rank one for each (the rank
    // mixed into the name's hash as a second name would be).
    std::uint64_t key = scope_key;
    if (scope == DrawScope::kRank) {
      std::uint64_t r = static_cast<std::uint64_t>(rank);
      key ^= kernel::splitmix64(r);
    }
    kernel::RandomStream own(rng.seed(), key, kernel::RandomStream::kHashed);
    return sample_from(own, rank, nullptr, nullptr);  // a param reads no local
  }
  return sample_from(rng, rank, decider, locals);
}

double Distribution::sample_from(kernel::RandomStream& rng, int rank, DrawDecider* decider,
                                 const double* locals) const {
  double v = 0;
  switch (kind) {
    case Kind::kExpr:
      v = expr->eval(rank, &rng, decider, locals).value_or(0.0);
      break;
    case Kind::kConstant:
      v = a;
      break;
    case Kind::kUniform:
      v = rng.uniform(a, b);
      break;
    case Kind::kExponential:
      v = rng.exponential(a);
      break;
    case Kind::kNormal:
      v = rng.normal(a, b);
      break;
    case Kind::kLognormal:
      v = rng.lognormal(a, b);
      break;
    case Kind::kChoice:
      v = values[rng.weighted_choice(weights)];
      break;
  }
  return in_range(v, unit);
}

std::optional<double> Distribution::representative(int which) const {
  assert(which >= 1 && which <= 3);
  // The standard normal's 99th percentile.
  constexpr double kZ99 = 2.3263478740408408;
  double v = 0;
  switch (kind) {
    case Kind::kConstant:
    case Kind::kExpr:
      return std::nullopt;
    case Kind::kUniform:
      v = which == 1 ? a : which == 2 ? (a + b) / 2 : b;
      break;
    case Kind::kExponential:
      v = a * (which == 1 ? -std::log(0.99) : which == 2 ? std::log(2.0) : std::log(100.0));
      break;
    case Kind::kNormal:
      v = a + b * (which == 1 ? -kZ99 : which == 2 ? 0.0 : kZ99);
      break;
    case Kind::kLognormal:
      v = a * std::exp(b * (which == 1 ? -kZ99 : which == 2 ? 0.0 : kZ99));
      break;
    case Kind::kChoice:
      if (values.empty()) return std::nullopt;
      v = which == 1 ? *std::min_element(values.begin(), values.end())
          : which == 2 ? values.front()
                       : *std::max_element(values.begin(), values.end());
      break;
  }
  return in_range(v, unit);
}

std::string Distribution::outside(double lo, double hi) const {
  auto q = [&](double x) { return format_quantity(x, unit); };
  auto range = [&](double min, double max) -> std::string {
    if (min < lo) return "its minimum " + q(min) + " is below " + q(lo);
    if (max > hi) return "its maximum " + q(max) + " is above " + q(hi);
    return "";
  };
  // Sampled durations, sizes and counts are clamped at 0 (see sample()).
  const bool clamped = unit == Unit::kDuration || unit == Unit::kBytes || unit == Unit::kCount;
  switch (kind) {
    case Kind::kConstant:
      return range(a, a);
    case Kind::kUniform:
      return range(a, b);
    case Kind::kChoice: {
      double min = values.empty() ? 0 : values[0], max = min;
      for (double v : values) min = std::min(min, v), max = std::max(max, v);
      return range(min, max);
    }
    case Kind::kExponential:
    case Kind::kLognormal:
      if (lo > 0) return "it takes values down to 0, below " + q(lo);
      return range(lo, a);
    case Kind::kNormal:
      if (!clamped && lo > -max_of(unit)) return "a normal has no lower bound (expected at least " + q(lo) + ")";
      return range(clamped ? 0 : lo, a);
    case Kind::kExpr:
      if (!expr->random() && !expr->uses_locals()) return range(a, b);  // the compiler's minimum and maximum over the ranks
      if ((clamped || lo <= -max_of(unit)) && (lo <= 0 || !clamped) && hi >= max_of(unit)) return "";
      return std::string(expr->uses_locals() ? "an expression of a local variable" : "an expression that draws from a distribution") +
             " has no bound racesim can check (expected " + q(lo) + " to " + q(hi) + ")";
  }
  return "";
}

std::string Distribution::describe() const {
  auto q = [&](double x) { return format_quantity(x, unit); };
  switch (kind) {
    case Kind::kConstant:
      return q(a);
    case Kind::kUniform:
      return "uniform(" + q(a) + ", " + q(b) + ")";
    case Kind::kExponential:
      return "exponential(mean " + q(a) + ")";
    case Kind::kNormal:
      return "normal(mean " + q(a) + ", sd " + q(b) + ")";
    case Kind::kLognormal:
      return "lognormal(median " + q(a) + ", sigma " + format_quantity(b, Unit::kNumber) + ")";
    case Kind::kExpr:
      return "${" + expr->source() + "}";
    case Kind::kChoice: {
      std::string s = "choice(";
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) s += ", ";
        s += q(values[i]);
      }
      return s + ")";
    }
  }
  return "?";
}

std::optional<Distribution> parse_distribution(const Value& node, std::optional<Unit> expected,
                                               const std::string& file, Diagnostics& diags) {
  const std::size_t errors_before = diags.count();
  std::optional<Unit> unit = expected;
  Distribution d;
  if (node.is_scalar()) {
    auto v = quantity(node, unit, file, diags, "value");
    if (!v) return std::nullopt;
    return Distribution::constant(*v, *unit);
  }
  if (!node.is_map() || node.size() != 1) {
    diags.error(at(node, file),
                std::string("expected a quantity or a distribution (one of constant, uniform, "
                            "exponential, normal, lognormal, choice), got ") +
                    kind_of(node) + (node.is_map() ? " with " + std::to_string(node.size()) + " keys" : ""));
    return std::nullopt;
  }
  const auto& kv = node.entries().front();
  const std::string name = kv.first.scalar();
  const Value body = kv.second;
  auto need_map = [&](std::initializer_list<std::string_view> keys) {
    if (!body.is_map()) {
      diags.error(at(body, file), name + ": expected a map, got " + kind_of(body));
      return false;
    }
    check_keys(body, keys, name, file, diags);
    for (std::string_view k : keys) {
      if (name == "choice" && k == "weights") continue;
      if (!body[std::string(k)]) {
        diags.error(at(body, file), name + ": missing '" + std::string(k) + "'");
      }
    }
    return diags.count() == errors_before;
  };
  if (name == "constant") {
    auto v = quantity(body, unit, file, diags, "constant");
    if (!v) return std::nullopt;
    return Distribution::constant(*v, *unit);
  } else if (name == "uniform") {
    if (!need_map({"min", "max"})) return std::nullopt;
    auto lo = quantity(body["min"], unit, file, diags, "uniform min");
    auto hi = quantity(body["max"], unit, file, diags, "uniform max");
    if (!lo || !hi) return std::nullopt;
    if (*hi < *lo) {
      diags.error(at(body, file), "uniform: max must be >= min");
      return std::nullopt;
    }
    d = {Distribution::Kind::kUniform, *unit, *lo, *hi, {}, {}, nullptr};
  } else if (name == "exponential") {
    if (!need_map({"mean"})) return std::nullopt;
    auto m = quantity(body["mean"], unit, file, diags, "exponential mean");
    if (!m) return std::nullopt;
    if (*m < 0) {
      diags.error(at(body["mean"], file), "exponential: mean must be >= 0");
      return std::nullopt;
    }
    d = {Distribution::Kind::kExponential, *unit, *m, 0, {}, {}, nullptr};
  } else if (name == "normal") {
    if (!need_map({"mean", "sd"})) return std::nullopt;
    auto m = quantity(body["mean"], unit, file, diags, "normal mean");
    auto s = quantity(body["sd"], unit, file, diags, "normal sd");
    if (!m || !s) return std::nullopt;
    if (*s < 0) {
      diags.error(at(body["sd"], file), "normal: sd must be >= 0");
      return std::nullopt;
    }
    d = {Distribution::Kind::kNormal, *unit, *m, *s, {}, {}, nullptr};
  } else if (name == "lognormal") {
    if (!need_map({"median", "sigma"})) return std::nullopt;
    auto m = quantity(body["median"], unit, file, diags, "lognormal median");
    auto s = unitless(body["sigma"], file, diags, "lognormal sigma");
    if (!m || !s) return std::nullopt;
    if (*m <= 0 || *s < 0 || *s > kMaxSigma) {
      diags.error(at(body, file), "lognormal: median must be > 0 and sigma from 0 to 10 (at 10 the 99th "
                                  "percentile is 10^10 times the median)");
      return std::nullopt;
    }
    d = {Distribution::Kind::kLognormal, *unit, *m, *s, {}, {}, nullptr};
  } else if (name == "choice") {
    if (!need_map({"values", "weights"})) return std::nullopt;
    const Value vals = body["values"];
    if (!vals.is_list() || vals.size() == 0) {
      diags.error(at(vals, file), "choice: values must be a non-empty list");
      return std::nullopt;
    }
    d = {Distribution::Kind::kChoice, Unit::kNumber, 0, 0, {}, {}, nullptr};
    for (const auto& v : vals.items()) {
      auto x = quantity(v, unit, file, diags, "choice value");
      if (!x) return std::nullopt;
      d.values.push_back(*x);
    }
    d.unit = *unit;
    if (const Value w = body["weights"]) {
      if (!w.is_list() || w.size() != vals.size()) {
        diags.error(at(w, file), "choice: weights must be a list as long as values (" +
                                     std::to_string(vals.size()) + ")");
        return std::nullopt;
      }
      double total = 0;
      for (const auto& x : w.items()) {
        auto y = unitless(x, file, diags, "choice weight");
        if (!y) return std::nullopt;
        if (*y < 0) {
          diags.error(at(x, file), "choice: weights must be >= 0");
          return std::nullopt;
        }
        total += *y;
        d.weights.push_back(*y);
      }
      if (total <= 0) {
        diags.error(at(w, file), "choice: weights must not all be 0");
        return std::nullopt;
      }
    } else {
      d.weights.assign(d.values.size(), 1.0);
    }
  } else {
    diags.error(at(kv.first, file),
                "unknown distribution '" + name +
                    "' (expected one of constant, uniform, exponential, normal, lognormal, choice)");
    return std::nullopt;
  }
  return d;
}

}  // namespace racesim::scenario
