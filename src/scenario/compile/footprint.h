// What a step may touch that a step of another rank may touch too: its footprint, which
// partial-order reduction (src/search/reduction.h) reads to tell which two steps commute.
//
// Two steps of different ranks whose footprints do not conflict are independent: running them in
// either order gives the same state. Two footprints conflict when one touches everything, or
// both touch one thing and not both only read it or both only set it (setting a mark twice is
// setting it once; reading it is not). A footprint is derived from the primitive and its
// arguments when the step is compiled, conservatively: a primitive not listed below touches
// everything, so a new primitive is never wrongly independent.
//
//   nothing shared   sleep, compute, count, repeat, for_each, for_each_param, slot, use, try, fail,
//                    join, profiler_step (the rank's own state: its stream, faults, helpers,
//                    profiler)
//   mark:NAME        mark sets it; wait, and if/poll_until on `marked: NAME`, read it
//   barrier:NAME     barrier (writes)
//   semaphore:NAME   semaphore (writes)
//   mount:NAME       every storage primitive, and if/poll_until on `exists:`/`glob:`, write the
//                    mount of each path they name (a mount's files share its metadata server,
//                    bandwidth and page cache in the model, so two files on one mount are
//                    dependent; on two mounts they are not)
//
// A name with `${...}` in it, or a path whose mount is known only when the step runs (`${...}`
// or a glob wildcard before the mount's part of it ends), touches everything. Steps of one rank (its main process and its helpers) are
// always dependent: the reduction adds that, by rank.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace racesim::scenario {

class Value;

// How a step touches a thing.
enum class Access : std::uint8_t { kRead, kSet, kWrite };

struct Touch {
  std::uint64_t key = 0;  // the thing, by its name
  Access access = Access::kWrite;
  bool operator==(const Touch&) const = default;
};

struct Footprint {
  bool everything = true;      // conflicts with every other step
  std::vector<Touch> touches;  // a few

  // Whether a step with this footprint and one with `other` (of another rank) may not commute.
  bool conflicts(const Footprint& other) const;
  // Adds what `other` touches.
  void add(const Footprint& other);
};

// The name of the mount a path or pattern written in a step is on, "" when its text cannot tell
// (the compiler's, from the platform: Platform::mount_of_written).
using MountOf = std::function<std::string(const std::string& path)>;

// The footprint of a step of `primitive` written with `args`; `mount_of` names the mounts its
// paths are on.
Footprint footprint_of(std::string_view primitive, const Value& args, const MountOf& mount_of);

}  // namespace racesim::scenario
