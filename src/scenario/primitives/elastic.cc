// The elastic family: platform.elastic, a group restart policy as torchrun's elastic agent
// applies with --max-restarts (src/scenario/language/group_restart.h; RunState applies it), and
// its check and counter.
//
//   platform.elastic: {max_restarts: 3, restart_after: 30s}
//
// A rank's failure (a crash fault, an error its program did not catch) stops every rank, and
// restart_after later every rank's program starts again from its first step; `elastic.restarts`
// counts the restarts, and a failure after the last one fails the run (check `elastic` for a
// crash, the error's own check otherwise, saying how many restarts were used).
#include <any>
#include <string>

#include "src/scenario/compile/registry.h"
#include "src/scenario/language/group_restart.h"
#include "src/scenario/language/platform.h"

namespace racesim::scenario {

namespace {

std::any parse_elastic(PlatformReader& r, const std::string& key, const Value& node) {
  GroupRestartPolicy p;
  r.fields(key, node,
           {{"max_restarts", Unit::kCount, 0, [&](double v) { p.max_restarts = static_cast<int>(v); }, 1000},
            // Above 0: the stopped processes unwind before the new ones start.
            {"restart_after", Unit::kDuration, 1, [&](double v) { p.restart_after = static_cast<kernel::Time>(v); }}});
  return p;
}

}  // namespace

void register_elastic_family(Registry& r) {
  r.add_check({"elastic", true,
               "a rank's process failed after the group had used its platform.elastic.max_restarts restarts"});
  r.add_section({"elastic",
                 "elastic: {max_restarts: N, restart_after: DURATION} - a group restart policy (torchrun "
                 "--max-restarts): a rank's failure stops every rank, and all restart from the first step",
                 parse_elastic});
}

}  // namespace racesim::scenario
