// racesim check --determinism (see determinism.h).
#include "src/cli/determinism.h"

#include <algorithm>
#include <iostream>

#include "src/cli/command.h"
#include "src/report/junit.h"
#include "src/search/determinism.h"

namespace racesim::cli {

int check_determinism_command(const DeterminismRequest& r) {
  Overrides overrides;
  if (!read_overrides(r.common.overrides, overrides)) return kExitUsage;
  const auto policy = kernel::PolicySpec::parse(r.common.policy);
  if (!policy) {
    std::cerr << "racesim: --policy: " << policy.message() << "\n";
    return kExitUsage;
  }
  int same = 0, differ = 0;
  std::vector<report::JUnitCase> cases;
  for (const auto& file : r.files) {
    auto study = load_study(file, r.strategies, overrides, r.points);
    search::DeterminismOptions o;
    o.policy = *policy;
    o.seed_start = r.common.seed_start;
    o.seeds = r.common.seeds == 0 ? 2 : r.common.seeds;
    if (!seeds_fit(o.seed_start, o.seeds)) return kExitUsage;
    if (r.ci && study) {
      const scenario::Scenario& sc = study->scenario;
      if (sc.ci_seeds > 0) o.seeds = std::min(o.seeds, static_cast<std::uint64_t>(sc.ci_seeds));
      if (!sc.ci_points.empty() && r.points.empty()) study = load_study(file, r.strategies, overrides, sc.ci_points);
    }
    if (!study) {
      std::cout << "FAIL " << file << ": the scenario does not load (errors above)\n";
      cases.push_back({file, "loads", "the scenario does not load"});
      ++differ;
      continue;
    }
    std::uint64_t runs = 0;
    const auto found = search::check_determinism(study->program_pointers(), o, runs);
    if (found.empty()) {
      std::cout << "PASS " << file << " deterministic: " << runs << " runs (" << study->programs.size()
                << " programs x " << o.seeds << " seeds, policy " << policy->to_string()
                << ") each made twice, on two threads, event for event the same\n";
      cases.push_back({file, "deterministic", ""});
      ++same;
      continue;
    }
    for (const auto& d : found) {
      std::cout << "FAIL " << file << " " << d.program << " / seed " << d.seed << " not deterministic: " << d.what
                << "\n";
      cases.push_back({file, d.program + " / seed " + std::to_string(d.seed) + " deterministic", d.what});
    }
    ++differ;
  }
  if (!r.junit_file.empty() && !write_file_atomically(r.junit_file, report::junit_xml(cases))) return kExitUsage;
  std::cout << same << " deterministic, " << differ << " not\n";
  return differ ? kExitFailed : kExitOk;
}

}  // namespace racesim::cli
