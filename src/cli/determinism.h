// racesim check --determinism FILE...: the determinism guard (src/search/determinism.h) over
// scenario files, one line per file, the first difference named; exit 1 when any run differs.
#pragma once

#include <string>
#include <vector>

#include "src/cli/options.h"

namespace racesim::cli {

struct DeterminismRequest {
  std::vector<std::string> files, points, strategies;
  bool ci = false;  // each scenario's `ci:` points (and its seeds, capping --seeds)
  std::string junit_file;
  CommonOptions common;  // overrides, --seeds (default 2), --seed-start, --policy
};

int check_determinism_command(const DeterminismRequest& r);

}  // namespace racesim::cli
