// The tape: every nondeterministic decision a run made, in the order it made them.
//
// A run's schedule is a sequence of choices: which of the events due at one instant runs next
// (kSchedule), which of the processes waiting on a lock, semaphore, resource or channel is handed
// it when it frees (kWake), any other decision a model puts through Simulation::choose (kModel;
// a yes or no whose odds the model drew from its stream goes through Simulation::decide_model,
// option 0 what was drawn), whether a fault that may or may not strike is armed at a rank, and
// whether an armed one fires at a site where it could act (kFault: option 0 is what the fault's
// stream drew, option 1 the other; Simulation::decide_fault, faults.h), and which value a draw
// from a distribution takes, by a step or by a fault's argument (kDraw: option 0 the seed's draw,
// 1 to 3 the distribution's low end, median and high end; Simulation::decide_draw). Each choice
// is recorded with its kind, how many options it had, the option taken, the process that was
// running and the virtual time, so a tape written to a file (a choice file,
// src/search/choice_file.h) says where each decision was made, and a replay can tell the first
// place where a run stops matching its tape.
//
// A choice with one option is no choice and is not recorded. The seed's draws themselves come
// from named streams of the run's seed (random.h), so a tape replays together with its seed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/kernel/time.h"

namespace racesim::kernel {

enum class ChoiceKind : std::uint8_t { kSchedule, kWake, kModel, kFault, kDraw };
inline constexpr std::size_t kChoiceKinds = 5;

// "schedule", "wake", "model", "fault", "draw": how choice files and coverage statements name a
// kind.
constexpr std::string_view to_string(ChoiceKind k) {
  constexpr std::array<std::string_view, kChoiceKinds> kNames = {"schedule", "wake", "model", "fault", "draw"};
  return kNames[static_cast<std::size_t>(k)];
}
// The kind named `name`, or nullopt.
constexpr std::optional<ChoiceKind> choice_kind_named(std::string_view name) {
  for (std::size_t k = 0; k < kChoiceKinds; ++k) {
    if (to_string(static_cast<ChoiceKind>(k)) == name) return static_cast<ChoiceKind>(k);
  }
  return std::nullopt;
}
// A set of kinds, as a bit mask (bit k: ChoiceKind k).
using ChoiceKinds = std::uint8_t;
inline constexpr ChoiceKinds kAllChoiceKinds = (1u << kChoiceKinds) - 1;
// What random and pct decide unless told otherwise: the order of things, not fault arming or
// draws, which stay the seed's (a fault's probability and a param's distribution are the
// scenario's; swarm and the searches vary them).
inline constexpr ChoiceKinds kScheduleChoiceKinds = kAllChoiceKinds &
    static_cast<ChoiceKinds>(~((1u << static_cast<unsigned>(ChoiceKind::kFault)) |
                               (1u << static_cast<unsigned>(ChoiceKind::kDraw))));
// A draw's options: the seed's value, then the distribution's low end, median and high end.
inline constexpr std::uint64_t kDrawOptions = 4;
constexpr bool contains(ChoiceKinds set, ChoiceKind k) { return (set >> static_cast<unsigned>(k)) & 1u; }

struct Choice {
  ChoiceKind kind = ChoiceKind::kSchedule;
  std::uint64_t options = 0;  // >= 2
  std::uint64_t value = 0;    // < options
  // The process that made it (-1: none); for a schedule choice, made between events, the process
  // whose event was picked to run (-1: a callback with no owner).
  std::int32_t process = -1;
  Time at = 0;                // the virtual time it was made at
};

}  // namespace racesim::kernel
