// The pipeline (see study.h).
#include "src/scenario/study.h"

#include <algorithm>

#include "src/scenario/loader.h"
#include "src/scenario/overrides.h"
#include "src/scenario/sweep.h"

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

// Every metric name the scenario uses must be one its programs record: a typo is a located
// error, not a metric that silently never appears. `all` holds every strategy's program at the
// point (for `metrics: {of: ...}`, which may name a series only some strategies record);
// `chosen` the programs that will run.
void check_metric_names(const Scenario& sc, const std::vector<const CompiledProgram*>& all,
                        const std::vector<const CompiledProgram*>& chosen, Diagnostics& diags) {
  MetricNames any;
  for (const CompiledProgram* p : all) {
    any.counters.insert(p->metric_names.counters.begin(), p->metric_names.counters.end());
    any.series.insert(p->metric_names.series.begin(), p->metric_names.series.end());
  }
  for (const MetricDef& d : sc.metric_defs) {
    if (any.series.count(d.of)) continue;
    std::string series;
    for (const std::string& s : any.series) series += (series.empty() ? "" : ", ") + s;
    if (series.empty()) series = "none";
    if (any.counters.count(d.of)) {
      diags.error(d.of_where, "metric '" + d.name + "': '" + d.of + "' is a run's total (a counter or a "
                              "model's metric), not a per-rank series; name it directly in checks or expect "
                              "(series here: " + series + ")");
    } else {
      diags.error(d.of_where, "metric '" + d.name + "': no strategy records a series '" + d.of + "' (" +
                              did_you_mean(any, d.of) + "series here: " + series +
                              "; a mark NAME records NAME_s)");
    }
  }
  for (const CompiledProgram* p : chosen) {
    const std::string& strategy = p->strategy->name;
    for (const MetricCheck& mc : sc.metric_checks) {
      if (p->metric_names.knows(mc.metric)) continue;
      diags.error(mc.where, "checks: metric '" + mc.metric + "' is not recorded by strategy '" + strategy +
                                "' (" + did_you_mean(p->metric_names, mc.metric) +
                                "its metrics: " + p->metric_names.list() + ")");
    }
    for (const Expectation& e : sc.expect) {
      if (e.strategy != strategy) continue;
      for (const MetricExpectation& me : e.metrics) {
        if (p->metric_names.knows(me.metric)) continue;
        diags.error(me.where, "expect." + strategy + ": metric '" + me.metric + "' is not recorded by this "
                              "strategy (" + did_you_mean(p->metric_names, me.metric) +
                              "its metrics: " + p->metric_names.list() + ")");
      }
    }
  }
}

}  // namespace

std::unique_ptr<Study> compile_study(const StudyRequest& request, Diagnostics& diags) {
  const std::size_t before = diags.count();
  auto sc = request.text ? load_scenario_text(*request.text, request.path, diags)
                         : load_scenario(request.path, diags);
  if (!sc) return nullptr;
  for (const auto& o : request.overrides) apply_override(*sc, o, diags);
  if (diags.count() != before) return nullptr;
  auto out = std::make_unique<Study>();
  out->scenario = std::move(*sc);
  const Scenario& base = out->scenario;
  for (const auto& name : request.strategies) {
    if (!base.strategy(name)) {
      std::string known;
      for (const auto& s : base.strategies) known += (known.empty() ? "" : ", ") + s.name;
      diags.error({request.path, 0, 0}, "--strategy '" + name + "' is not defined (strategies: " + known + ")");
    }
  }
  const auto points = sweep_points(base);
  bool point_found = request.point.empty();
  std::string labels;
  for (const auto& pt : points) {
    labels += (labels.empty() ? "" : "; ") + pt.label;
    if (!request.point.empty() && pt.label != request.point) continue;
    point_found = true;
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
      auto p = compile_program(here, st, wanted ? diags : aside);
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
  if (!point_found) {
    diags.error({request.path, 0, 0}, "--point '" + request.point + "' is not a sweep point (points: " +
                                          (labels.empty() ? "none, the scenario has no sweep" : labels) + ")");
  }
  if (diags.count() != before) return nullptr;
  return out;
}

}  // namespace racesim::scenario
