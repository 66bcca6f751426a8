// The fault seam: where a model asks, at the operation where a fault acts, whether one is active.
//
// A fault plan (from a scenario) is armed once per run: for each fault and each rank it may hit,
// a BUGGIFY-style draw from the fault's own seeded stream decides whether it is active, so
// turning a fault on never shifts another component's draws. Each active fault is an
// ActiveFault held by the run's FaultSeam. Models hold a pointer to the seam and ask it at their
// fault points, naming the rank the operation acts for and the resource it acts on:
//
//   point              asked by                             resources
//   fs.op, fs.write    storage::FileSystem (sim/storage)     the mount
//   collective.enter   collective::Engine (sim/collective)   the communicator, the link
//   device.compute     device::Stream::kernel (sim/device)   -
//   host.compute       FaultSeam::compute_time (the harness's compute step)
//
// Two levels decide where a fault acts, as FoundationDB's BUGGIFY does: arming, once per run and
// rank (the plan's `probability`), and firing, at each site where an armed fault could act (the
// plan's `fires`, a probability, default 1: every site; and `times`, the most sites it fires at).
// A draw of either level that could go both ways is a fault choice on the run's tape
// (Simulation::decide_fault), its default the fault's own stream's draw, so a search can steer
// whether and where a fault strikes. A fault that fires at the first site only (`times: 1`) with a
// firing probability below 1 strikes at the operation the run's choices pick.
//
// A fault may be aimed at ranks only (every resource of the point), or also at one resource by
// name: a mount ("shared"), a communicator by its label ("fsdp", "world"), a link ("intra",
// "inter"). Aimed at a mount, it leaves every other mount alone.
//
// The model that owns a point declares the fault kinds that bite there (FaultKindSpec): their
// arguments, what they may be aimed at and what they do. The harness registers those
// declarations; nothing central lists the kinds.
#pragma once

#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/kernel/random.h"
#include "sim/kernel/time.h"

namespace racesim::kernel {

class Process;
class Simulation;

// What a fault can be aimed at besides ranks.
enum class ResourceKind : std::uint8_t { kMount, kComm, kLink };
const char* to_string(ResourceKind k);  // "mount", "comm", "link"

// A resource an operation acts on: its kind and its name ("shared", "fsdp", "inter").
struct FaultTarget {
  ResourceKind kind = ResourceKind::kMount;
  std::string_view name;
};

// An argument of a fault kind, as its declaration names it. `unit` is one of "number",
// "duration", "bytes"; `default_value` is as a scenario would write it ("" when required).
struct FaultArgSpec {
  std::string name;
  std::string unit;  // "duration", "bytes" or "number"
  std::string default_value;
  // The values it may take, in base units (ns, bytes); a distribution must stay inside.
  // max < 0: the unit's own maximum.
  double min = 0;
  double max = -1;
};

// A fault kind, declared by the model that owns the point where it bites.
struct FaultKindSpec {
  std::string name;
  std::string help;                    // one line: what it does, at which point
  std::vector<FaultArgSpec> args;
  std::vector<ResourceKind> aimable;   // resources it can be aimed at (empty: ranks only)
};

// One fault active in one run on one rank.
// A rank whose compute, on the host (compute steps) and on its device (stream kernels), takes
// FACTOR times longer: a slow card, a throttled CPU, a noisy neighbour. Ranks only.
inline constexpr std::string_view kStraggler = "straggler";
const FaultKindSpec& straggler_kind();

class ActiveFault {
 public:
  // Draws one value of an argument from the fault's stream, for the rank it acts on (an
  // argument may depend on the rank). Its captures fit std::function's own storage (16 bytes on
  // libstdc++): a fault's arguments are set for every rank of every run.
  using Sampler = std::function<double(RandomStream&, int rank)>;

  // `rng` is the fault's own stream for this rank ("fault/NAME/RANK"). REQUIRES: `name` and `kind`
  // outlive the fault (the compiled fault plan does; so do string literals).
  ActiveFault(std::string_view name, std::string_view kind, int rank, RandomStream rng)
      : name_(name), kind_(kind), rank_(rank), rng_(rng) {}

  std::string_view name() const { return name_; }
  std::string_view kind() const { return kind_; }
  int rank() const { return rank_; }
  RandomStream& rng() { return rng_; }

  // Aims the fault at one resource (by default it hits every resource of its points).
  void aim(ResourceKind kind, std::string name) { aimed_.push_back({kind, std::move(name)}); }
  // Whether an operation on any of `resources` is hit: true when the fault is aimed at no
  // resource, or at one of these (by kind and name).
  bool hits(std::initializer_list<FaultTarget> resources) const;

  // REQUIRES: `name` outlives the fault.
  void set_arg(std::string_view name, Sampler sampler) { args_.emplace_back(name, std::move(sampler)); }
  // A fresh draw of argument `arg`. REQUIRES: the argument was set (the kind declares it).
  double sample(std::string_view arg);

  // How often the fault bit (a model calls bit() where it acted); reported as faults.NAME.hits.
  void bit() { ++hits_; }
  std::uint64_t hit_count() const { return hits_; }

  // The second level: at each site where it could act, the fault fires with `probability`, and
  // at no site after it fired `most_times`. REQUIRES: 0 <= probability <= 1, most_times >= 1.
  void set_firing(double probability, std::uint64_t most_times) {
    assert(probability >= 0 && probability <= 1 && most_times >= 1);
    fire_probability_ = probability;
    most_fires_ = most_times;
  }
  // Whether it fires at this site: false once it fired its most times; true at probability 1
  // (no draw); else a draw from its stream, a fault choice through `sim` when there is one.
  bool fires(Simulation* sim);

 private:
  struct Aim {
    ResourceKind kind;
    std::string name;
  };
  std::string_view name_;
  std::string_view kind_;
  int rank_;
  RandomStream rng_;
  std::vector<Aim> aimed_;
  std::vector<std::pair<std::string_view, Sampler>> args_;  // a few; searched in order
  std::uint64_t hits_ = 0;
  double fire_probability_ = 1;
  std::uint64_t most_fires_ = ~std::uint64_t{0};
  std::uint64_t fires_ = 0;
};

// The run's active faults and which rank each process acts for. One per run; models keep a
// pointer to it (nullptr: no faults, every query answers none).
class FaultSeam {
 public:
  // `sim` decides where a fault that may or may not fire does (its policy's fault choices);
  // nullptr: the fault's stream alone. REQUIRES: `sim` outlives the seam.
  explicit FaultSeam(Simulation* sim = nullptr) : sim_(sim) {}
  FaultSeam(const FaultSeam&) = delete;
  FaultSeam& operator=(const FaultSeam&) = delete;

  // Adds an active fault; faults are asked in the order they were added.
  ActiveFault& add(ActiveFault fault);
  // The first active fault of `kind` on `rank` that hits one of `resources` (see
  // ActiveFault::hits) and fires at this site (ActiveFault::fires), or nullptr. A model calls it
  // once at each site where a fault of the kind would act. Cheap when no fault is active.
  ActiveFault* find(std::string_view kind, int rank, std::initializer_list<FaultTarget> resources = {}) {
    ActiveFault* f = armed(kind, rank, resources);
    return f != nullptr && f->fires(sim_) ? f : nullptr;
  }
  // The same without the firing decision: for a model that must look at the fault's arguments
  // to know whether this is a site at all (a latency spike's window); it then asks fires().
  ActiveFault* armed(std::string_view kind, int rank, std::initializer_list<FaultTarget> resources = {});
  bool fires(ActiveFault& f) { return f.fires(sim_); }
  // Whether any active fault is of `kind` (models ask this first: most operations of most runs
  // meet no fault of their kinds, and this rejects them without a rank lookup).
  bool has_kind(std::string_view kind) const {
    for (std::string_view k : kinds_) {
      if (k == kind) return true;
    }
    return false;
  }
  std::vector<ActiveFault>& all() { return active_; }
  const std::vector<ActiveFault>& all() const { return active_; }
  bool empty() const { return active_.empty(); }

  // Records that process `p` acts for `rank` (a rank's main process, its helpers), so a model
  // that knows only the calling process can name the rank. REQUIRES: p != nullptr, rank >= 0.
  void bind(const Process* p, int rank);
  // The rank `p` acts for, or -1 when it was never bound.
  int rank_of(const Process* p) const;

  // The points host.compute and device.compute: `d` of compute on `rank`, stretched by the
  // rank's straggler fault (FACTOR times longer), saturating at kTimeMax.
  Time compute_time(int rank, Time d);

 private:
  Simulation* sim_;
  std::vector<ActiveFault> active_;
  std::vector<std::string_view> kinds_;  // the distinct kinds of active_
  // The rank each process acts for, by process id (ids are dense, from 0): -1 where unbound. A
  // vector, not a map: at a million ranks a map's node was 64 bytes a rank.
  std::vector<int> ranks_;
};

}  // namespace racesim::kernel
