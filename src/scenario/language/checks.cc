// The `checks:` section (see checks.h).
#include "src/scenario/language/checks.h"

#include "src/scenario/compile/registry.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

void parse_checks(const Value& checks, Scenario& sc, const std::string& file, Diagnostics& diags) {
  sc.checks.clear();
  sc.metric_checks.clear();
  if (!checks.is_list()) {
    diags.error(at(checks, file), "checks: expected a list of check names");
  } else {
    for (const auto& c : checks.items()) {
      if (c.is_map() && c["metric"]) {
        check_keys(c, {"metric", "min", "max"}, "a metric check", file, diags);
        MetricCheck mc;
        mc.where = at(c, file);
        mc.metric = read_text(c["metric"], "metric", file, diags).value_or("");
        mc.min = read_bound(c, "min", file, diags);
        mc.max = read_bound(c, "max", file, diags);
        if (!mc.min && !mc.max) diags.error(mc.where, "a metric check needs min and/or max");
        sc.metric_checks.push_back(std::move(mc));
        continue;
      }
      const std::string name = c.is_scalar() ? c.scalar() : "";
      if (builtin_registry().find_check(name) == nullptr) {
        std::string known;
        for (const CheckInfo* k : builtin_registry().all_checks()) known += k->name + ", ";
        diags.error(at(c, file), "unknown check '" + name + "' (expected one of: " + known +
                                     "or {metric: NAME, min: X, max: Y}; `racesim list` describes each)");
        continue;
      }
      sc.checks.push_back(name);
    }
  }
}

}  // namespace racesim::scenario
