// Aggregation of run records (see aggregate.h).
#include "src/report/aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "src/report/number_text.h"
#include "src/scenario/language/expectations.h"
#include "src/scenario/execute/stats.h"
#include "src/scenario/language/sweep.h"

namespace racesim::report {

Interval wilson_interval(std::uint64_t failures, std::uint64_t n, double z) {
  if (n == 0) return {0, 1};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(failures) / nn;
  const double z2 = z * z;
  const double denom = 1 + z2 / nn;
  const double centre = (p + z2 / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denom;
  // The bounds are exactly 0 and 1 at 0 and n failures (rounding would leave ~1e-19).
  return {failures == 0 ? 0.0 : std::max(0.0, centre - half),
          failures == n ? 1.0 : std::min(1.0, centre + half)};
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return scenario::percentile_sorted(v, p);
}

Quantiles quantiles(const std::vector<double>& values) {
  Quantiles q;
  q.n = values.size();
  if (values.empty()) return q;
  q.p50 = percentile(values, 50);
  q.p90 = percentile(values, 90);
  q.p99 = percentile(values, 99);
  q.max = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  q.mean = sum / static_cast<double>(values.size());
  return q;
}

std::vector<StrategySummary> summarize(const std::vector<run::RunRecord>& records) {
  std::vector<StrategySummary> out;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  std::vector<std::map<std::string, std::vector<double>>> values;
  std::vector<std::vector<double>> passed_makespans;
  for (const run::RunRecord& r : records) {
    auto [it, inserted] = index.emplace(std::make_pair(r.point, r.strategy), out.size());
    if (inserted) {
      out.push_back({});
      out.back().strategy = r.strategy;
      out.back().point = r.point;
      values.emplace_back();
      passed_makespans.emplace_back();
    }
    StrategySummary& s = out[it->second];
    ++s.runs;
    ++s.outcomes[run::to_string(r.outcome)];
    if (run::failed(r.outcome)) {
      if (s.failures == 0) {
        s.example_failure = r.diagnosis;
        s.example_seed = r.seed;
      }
      ++s.failures;
      if (!r.check.empty()) ++s.failed_checks[r.check];
    }
    for (const auto& [name, v] : r.metrics) values[it->second][name].push_back(v);
    if (auto m = r.metrics.find("makespan_s"); m != r.metrics.end() && !run::failed(r.outcome)) {
      passed_makespans[it->second].push_back(m->second);
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    StrategySummary& s = out[i];
    s.failure_rate = s.runs ? static_cast<double>(s.failures) / static_cast<double>(s.runs) : 0;
    s.failure_ci = wilson_interval(s.failures, s.runs);
    for (const auto& [name, v] : values[i]) s.metrics[name] = quantiles(v);
    s.makespan_passed = quantiles(passed_makespans[i]);
  }
  // The baseline at each point: the first strategy there with a passed run.
  std::map<std::string, const StrategySummary*> base;
  for (const StrategySummary& s : out) {
    if (s.makespan_passed.n > 0) base.emplace(s.point, &s);
  }
  for (StrategySummary& s : out) {
    auto b = base.find(s.point);
    if (b == base.end()) continue;
    s.baseline = b->second->strategy;
    if (s.makespan_passed.n > 0 && b->second->makespan_passed.p50 > 0) {
      s.makespan_ratio = s.makespan_passed.p50 / b->second->makespan_passed.p50;
    }
  }
  return out;
}

namespace {
double stat_of(const Quantiles& q, const std::string& stat) {
  return stat == "p90" ? q.p90 : stat == "p99" ? q.p99 : stat == "max" ? q.max
         : stat == "mean" ? q.mean : q.p50;
}
std::string ratio_text(const std::optional<double>& r) { return r ? num(*r) + "x" : "-"; }
// A makespan statistic of the passed runs, "-" when none passed.
std::string seconds_or_dash(const Quantiles& q, double v, const char* unit) { return q.n ? num(v) + unit : "-"; }
std::string rate_detail(const StrategySummary& s) {
  return std::to_string(s.failures) + " of " + std::to_string(s.runs) + " seeds failed (" +
         pct(s.failure_rate) + ", 95% CI " + pct(s.failure_ci.lo) + "-" + pct(s.failure_ci.hi) + ")";
}
double stat_of(std::vector<double> v, const std::string& stat) { return stat_of(quantiles(v), stat); }

// A paired bound: the per-seed ratio of the strategy's metric to another's on the same seeds, at
// the summary's point. Every seed the strategy ran must have both values (a ratio over only the
// seeds where both recorded it would be the survivors').
Verdict paired_verdict(const scenario::Expectation& e, const scenario::MetricExpectation& me,
                       const StrategySummary& s, const std::vector<run::RunRecord>* records, std::string what) {
  Verdict v{e.strategy, s.point, std::move(what), false, ""};
  if (!records) {
    v.detail = "a paired expectation needs the runs themselves (not only their summaries)";
    return v;
  }
  std::map<std::uint64_t, double> mine, theirs;
  bool other_ran = false;
  for (const run::RunRecord& r : *records) {
    if (r.point != s.point) continue;
    const bool self = r.strategy == e.strategy;
    if (!self && r.strategy != me.ratio_to) continue;
    other_ran = other_ran || !self;
    auto m = r.metrics.find(me.metric);
    if (m != r.metrics.end()) (self ? mine : theirs)[r.seed] = m->second;
  }
  if (!other_ran) {
    // Left out of this selection (check --strategy): not judged; otherwise it should have run.
    const bool selected = std::any_of(records->begin(), records->end(),
                                      [&](const run::RunRecord& r) { return r.strategy == me.ratio_to; });
    v.skipped = !selected;
    v.detail = selected ? "ratio_to: strategy '" + me.ratio_to + "' was not run at this point"
                        : "not run: its reference '" + me.ratio_to + "' was not selected";
    return v;
  }
  std::vector<double> ratios;
  for (const auto& [seed, x] : mine) {
    auto y = theirs.find(seed);
    if (y != theirs.end() && y->second != 0) ratios.push_back(x / y->second);
  }
  const std::string over = " of " + std::to_string(s.runs) + " seeds";
  if (ratios.size() < s.runs) {
    v.detail = "metric '" + me.metric + "' has a ratio to " + me.ratio_to + "'s (both recorded, " + me.ratio_to +
               "'s not 0) on only " + std::to_string(ratios.size()) + over;
    return v;
  }
  const double x = stat_of(ratios, me.stat);
  v.passed = (!me.min || x >= *me.min) && (!me.max || x <= *me.max);
  v.detail = me.stat + "(" + me.metric + " / " + me.ratio_to + "'s) = " + num(x) + ", paired over " +
             std::to_string(ratios.size()) + over;
  return v;
}

// The verdicts of one expectation on one (point, strategy) summary.
void check_expectation(const scenario::Expectation& e, const StrategySummary& s,
                       const std::vector<run::RunRecord>* records, std::vector<Verdict>& out) {
  auto add = [&](std::string what, bool ok) {
    Verdict v{e.strategy, s.point, std::move(what), ok, rate_detail(s)};
    if (s.failures > 0) {
      v.detail += "; e.g. seed " + std::to_string(s.example_seed) + ": " + s.example_failure;
    }
    out.push_back(std::move(v));
  };
  if (e.fails) add(*e.fails ? "fails" : "does not fail", (s.failures > 0) == *e.fails);
  if (e.never_fails) {
    add(*e.never_fails ? "never_fails" : "fails sometimes", (s.failures == 0) == *e.never_fails);
  }
  for (const scenario::MetricExpectation& me : e.metrics) {
    const std::string bounds = " in [" + (me.min ? num(*me.min) : std::string("-inf")) + ", " +
                               (me.max ? num(*me.max) : std::string("inf")) + "]";
    if (!me.ratio_to.empty()) {
      out.push_back(paired_verdict(e, me, s, records, me.stat + "(" + me.metric + " / " + me.ratio_to + "'s)" + bounds));
      continue;
    }
    std::string what = me.stat + "(" + me.metric + ")" + bounds;
    auto q = s.metrics.find(me.metric);
    const std::uint64_t n = q == s.metrics.end() ? 0 : q->second.n;
    const std::string over = " of " + std::to_string(s.runs) + " runs";
    if (n < s.runs) {
      // A statistic over the runs that happened to record it is not the strategy's.
      out.push_back({e.strategy, s.point, what, false,
                     "metric '" + me.metric + "' was recorded in only " + std::to_string(n) + over +
                         (s.failures > 0 ? " (" + std::to_string(s.failures) + " failed)" : std::string())});
      continue;
    }
    const double v = stat_of(q->second, me.stat);
    const bool ok = (!me.min || v >= *me.min) && (!me.max || v <= *me.max);
    out.push_back({e.strategy, s.point, what, ok, me.stat + "(" + me.metric + ") = " + num(v) + " over " +
                                                      std::to_string(n) + over});
  }
  if (e.failure_rate_min || e.failure_rate_max) {
    const double lo = e.failure_rate_min.value_or(0), hi = e.failure_rate_max.value_or(1);
    add("failure_rate in [" + num(lo) + ", " + num(hi) + "]",
        s.failure_rate >= lo && s.failure_rate <= hi);
  }
}

}  // namespace

std::vector<Verdict> check_expectations(const scenario::Scenario& sc,
                                        const std::vector<StrategySummary>& summaries,
                                        const std::vector<run::RunRecord>* records) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> point_values;
  for (const auto& p : scenario::sweep_points(sc)) point_values[p.label] = p.values;
  std::vector<Verdict> out;
  for (const scenario::Expectation& e : sc.expect) {
    bool judged = false;
    for (const StrategySummary& s : summaries) {
      if (s.strategy != e.strategy) continue;
      auto pv = point_values.find(s.point);
      if (pv == point_values.end() || !scenario::applies_at(e, pv->second)) continue;
      judged = true;
      check_expectation(e, s, records, out);
    }
    if (judged) continue;
    // A strategy left out of this selection (check --strategy) is not judged.
    if (std::none_of(summaries.begin(), summaries.end(),
                     [&](const StrategySummary& s) { return s.strategy == e.strategy; }) &&
        !summaries.empty()) {
      Verdict v{e.strategy, "", "at its points", false, "not run: the strategy was not selected"};
      v.skipped = true;
      out.push_back(std::move(v));
      continue;
    }
    // Points of the scenario where it applies, none of them run here: not judged (an expectation
    // that applies at no point of the scenario, or a strategy never run, fails).
    std::string unrun;
    for (const auto& pv : point_values) {
      const std::string& label = pv.first;  // (clang 14 cannot capture a structured binding)
      if (!scenario::applies_at(e, pv.second)) continue;
      const bool ran = std::any_of(summaries.begin(), summaries.end(),
                                   [&label](const StrategySummary& s) { return s.point == label; });
      if (ran) {
        unrun.clear();
        break;
      }
      unrun += (unrun.empty() ? "" : ", ") + label;
    }
    if (!unrun.empty()) {
      Verdict v{e.strategy, "", "at its points", false, "not run: " + unrun + " were not selected"};
      v.skipped = true;
      out.push_back(std::move(v));
      continue;
    }
    out.push_back({e.strategy, "", "was run", false, "strategy was not run at a matching point"});
  }
  return out;
}

namespace {
bool has_points(const std::vector<StrategySummary>& summaries) {
  for (const auto& s : summaries) {
    if (!s.point.empty()) return true;
  }
  return false;
}
// "strategy" or "strategy @ point".
std::string label(const StrategySummary& s) {
  return s.point.empty() ? s.strategy : s.strategy + " @ " + s.point;
}
}  // namespace

std::string format_table(const std::vector<StrategySummary>& summaries) {
  const bool points = has_points(summaries);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"strategy", "runs", "failed", "failure rate (95% CI)", "passed: makespan p50", "p99",
                  "max", "vs first passing", "outcomes", "failed checks"});
  if (points) rows.back().insert(rows.back().begin(), "point");
  for (const auto& s : summaries) {
    std::string outcomes;
    for (const auto& [o, n] : s.outcomes) outcomes += (outcomes.empty() ? "" : " ") + o + ":" + std::to_string(n);
    std::string checks;
    for (const auto& [c, n] : s.failed_checks) checks += (checks.empty() ? "" : " ") + c + ":" + std::to_string(n);
    const Quantiles& m = s.makespan_passed;
    rows.push_back({s.strategy, std::to_string(s.runs), std::to_string(s.failures),
                    pct(s.failure_rate) + " (" + pct(s.failure_ci.lo) + "-" + pct(s.failure_ci.hi) + ")",
                    seconds_or_dash(m, m.p50, "s"), seconds_or_dash(m, m.p99, "s"), seconds_or_dash(m, m.max, "s"),
                    ratio_text(s.makespan_ratio), outcomes, checks});
    if (points) rows.back().insert(rows.back().begin(), s.point);
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      const std::string& cell = rows[i][c];
      const bool left = c == 0 || (points && c == 1) || c + 2 >= rows[i].size();
      const std::string pad(width[c] - cell.size(), ' ');
      out += left ? cell + pad : pad + cell;
      if (c + 1 < rows[i].size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  for (const auto& s : summaries) {
    if (s.failures > 0) {
      out += label(s) + ": e.g. seed " + std::to_string(s.example_seed) + ": " + s.example_failure + "\n";
    }
  }
  return out;
}

std::string format_json(const std::string& scenario, const std::vector<StrategySummary>& summaries) {
  nlohmann::ordered_json doc;
  doc["scenario"] = scenario;
  doc["strategies"] = nlohmann::ordered_json::array();
  for (const auto& s : summaries) {
    nlohmann::ordered_json j;
    j["strategy"] = s.strategy;
    j["point"] = s.point;
    j["runs"] = s.runs;
    j["failures"] = s.failures;
    j["failure_rate"] = s.failure_rate;
    j["failure_ci95"] = {s.failure_ci.lo, s.failure_ci.hi};
    j["outcomes"] = s.outcomes;
    const Quantiles& m = s.makespan_passed;
    j["makespan_passed"] = {{"p50", m.p50}, {"p99", m.p99}, {"max", m.max}, {"n", m.n}};
    j["makespan_ratio"] = s.makespan_ratio ? nlohmann::ordered_json(*s.makespan_ratio) : nlohmann::ordered_json();
    j["baseline"] = s.baseline;
    for (const auto& [name, q] : s.metrics) {
      j["metrics"][name] = {{"p50", q.p50}, {"p90", q.p90}, {"p99", q.p99}, {"max", q.max}, {"mean", q.mean}, {"n", q.n}};
    }
    doc["strategies"].push_back(j);
  }
  return doc.dump(2) + "\n";
}

std::string format_markdown(const std::string& scenario,
                            const std::vector<StrategySummary>& summaries) {
  const bool points = has_points(summaries);
  std::string out = "# " + scenario + "\n\n";
  out += std::string(points ? "| point " : "") +
         "| strategy | runs | failed | failure rate | 95% CI | passed: makespan p50 | p99 | max | vs first passing |\n";
  out += std::string(points ? "|---" : "") + "|---|---:|---:|---:|---|---:|---:|---:|---:|\n";
  for (const auto& s : summaries) {
    const Quantiles& m = s.makespan_passed;
    out += (points ? "| " + s.point + " " : std::string()) + "| " + s.strategy + " | " +
           std::to_string(s.runs) + " | " + std::to_string(s.failures) + " | " +
           pct(s.failure_rate) + " | " + pct(s.failure_ci.lo) + " - " + pct(s.failure_ci.hi) +
           " | " + seconds_or_dash(m, m.p50, " s") + " | " + seconds_or_dash(m, m.p99, " s") + " | " +
           seconds_or_dash(m, m.max, " s") + " | " +
           ratio_text(s.makespan_ratio) + " |\n";
  }
  bool any_failure = false;
  for (const auto& s : summaries) {
    if (s.failures == 0) continue;
    if (!any_failure) out += "\n## Example failures\n\n";
    any_failure = true;
    out += "- **" + label(s) + "**, seed " + std::to_string(s.example_seed) + ": " + s.example_failure + "\n";
  }
  // Other metrics, one row per (metric, strategy), metrics in name order.
  // Other metrics: per point, one row per metric and one column per strategy, "p50 (p99)" with
  // units, and the runs a statistic is over when fewer than all (makespan_s here is every run's).
  const std::vector<std::string> point_list = [&] {
    std::vector<std::string> v;
    for (const auto& s : summaries) {
      if (std::find(v.begin(), v.end(), s.point) == v.end()) v.push_back(s.point);
    }
    return v;
  }();
  bool any_metric = false;
  for (const auto& s : summaries) any_metric = any_metric || !s.metrics.empty();
  if (any_metric) {
    out += "\n## Metrics\n\nEach cell: p50 (p99) over the strategy's runs; \"n of N\" when only n of its N runs "
           "recorded the metric.\n";
    for (const std::string& point : point_list) {
      std::vector<const StrategySummary*> cols;
      std::set<std::string> names;
      for (const auto& s : summaries) {
        if (s.point != point) continue;
        cols.push_back(&s);
        for (const auto& [name, q] : s.metrics) names.insert(name);
      }
      out += point.empty() ? "\n" : "\n### " + point + "\n\n";
      out += "| metric |";
      for (const auto* c : cols) out += " " + c->strategy + " |";
      out += "\n|---|";
      for (std::size_t i = 0; i < cols.size(); ++i) out += "---:|";
      out += "\n";
      for (const std::string& name : names) {
        out += "| " + name + " |";
        for (const auto* c : cols) {
          auto it = c->metrics.find(name);
          if (it == c->metrics.end() || it->second.n == 0) {
            out += " - |";
            continue;
          }
          const Quantiles& q = it->second;
          out += " " + metric_text(name, q.p50) + " (" + metric_text(name, q.p99) + ")" +
                 (q.n < c->runs ? ", " + std::to_string(q.n) + " of " + std::to_string(c->runs) : "") + " |";
        }
        out += "\n";
      }
    }
  }
  return out;
}

namespace {
// The values of `axes` in a point's label "K1=V1 K2=V2" (values may hold spaces: each value runs
// up to the next " KEY=" of the following axis).
std::vector<std::string> axis_values(const std::string& label, const std::vector<std::string>& axes) {
  std::vector<std::string> out(axes.size());
  std::size_t pos = 0;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::string key = axes[i] + "=";
    if (label.compare(pos, key.size(), key) != 0) return std::vector<std::string>(axes.size());
    const std::size_t start = pos + key.size();
    std::size_t end = label.size();
    if (i + 1 < axes.size()) {
      end = label.find(" " + axes[i + 1] + "=", start);
      if (end == std::string::npos) return std::vector<std::string>(axes.size());
    }
    out[i] = label.substr(start, end - start);
    pos = end + 1;
  }
  return out;
}
std::string g6(bool have, double v) { return have ? csv_number(v) : std::string(); }
}  // namespace

std::string format_csv(const std::vector<StrategySummary>& summaries, const std::vector<std::string>& axes) {
  std::set<std::string> metrics;
  for (const auto& s : summaries) {
    for (const auto& [name, q] : s.metrics) metrics.insert(name);
  }
  // The makespan columns are the passed runs' (empty when none passed).
  std::string out;
  for (const auto& a : axes) out += csv_field(a) + ",";
  out += "point,strategy,runs,failures,failure_rate,ci95_lo,ci95_hi,passed_makespan_p50_s,"
         "passed_makespan_p99_s,passed_makespan_max_s,makespan_ratio";
  for (const auto& m : metrics) out += "," + csv_field(m + "_p50") + "," + csv_field(m + "_p99") + "," + csv_field(m + "_n");
  out += "\n";
  for (const auto& s : summaries) {
    for (const auto& v : axis_values(s.point, axes)) out += csv_field(v) + ",";
    const Quantiles& m = s.makespan_passed;
    char buf[512];
    std::snprintf(buf, sizeof buf, ",%llu,%llu,%.6g,%.6g,%.6g,",
                  static_cast<unsigned long long>(s.runs), static_cast<unsigned long long>(s.failures),
                  s.failure_rate, s.failure_ci.lo, s.failure_ci.hi);
    out += csv_field(s.point) + "," + csv_field(s.strategy) + buf + g6(m.n > 0, m.p50) + "," + g6(m.n > 0, m.p99) +
           "," + g6(m.n > 0, m.max) + "," + g6(s.makespan_ratio.has_value(), s.makespan_ratio.value_or(0));
    for (const auto& name : metrics) {
      auto it = s.metrics.find(name);
      const bool have = it != s.metrics.end() && it->second.n > 0;
      out += "," + g6(have, have ? it->second.p50 : 0) + "," + g6(have, have ? it->second.p99 : 0) + "," +
             std::to_string(have ? it->second.n : 0);
    }
    out += "\n";
  }
  return out;
}

}  // namespace racesim::report
