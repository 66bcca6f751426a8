// Choice points and schedule policies.
//
// Every nondeterministic decision of a run goes through one object, the SchedulePolicy:
//   - which of the events due at the current virtual time runs next ("pick"), and
//   - any `choose(n)` a model makes (which of n equally valid outcomes happens).
// Events at the same time form the "due set", kept in insertion order. A policy picks an index
// into it: `fifo` always 0 (insertion order), `random` uniformly, `pct` the event whose owner
// process has the highest PCT priority, `replay` the recorded index. This realises the design's
// "(time, tie key, insertion sequence)" order with the tie decided at dispatch rather than at
// insertion, which PCT needs (priorities change at change points) and which makes a recorded
// choice list replay exactly.
//
// PCT follows Burckhardt, Kothari, Musuvathi, Nagarakatte, "A Randomized Scheduler with
// Probabilistic Guarantees of Finding Bugs", ASPLOS 2010: each process gets a random initial
// priority >= depth; depth-1 change points are drawn uniformly from [1, steps_hint]; when the
// i-th change point's step runs, the running process's priority drops to i (below every initial
// priority). A step is one dispatched event. For a bug of depth d among n processes and k steps,
// one run finds it with probability >= 1 / (n * k^(d-1)).
//
// Recording: when enabled, every decision with at least two options is appended to the choice
// list (the picked index or the chosen value); `replay` feeds that list back and the run
// reproduces exactly. A replay whose list runs out, or holds an out-of-range value, falls back to
// 0 and reports divergence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/kernel/random.h"
#include "sim/kernel/status.h"

namespace racesim::kernel {

enum class PolicyKind : std::uint8_t { kFifo, kRandom, kPct, kReplay };

struct PolicySpec {
  PolicyKind kind = PolicyKind::kFifo;
  // random, pct: the seed of the policy's own stream (the run seed is mixed in by Simulation).
  std::uint64_t seed = 0;
  // pct: bug depth d >= 1 (d - 1 change points) and the expected number of steps k >= 1.
  int depth = 2;
  std::uint64_t steps_hint = 1000;
  // replay: the recorded choices.
  std::vector<std::uint64_t> choices;

  static PolicySpec fifo() { return {}; }
  static PolicySpec random(std::uint64_t seed = 0) { return {PolicyKind::kRandom, seed, 2, 1000, {}}; }
  static PolicySpec pct(int depth, std::uint64_t steps_hint, std::uint64_t seed = 0) {
    return {PolicyKind::kPct, seed, depth, steps_hint, {}};
  }
  static PolicySpec replay(std::vector<std::uint64_t> choices) {
    return {PolicyKind::kReplay, 0, 2, 1000, std::move(choices)};
  }
  // "fifo", "random", "pct", "pct:DEPTH", "pct:DEPTH:STEPS". Errors say what was expected.
  static Result<PolicySpec> parse(std::string_view text);
  std::string to_string() const;
};

// The owner of an event for PCT priorities: the process it resumes, or for a callback the
// process that scheduled it; -1 for none.
using OwnerId = std::int32_t;

class SchedulePolicy {
 public:
  // `run_seed` is mixed with spec.seed so each run seed explores a different schedule.
  SchedulePolicy(const PolicySpec& spec, std::uint64_t run_seed, bool record);

  PolicyKind kind() const { return spec_.kind; }
  bool recording() const { return record_; }

  // A process was created (PCT assigns its initial priority).
  void on_spawn(OwnerId pid);
  // Picks the index in [0, n) of the next due event; owners[i] is event i's owner (read by pct
  // only; may be null for the others). REQUIRES: n >= 2 (with one option there is no choice).
  std::size_t pick(const OwnerId* owners, std::size_t n);
  // One step ran for `owner` (PCT counts steps and applies change points).
  void on_step(OwnerId owner);
  // A model's choice among n outcomes; returns a value in [0, n). n == 1 returns 0, unrecorded.
  std::uint64_t choose(std::uint64_t n);

  const std::vector<std::uint64_t>& recorded() const { return recorded_; }
  // replay only: true when the run asked for more choices than recorded, or a recorded value
  // was out of range.
  bool diverged() const { return diverged_; }
  std::uint64_t priority(OwnerId pid) const;

 private:
  std::uint64_t next_replayed(std::uint64_t n);
  void note(std::uint64_t v) {
    if (record_) recorded_.push_back(v);
  }

  PolicySpec spec_;
  bool record_;
  RandomStream rng_;
  std::vector<std::uint64_t> recorded_;
  std::size_t replay_pos_ = 0;
  bool diverged_ = false;
  // PCT state.
  std::vector<std::uint64_t> priority_;     // by pid
  // (step, new priority) sorted by step; the i-th drawn change point lowers to priority i + 1.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> changes_;
  std::size_t next_change_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace racesim::kernel
