// The pipeline (see study.h).
#include "src/scenario/pipeline/study.h"

#include <algorithm>
#include <functional>

#include "src/scenario/file/closest.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/language/assignment.h"
#include "src/scenario/language/sweep.h"

namespace racesim::scenario {

std::vector<const CompiledProgram*> Study::program_pointers() const {
  std::vector<const CompiledProgram*> v;
  for (const auto& p : programs) v.push_back(p.get());
  return v;
}

namespace {

std::string did_you_mean(const MetricNames& names, const std::string& name) {
  const std::string near = names.closest(name);
  return near.empty() ? "" : "did you mean '" + near + "'? ";
}

// The marks and series the metrics name, against every strategy's program at the point.
void check_metric_sources(const Scenario& sc, const std::vector<const CompiledProgram*>& all, Diagnostics& diags) {
  MetricNames any;
  for (const CompiledProgram* p : all) {
    any.counters.insert(p->metric_names.counters.begin(), p->metric_names.counters.end());
    any.series.insert(p->metric_names.series.begin(), p->metric_names.series.end());
    any.marks.insert(p->metric_names.marks.begin(), p->metric_names.marks.end());
  }
  for (const MetricDef& d : sc.metric_defs) {
    for (const std::string& mark : d.between) {
      if (any.series.count(mark + "_s")) continue;
      std::string marks;
      for (const std::string& m : any.marks) marks += (marks.empty() ? "" : ", ") + m;
      const std::vector<std::string> known(any.marks.begin(), any.marks.end());
      const auto near = closest_names(mark, known, 3, 1);
      diags.error(d.of_where, "metric '" + d.name + "' between: no strategy sets a mark '" + mark + "' (" +
                                  (near.empty() ? std::string() : "did you mean '" + near.front() + "'? ") +
                                  "marks here: " + (marks.empty() ? std::string("none") : marks) + ")");
    }
    if (!d.between.empty() || any.series.count(d.of)) continue;
    std::string series;
    for (const std::string& s : any.series) series += (series.empty() ? "" : ", ") + s;
    if (series.empty()) series = "none";
    if (any.counters.count(d.of)) {
      diags.error(d.of_where, "metric '" + d.name + "': '" + d.of + "' is a run's total (a counter or a "
                              "model's metric), not a per-rank series; name it directly in checks or expect "
                              "(series here: " + series + ")");
    } else {
      std::string marks;
      for (const std::string& m : any.marks) marks += (marks.empty() ? "" : ", ") + m;
      diags.error(d.of_where, "metric '" + d.name + "': no strategy records a series '" + d.of + "' (" +
                              did_you_mean(any, d.of) + "series here: " + series + "; marks here: " +
                              (marks.empty() ? std::string("none") : marks) + "; a mark NAME records NAME_s when the scenario names it)");
    }
  }
}

// Every metric name the scenario uses must be one its programs record: a typo is a located
// error, not a metric that silently never appears. `all` holds every strategy's program at the
// point (for `metrics: {of: ...}`, which may name a series only some strategies record);
// `chosen` the programs that will run. When a strategy did not compile, what the metrics name is
// not checked against `all` (its marks are unknown): such errors would only follow from the one
// already reported.
void check_metric_names(const Scenario& sc, const std::vector<const CompiledProgram*>& all,
                        const std::vector<const CompiledProgram*>& chosen, Diagnostics& diags) {
  if (all.size() == sc.strategies.size()) check_metric_sources(sc, all, diags);
  for (const CompiledProgram* p : chosen) {
    const std::string& strategy = p->strategy->name;
    for (const MetricCheck& mc : sc.metric_checks) {
      if (p->metric_names.knows(mc.metric)) continue;
      diags.error(mc.where, "checks: metric '" + mc.metric + "' is not recorded by strategy '" + strategy +
                                "' (" + did_you_mean(p->metric_names, mc.metric) +
                                "its metrics: " + p->metric_names.list() + ")");
    }
    for (const Expectation& e : sc.expect) {
      for (const MetricExpectation& me : e.metrics) {
        if (e.strategy != strategy && me.ratio_to != strategy) continue;
        if (p->metric_names.knows(me.metric)) continue;
        diags.error(me.where, "expect." + e.strategy + ": metric '" + me.metric + "' is not recorded by " +
                              (e.strategy == strategy ? std::string("this strategy") : "strategy '" + strategy + "' (ratio_to)") +
                              " (" + did_you_mean(p->metric_names, me.metric) +
                              "its metrics: " + p->metric_names.list() + ")");
      }
    }
  }
}

// Which points `wanted` (labels and KEY=VALUE filters) chooses, as a predicate; nullopt
// (reported) when an entry is neither a label nor a filter on an axis value, or nothing matches.
std::optional<std::function<bool(const SweepPoint&)>> choose_points(const Scenario& sc,
                                                                  const std::vector<SweepPoint>& points,
                                                                  const std::vector<std::string>& wanted,
                                                                  const std::string& file, Diagnostics& diags) {
  if (wanted.empty()) return [](const SweepPoint&) { return true; };
  std::vector<std::string> labels;
  for (const auto& p : points) labels.push_back(p.label);
  std::vector<std::string> exact;
  std::vector<std::pair<std::string, std::string>> filters;
  bool ok = true;
  for (const std::string& w : wanted) {
    if (std::find(labels.begin(), labels.end(), w) != labels.end()) {
      exact.push_back(w);
      continue;
    }
    const auto eq = w.find('=');
    const SweepAxis* axis = nullptr;
    if (eq != std::string::npos) {
      for (const auto& a : sc.sweep) {
        if (a.key == w.substr(0, eq)) axis = &a;
      }
    }
    // (A value with a space that is not the axis's is more likely a whole label with a typo.)
    const std::string value = axis ? w.substr(eq + 1) : std::string();
    if (axis && std::find(axis->labels.begin(), axis->labels.end(), value) != axis->labels.end()) {
      filters.emplace_back(axis->key, value);
      continue;
    }
    if (axis && value.find(' ') == std::string::npos) {
      std::string values;
      for (const auto& l : axis->labels) values += (values.empty() ? "" : ", ") + l;
      diags.error({file, 0, 0}, "--point '" + w + "': '" + value + "' is not a value of sweep axis '" + axis->key +
                                    "' (values: " + values + ")");
      ok = false;
      continue;
    }
    std::string msg = "--point '" + w + "' is not a sweep point";
    if (points.size() <= 1 && sc.sweep.empty()) {
      msg += " (the scenario has no sweep)";
    } else {
      const auto near = closest_names(w, labels, std::max<std::size_t>(3, w.size() / 3), 3);
      std::string axes;
      for (const auto& a : sc.sweep) axes += (axes.empty() ? "" : ", ") + a.key;
      msg += " nor an axis filter KEY=VALUE (axes: " + axes + ")";
      if (!near.empty()) {
        msg += "; close ones:";
        for (const auto& n : near) msg += "\n  " + n;
      }
      msg += "\n(" + std::to_string(points.size()) + " points; `racesim validate " + file + "` lists them)";
    }
    diags.error({file, 0, 0}, msg);
    ok = false;
  }
  if (!ok) return std::nullopt;
  auto pick = [exact, filters](const SweepPoint& p) {
    if (std::find(exact.begin(), exact.end(), p.label) != exact.end()) return true;
    if (filters.empty()) return false;
    for (const auto& f : filters) {
      if (std::find(p.values.begin(), p.values.end(), f) == p.values.end()) return false;
    }
    return true;
  };
  if (std::none_of(points.begin(), points.end(), pick)) {
    std::string all;
    for (const auto& w : wanted) all += (all.empty() ? "" : " ") + w;
    diags.error({file, 0, 0}, "--point " + all + ": no sweep point matches every filter");
    return std::nullopt;
  }
  return pick;
}

}  // namespace

std::unique_ptr<Study> compile_study(const StudyRequest& request, Diagnostics& diags) {
  const std::size_t before = diags.count();
  auto sc = request.text ? load_scenario_text(*request.text, request.path, diags)
                         : load_scenario(request.path, diags);
  if (!sc) return nullptr;
  for (std::size_t i = 0; i < request.overrides.size(); ++i) {
    const bool located = i < request.override_origins.size() && !request.override_origins[i].file.empty();
    apply_override(*sc, request.overrides[i], diags, located ? &request.override_origins[i] : nullptr);
  }
  if (diags.count() != before) return nullptr;
  auto out = std::make_unique<Study>();
  out->scenario = std::move(*sc);
  const Scenario& base = out->scenario;
  for (const auto& name : request.strategies) {
    if (!base.strategy(name)) {
      const auto names = base.strategy_names();
      diags.error({request.path, 0, 0}, "--strategy '" + name + "' is not defined (" + did_you_mean(name, names) +
                                            "strategies: " + name_list(names) + ")");
    }
  }
  const auto points = sweep_points(base);
  const auto chosen_points = choose_points(base, points, request.points, request.path, diags);
  if (!chosen_points) return nullptr;
  for (const auto& pt : points) {
    if (!(*chosen_points)(pt)) continue;
    auto at = at_point(base, pt, diags);
    if (!at) continue;
    out->points.push_back(std::make_unique<Scenario>(std::move(*at)));
    const Scenario& here = *out->points.back();
    // Every strategy is compiled (a strategy not chosen, with its errors set aside) so that the
    // metric names are checked against all of them.
    std::vector<std::unique_ptr<CompiledProgram>> others;
    std::vector<const CompiledProgram*> all, chosen;
    for (const auto& st : here.strategies) {
      const auto& only = request.strategies;
      const bool wanted = only.empty() || std::find(only.begin(), only.end(), st.name) != only.end();
      Diagnostics aside;
      auto p = compile_program(here, st, wanted ? diags : aside, builtin_registry(), request.max_steps);
      if (!p) continue;
      auto owned = std::make_unique<CompiledProgram>(std::move(*p));
      all.push_back(owned.get());
      if (wanted) {
        chosen.push_back(owned.get());
        out->programs.push_back(std::move(owned));
      } else {
        others.push_back(std::move(owned));
      }
    }
    check_metric_names(here, all, chosen, diags);
    if (request.first_point_only) break;
  }
  if (diags.count() != before) return nullptr;
  return out;
}

}  // namespace racesim::scenario
