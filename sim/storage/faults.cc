// The storage fault kinds' declarations (see faults.h); fs.cc is where they act.
#include "sim/storage/faults.h"

namespace racesim::storage {

const std::vector<kernel::FaultKindSpec>& fault_kinds() {
  using kernel::ResourceKind;
  static const std::vector<kernel::FaultKindSpec> kinds = {
      {std::string(kWriterStall), "fs.write: each write by the rank pauses for DURATION after the fraction AT of its bytes",
       {{"at", "number", "0.5", 0, 1}, {"duration", "duration", ""}}, {ResourceKind::kMount}},
      {std::string(kEnospc), "fs.write: the rank's writes fail with ENOSPC after the fraction AT of their bytes, leaving a partial file",
       {{"at", "number", "0.5", 0, 1}}, {ResourceKind::kMount}},
      {std::string(kLatencySpike), "fs.op: each storage operation the rank starts in [AT, AT+DURATION) waits EXTRA first",
       {{"at", "duration", "0s"}, {"duration", "duration", ""}, {"extra", "duration", ""}}, {ResourceKind::kMount}},
      {std::string(kEio), "fs.op: each storage operation of the rank fails with EIO with probability RATE",
       {{"rate", "number", "1", 0, 1}}, {ResourceKind::kMount}},
      {std::string(kSlowStorage), "fs.op: the rank's metadata operations and transfers take FACTOR times longer",
       {{"factor", "number", "2", 1, 1e6}}, {ResourceKind::kMount}},
  };
  return kinds;
}

}  // namespace racesim::storage
