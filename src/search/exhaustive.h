// Bounded exhaustive search: every run whose tape has at most `bound` delays, depth first, each
// once (stateless model checking, as CHESS and loom do it, with a bound in the manner of
// preemption bounding, Musuvathi and Qadeer, PLDI 2007, and delay-bounded scheduling, Emmi,
// Qadeer and Rakamaric, POPL 2011). A delay is a choice other than the first option. The
// schedule's options are in sticky order (PolicySpec::sticky): option 0 lets the process that ran
// last go on, so a schedule delay is a preemption, and a process may run any number of steps in a
// row for free; a waiter served out of turn, a model's choice off its first option, a draw moved
// to a representative value or a fault's arming or firing flipped are delays too.
//
// Run 0 takes the first option everywhere (fifo's run). Without the reduction
// (ExploreOptions::reduce false): from a run with tape T made under a forced prefix P, every
// position i at or after P's end and every other option v of T[i] with at most `bound` delays in
// T[0..i) + v is a new prefix, explored depth first; past its prefix a run takes the first
// options. So every tape with at most `bound` delays is run exactly once. With it (reduction.h):
// the same for choices that are not the schedule's, and for the schedule's only the alternatives
// the partial-order reduction finds, at any position of the tape (a prefix is then its delays
// before that position and the alternative), each prefix queued once.
// Every run is of one seed: a draw from a distribution (by a step or a fault's argument) is that
// seed's value (the first option) or, as a delay, the distribution's low end, median or high end
// (kDraw), and whether each uncertain fault is armed, and fires at each site, is the seed's or,
// as a delay, the other (kFault); the coverage statement says so.
//
// Determinism: prefixes are taken from the stack in batches of a fixed size, whatever the number
// of threads, and results are handled in batch order, so a run budget finds the same.
#pragma once

#include "src/scenario/compile/compiler.h"
#include "src/search/search.h"

namespace racesim::search {

// The batch: how many prefixes run at once (fixed, so the order of the search is too).
inline constexpr std::size_t kExhaustiveBatch = 64;
// The most prefixes waiting to be explored (about 100 bytes each), and with the reduction the
// most ever queued (kept to queue each once): past either the search stops, not complete, and
// says so (Coverage::frontier_full).
inline constexpr std::size_t kMaxPendingPrefixes = 4'000'000;

// The search explore() runs for ModeKind::kExhaustive.
ExploreResult explore_exhaustive(const scenario::CompiledProgram& program, const ExploreOptions& o);

}  // namespace racesim::search
