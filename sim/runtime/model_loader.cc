// A runtime's model loader (model_loader.h).
#include "sim/runtime/model_loader.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "sim/kernel/bytes.h"

namespace racesim::runtime {

ModelLoad load_model(kernel::Simulation& sim, storage::Files& mount, int client, const std::string& path,
                     const ModelLoadOptions& options) {
  assert((!options.validate || options.retry_delay) && "a validating loader needs a retry delay");
  const auto count = [&options](const char* counter) {
    if (options.count) options.count(counter);
  };
  const kernel::Time start = sim.now();
  ModelLoad load;
  // Bounded by the timeout: each retry sleeps at least 1 ns.
  for (;;) {
    load.read_at = sim.now();
    sim.trace_record('B', "load", path);
    sim.trace_annotate([&] { return "{\"mount\":\"" + kernel::json_escape(mount.name()) + "\",\"client\":" + std::to_string(client) + "}"; });
    auto r = mount.read(path, client);
    sim.trace_record('E', "load", path);
    sim.trace_annotate([&] {
      return r ? "{\"bytes\":" + std::to_string(r->bytes) + ",\"intact\":" + (r->intact() ? "true" : "false") + "}"
               : "{\"error\":\"" + kernel::json_escape(r.message()) + "\"}";
    });
    if (!r) {
      load.outcome = ModelLoad::Outcome::kReadError;
      load.error = r.message();
      return load;
    }
    count(kLoadsCounter);
    load.last = std::move(*r);  // a validating reader may retry this hundreds of thousands of times
    // A file no rank wrote as a model (live: no content identity in its bytes, as an empty file
    // just created) is no model, whatever its length.
    if (load.last.intact() && load.last.content.writer >= 0) {
      load.outcome = ModelLoad::Outcome::kLoaded;
      return load;
    }
    count(kTornReadsCounter);
    if (!options.validate) {
      load.outcome = ModelLoad::Outcome::kTorn;
      return load;
    }
    if (sim.now() - start >= options.timeout) {
      load.outcome = ModelLoad::Outcome::kStillTorn;
      return load;
    }
    count(kLoadRetriesCounter);
    sim.sleep_for(std::max<kernel::Time>(1, options.retry_delay()));
  }
}

std::string describe_torn_read(const storage::ReadResult& r) {
  if (r.content.writer < 0) return kernel::format_bytes(r.bytes) + " holding no model (no content identity)";
  std::string w = r.changed ? "read " + kernel::format_bytes(r.bytes) + " while the file was truncated or rewritten"
                            : kernel::format_bytes(r.bytes) + " of " + kernel::format_bytes(r.content.length) +
                                  " written by rank " + std::to_string(r.content.writer);
  if (!r.changed && r.complete && r.bytes < r.content.length) w += " (closed at that size)";
  return w;
}

}  // namespace racesim::runtime
