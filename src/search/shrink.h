// The shrinker: a failing run reduced to a smaller one that fails the same way (the same check,
// and a diagnosis of the same kind: failure_signature, explore.h). What `racesim shrink` runs.
//
// A run is (overrides, seed, tape). The passes, repeated until none makes progress or the budget
// ends:
//   ranks   ranks removed (ddmin over them: halves, then smaller spans, down to single ranks);
//           the ranks that remain are renumbered and draw what they drew before
//           (RunOptions::rank_streams), so two ranks of a 64-rank run that race can become a
//           2-rank run;
//   faults  each fault of the plan that can fire turned off (faults.NAME.probability=0);
//   params  each param drawn from a distribution made a constant, its median (a choice's first
//           value): params.NAME=VALUE;
//   platform each of the platform's durations that is not 0 (a latency, a jitter, a cache
//           timeout) set to 0: platform.KEY=0s;
//   tape    the choices made simpler, shortlex: spans of choices set to their first option
//           (ddmin's complements, down to single choices), then each remaining one lowered.
// A candidate replays its tape (a tape that no longer lines up takes the first option from where
// it parts: still a run the model can produce), and the tape the run then records is the one
// kept, so the result replays exactly. A candidate is kept only if it is strictly simpler (fewer
// ranks, fewer faults, or a tape that is shortlex smaller), so the search ends.
//
// When every pass has run to the end without progress, the result is 1-minimal: any one rank
// removed, any one fault more turned off, any one more param made its median, any one more
// platform duration made 0, or any one remaining choice lowered, and it no longer fails the same
// way. The draws of the params left
// random come from the seed's named streams and are not shrunk themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel/tape.h"
#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::search {

// The overrides of a candidate, by key, in the order first set ("ranks" -> "3").
using OverrideList = std::vector<std::pair<std::string, std::string>>;
std::vector<std::string> override_texts(const OverrideList& overrides);

// Compiles the one program a candidate runs (the strategy at its point) with these overrides
// added to the user's; nullptr when they do not compile (that candidate is skipped).
using CompileFn = std::function<std::unique_ptr<scenario::Study>(const std::vector<std::string>& overrides)>;

struct ShrinkOptions {
  std::uint64_t max_replays = 500;  // >= 1
  double max_seconds = 60;          // wall clock; <= 0: none
  bool sticky = false;              // the order the tape's schedule options are in (PolicySpec::sticky)
};

struct ShrinkResult {
  OverrideList overrides;                 // what the shrinker set, beyond the user's
  std::shared_ptr<scenario::Study> study;  // the program of the result
  run::RunOptions options;                // replay of `record.tape` (and rank_streams), record_choices on
  run::RunRecord record;                  // the minimal failing run, with its tape
  std::string signature;
  std::uint64_t replays = 0;
  bool complete = false;                  // every pass ran to the end without progress: 1-minimal
  int ranks_before = 0;
  std::size_t nonzero_before = 0;         // choices not at their first option, before and after
  std::size_t nonzero_after = 0;
  // Positions in record.tape whose other options (up to 3 tried each) all fail the same way too.
  std::vector<std::size_t> free_choices;
  bool free_choices_complete = false;     // every choice was tried (else the budget ended first)
};

// Shrinks the run that `compile({})` gives with seed `seed`, its ranks drawing from
// `rank_streams` (empty: their own), replaying `tape` (empty: a run that takes the first option
// everywhere, as fifo does). nullopt, with `error` set, when that run does not fail.
std::optional<ShrinkResult> shrink(const CompileFn& compile, std::uint64_t seed, const std::vector<kernel::Choice>& tape,
                                   const std::vector<int>& rank_streams, const ShrinkOptions& o, std::string& error);

}  // namespace racesim::search
