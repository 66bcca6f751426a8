// Expectations (see expectations.h).
#include "src/scenario/language/expectations.h"

#include <algorithm>

#include "src/scenario/file/quantity.h"
#include "src/scenario/file/closest.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

std::optional<Expectation> parse_expectation(const std::string& strategy, const Location& where,
                                             const Value& b, const Scenario& sc,
                                             Diagnostics& diags) {
  const std::string& file = sc.file;
  Expectation e;
  e.strategy = strategy;
  e.where = b.is_map() ? at(b, file) : where;
  if (!b.is_map() || b.size() == 0) {
    diags.error(at(b, file), "expect." + strategy +
                                 ": expected a map with fails, never_fails, failure_rate or metric "
                                 "(and optionally at), or a list of such maps");
    return std::nullopt;
  }
  check_keys(b, {"fails", "never_fails", "failure_rate", "metric", "at"}, "expect." + strategy,
             file, diags);
  if (const Value a = b["at"]) {
    if (!a.is_map() || a.size() == 0) {
      diags.error(at(a, file), "at: expected a map of sweep axis: value");
    } else {
      for (const auto& kv : a.entries()) {
        const std::string key = kv.first.scalar();
        const SweepAxis* axis = nullptr;
        for (const SweepAxis& x : sc.sweep) {
          if (x.key == key) axis = &x;
        }
        if (axis == nullptr) {
          std::string known;
          for (const SweepAxis& x : sc.sweep) known += (known.empty() ? "" : ", ") + x.key;
          diags.error(at(kv.first, file), "at: '" + key + "' is not a sweep axis (axes: " +
                                              (known.empty() ? "none" : known) + ")");
          continue;
        }
        const std::string label = flow_text(kv.second);
        if (std::find(axis->labels.begin(), axis->labels.end(), label) == axis->labels.end()) {
          std::string known;
          for (const auto& l : axis->labels) known += (known.empty() ? "" : ", ") + l;
          diags.error(at(kv.second, file), "at: '" + label + "' is not a value of sweep axis '" +
                                               key + "' (values: " + known + ")");
          continue;
        }
        e.at.emplace_back(key, label);
      }
    }
  }
  if (const Value m = b["metric"]) {
    std::vector<Value> list;
    if (m.is_list()) {
      for (const auto& one : m.items()) list.push_back(one);
    } else {
      list.push_back(m);
    }
    for (const auto& one : list) {
      if (!one.is_map()) {
        diags.error(at(one, file), "metric: expected {name: NAME, stat: p50|p90|p99|max|mean, min: X, max: Y}");
        continue;
      }
      check_keys(one, {"name", "stat", "min", "max", "ratio_to"}, "metric", file, diags);
      MetricExpectation me;
      me.metric = one["name"] ? read_text(one["name"], "metric name", file, diags).value_or("") : "";
      me.where = at(one["name"] ? one["name"] : one, file);
      if (me.metric.empty()) diags.error(at(one, file), "metric: missing 'name'");
      if (one["stat"]) {
        me.stat = read_text(one["stat"], "stat", file, diags).value_or("p50");
        if (me.stat != "p50" && me.stat != "p90" && me.stat != "p99" && me.stat != "max" &&
            me.stat != "mean") {
          diags.error(at(one["stat"], file), "stat: expected p50, p90, p99, max or mean, got '" + me.stat + "'");
        }
      }
      if (const Value r = one["ratio_to"]) {
        me.ratio_to = read_text(r, "ratio_to", file, diags).value_or("");
        if (!sc.strategy(me.ratio_to)) {
          const auto names = sc.strategy_names();
          diags.error(at(r, file), "ratio_to: '" + me.ratio_to + "' is not a strategy (" + did_you_mean(me.ratio_to, names) +
                                       "strategies: " + name_list(names) + ")");
        } else if (me.ratio_to == strategy) {
          diags.error(at(r, file), "ratio_to: a strategy compared with itself is 1 on every seed");
        }
      }
      me.min = read_bound(one, "min", file, diags);
      me.max = read_bound(one, "max", file, diags);
      if (!me.min && !me.max) diags.error(at(one, file), "metric: needs min and/or max");
      e.metrics.push_back(std::move(me));
    }
  }
  if (b["fails"]) e.fails = read_bool(b["fails"], "fails", file, diags);
  if (b["never_fails"]) e.never_fails = read_bool(b["never_fails"], "never_fails", file, diags);
  if (const Value fr = b["failure_rate"]) {
    if (!fr.is_map()) {
      diags.error(at(fr, file), "failure_rate: expected {min: X, max: Y} with 0 <= X <= Y <= 1");
    } else {
      check_keys(fr, {"min", "max"}, "failure_rate", file, diags);
      auto rate = [&](const char* k) -> std::optional<double> {
        if (!fr[k]) return std::nullopt;
        auto v = fr[k].is_scalar() ? parse_quantity(fr[k].scalar(), Unit::kNumber)
                                  : Result<double>::error("");
        if (!v || *v < 0 || *v > 1) {
          diags.error(at(fr[k], file), std::string("failure_rate.") + k +
                                           ": expected a number from 0 to 1");
          return std::nullopt;
        }
        return *v;
      };
      e.failure_rate_min = rate("min");
      e.failure_rate_max = rate("max");
    }
  }
  if (!e.fails && !e.never_fails && !e.failure_rate_min && !e.failure_rate_max && e.metrics.empty()) {
    diags.error(e.where, "expect." + strategy + ": nothing to check (give fails, never_fails, "
                                                "failure_rate or metric)");
    return std::nullopt;
  }
  return e;
}

bool applies_at(const Expectation& e, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& want : e.at) {
    if (std::find(values.begin(), values.end(), want) == values.end()) return false;
  }
  return true;
}

}  // namespace racesim::scenario
