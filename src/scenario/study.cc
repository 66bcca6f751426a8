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
    for (const auto& st : here.strategies) {
      const auto& only = request.strategies;
      if (!only.empty() && std::find(only.begin(), only.end(), st.name) == only.end()) continue;
      if (auto p = compile_program(here, st, diags)) {
        out->programs.push_back(std::make_unique<CompiledProgram>(std::move(*p)));
      }
    }
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
