// The collective fault kinds' declarations (see faults.h); engine.cc is where they act.
#include "sim/collective/faults.h"

namespace racesim::collective {

const std::vector<kernel::FaultKindSpec>& fault_kinds() {
  using kernel::ResourceKind;
  static const std::vector<kernel::FaultKindSpec> kinds = {
      {std::string(kSlowLink),
       "collective.enter: collectives of the rank on the aimed communicator or link take FACTOR times their cost",
       {{"factor", "number", "2", 1, 1e6}}, {ResourceKind::kComm, ResourceKind::kLink}},
  };
  return kinds;
}

}  // namespace racesim::collective
