// A choice file: one run's tape (sim/kernel/tape.h) with what it is a tape of, so `racesim replay
// --choices FILE` reproduces the run exactly and refuses a file of another scenario, strategy,
// point, set of overrides or racesim version. `racesim explore` writes one for each failure it
// finds.
//
// JSON lines, as results.jsonl: a header line naming the run, one line per choice, a trailer with
// their number (a file cut short is refused):
//   {"racesim_choices": {"format": 1, "racesim": VERSION, "scenario": NAME, "content": HASH,
//     "overrides": [...], "strategy": S, "point": P, "seed": N, "made_by": "pct:3:4213",
//     "disarmed": [FAULT, ...], "rank_streams": [0, 10, 14], "order": "fifo" | "sticky",
//     "outcome": "fail", "check": C, "diagnosis": D,
//     "trace_hash": H, "processes": ["rank 0", ...]}}
//   {"kind": "wake", "of": 3, "took": 1, "process": "rank 2", "at_ns": 1500000000}
//   ...
//   {"end": {"choices": N}}
// `process` and `at_ns` say where each choice was made, for people (for a schedule choice, the
// process that then runs); a replay reads kind, of and took.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/kernel/tape.h"

namespace racesim::search {

inline constexpr int kChoiceFileFormat = 1;
// The most choices a file may hold (a run dispatches at most 50,000,000 events by default).
inline constexpr std::uint64_t kMaxChoices = 100'000'000;

// The largest choice file read (about 100,000,000 choices of a line each).
inline constexpr std::size_t kMaxChoiceFileBytes = std::size_t{2} << 30;

struct ChoiceFile {
  std::string version;                 // racesim's (report::kRacesimVersion) that wrote it
  std::string scenario;                // the scenario's name
  std::string content;                 // its content hash (Scenario::content_hash)
  std::vector<std::string> overrides;  // --set KEY=VALUE, as given
  std::string strategy;
  std::string point;                   // the sweep point's label ("" without a sweep)
  std::uint64_t seed = 0;              // fills the named random streams (parameter draws, faults)
  std::string made_by;                 // the policy or explorer mode that made the choices
  std::vector<std::string> disarmed;   // faults of the plan left out of the run (swarm)
  std::vector<int> rank_streams;       // RunOptions::rank_streams (shrink); empty: each rank its own
  bool sticky = false;                 // the order of its schedule options (PolicySpec::sticky)
  std::string outcome, check, diagnosis;
  std::string trace_hash;              // 16 hex digits
  std::vector<std::string> processes;  // process names by id
  std::vector<kernel::Choice> choices;
};

std::string format_choice_file(const ChoiceFile& f);
// Parses a choice file's text; `path` names it in errors, which say "PATH:LINE:COL: what was
// expected". Fails on a missing or bad header, a choice line that is not one, more than
// kMaxChoices, a missing trailer or one whose count is not the file's.
bool parse_choice_file(const std::string& text, const std::string& path, ChoiceFile& out, std::string& error);

// Choices of each kind in `tape` ("schedule 1,204, wake 31, model 0").
std::string count_by_kind(const std::vector<kernel::Choice>& tape);

}  // namespace racesim::search
