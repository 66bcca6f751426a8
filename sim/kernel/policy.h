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
// Every decision is a choice of a kind (tape.h): the due-set pick is kSchedule; which waiter a
// freed lock, semaphore, resource or channel goes to is kWake (pct hands it to the waiter of
// highest priority, random to a uniform one); a model's choose(n) is kModel. A spec may leave
// kinds to the first option, as fifo does (`kinds`: swarm testing turns kinds on and off per run).
//
// Recording: when enabled, every decision with at least two options is appended to the tape;
// `replay` feeds a tape back and the run reproduces exactly. A replay whose tape runs out, or
// whose next choice is of another kind or number of options than the run asks for, takes the
// first option from there on and reports where it diverged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/kernel/event_log.h"
#include "sim/kernel/random.h"
#include "sim/kernel/status.h"
#include "sim/kernel/tape.h"
#include "sim/kernel/time.h"

namespace racesim::kernel {

enum class PolicyKind : std::uint8_t { kFifo, kRandom, kPct, kReplay };

struct PolicySpec {
  PolicyKind kind = PolicyKind::kFifo;
  // random, pct: the seed of the policy's own stream (the run seed is mixed in by Simulation).
  std::uint64_t seed = 0;
  // pct: bug depth d >= 1 (d - 1 change points) and the expected number of steps k >= 1.
  int depth = 2;
  std::uint64_t steps_hint = 1000;
  // replay: the recorded tape (kind, options and value of each choice are read).
  std::vector<Choice> choices;
  // random, pct: the kinds of choice the policy decides; the others take their first option (as
  // fifo does). Recorded either way.
  ChoiceKinds kinds = kScheduleChoiceKinds;
  // The order of a schedule choice's options: false, the due events in the order they were
  // scheduled (fifo's); true, the event of the process that ran last first when it is due (the
  // rest as before), so option 0 lets it go on and any other preempts it. Bounded exhaustive
  // search counts preemptions this way (src/search/exhaustive.h). A tape replays only in the
  // order it was recorded in.
  bool sticky = false;
  // replay: false reads only each choice's value (taken when it is below the options the run has
  // there, else the first option), and past the tape's end the first option, with no divergence:
  // how a search gives a run a prefix of choices (src/search/exhaustive.h).
  bool strict = true;

  static PolicySpec fifo() { return {}; }
  static PolicySpec random(std::uint64_t seed = 0) { return {PolicyKind::kRandom, seed, 2, 1000, {}}; }
  static PolicySpec pct(int depth, std::uint64_t steps_hint, std::uint64_t seed = 0) {
    return {PolicyKind::kPct, seed, depth, steps_hint, {}};
  }
  static PolicySpec replay(std::vector<Choice> choices) {
    return {PolicyKind::kReplay, 0, 2, 1000, std::move(choices)};
  }
  static PolicySpec prefix(std::vector<Choice> choices) {
    PolicySpec p = replay(std::move(choices));
    p.strict = false;
    return p;
  }
  // "fifo", "random", "pct", "pct:DEPTH", "pct:DEPTH:STEPS". Errors say what was expected.
  static Result<PolicySpec> parse(std::string_view text);
  std::string to_string() const;
};

// The owner of an event for PCT priorities: the process it resumes, or for a callback the
// process that scheduled it; -1 for none.
using OwnerId = std::int32_t;
using ChoiceOwners = ChoiceOwnersOf<OwnerId>;  // event_log.h

// Where a choice is made: the running process (-1 for none) and the virtual time.
struct ChoiceSite {
  OwnerId process = -1;
  Time at = 0;
};

class SchedulePolicy {
 public:
  // `run_seed` is mixed with spec.seed so each run seed explores a different schedule.
  SchedulePolicy(const PolicySpec& spec, std::uint64_t run_seed, bool record);

  PolicyKind kind() const { return spec_.kind; }
  bool recording() const { return record_; }
  // Whether a choice of `kind` among several options could be anything but the first: false
  // for fifo and for kinds the spec leaves out. Then, when not recording, a caller may take the
  // first option without asking.
  bool decides(ChoiceKind kind) const {
    return spec_.kind == PolicyKind::kReplay || (spec_.kind != PolicyKind::kFifo && contains(spec_.kinds, kind));
  }

  // A process was created (PCT assigns its initial priority).
  void on_spawn(OwnerId pid);
  // Picks the index in [0, n) of the next due event (a kSchedule choice); owners[i] is event i's
  // owner (read by pct only; may be null for the others). REQUIRES: n >= 2 (with one option
  // there is no choice).
  std::size_t pick(const OwnerId* owners, std::size_t n, ChoiceSite site = {}) {
    return static_cast<std::size_t>(decide(ChoiceKind::kSchedule, owners, n, site));
  }
  // A choice of `kind` among n options, owners[i] owning option i (pct takes the owner of
  // highest priority; without owners, pct draws uniformly as random does). Returns a value in
  // [0, n); n == 1 returns 0, unrecorded. REQUIRES: n >= 1.
  std::uint64_t decide(ChoiceKind kind, const OwnerId* owners, std::uint64_t n, ChoiceSite site = {});
  // One step ran for `owner` (PCT counts steps and applies change points).
  void on_step(OwnerId owner);
  // A model's choice among n outcomes (kModel); returns a value in [0, n). n == 1 returns 0,
  // unrecorded.
  std::uint64_t choose(std::uint64_t n, ChoiceSite site = {}) { return decide(ChoiceKind::kModel, nullptr, n, site); }

  // The tape recorded so far (empty unless recording).
  const std::vector<Choice>& recorded() const { return recorded_; }
  // replay only: true once the run asked for a choice its tape does not hold (past its end, of
  // another kind, or with another number of options), or, asked when the run has ended, when
  // choices of the tape are still unused. divergence() says where, for messages ("" if none).
  bool diverged() const { return spec_.strict && (diverged_ || replay_pos_ < spec_.choices.size()); }
  std::string divergence() const;
  std::uint64_t priority(OwnerId pid) const;

 private:
  std::uint64_t next_replayed(ChoiceKind kind, std::uint64_t n);
  void diverge(std::string message);

  PolicySpec spec_;
  bool record_;
  RandomStream rng_;
  std::vector<Choice> recorded_;
  std::size_t replay_pos_ = 0;
  bool diverged_ = false;
  std::string divergence_;
  // PCT state.
  std::vector<std::uint64_t> priority_;     // by pid
  // (step, new priority) sorted by step; the i-th drawn change point lowers to priority i + 1.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> changes_;
  std::size_t next_change_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace racesim::kernel
