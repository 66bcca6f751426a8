// What every search shares (explore.h, exhaustive.h): the mode, the options and budget, the
// gate its workers pass before each run, a failing run found (a Finding) with its signature, and
// what the counted runs covered.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/kernel/status.h"
#include "sim/kernel/tape.h"
#include "src/run/runner.h"

namespace racesim::search {

enum class ModeKind : std::uint8_t { kRandom, kPct, kSwarm, kExhaustive };

struct Mode {
  ModeKind kind = ModeKind::kRandom;
  int depth = 3;  // pct: its depth; exhaustive: the delay bound
  // "random", "pct:3", "swarm", "exhaustive:2".
  std::string to_string() const;
  // "random", "pct", "pct:D" (1 <= D <= 64), "swarm", "exhaustive" or "exhaustive:D" (0 <= D <=
  // 64); errors say what was expected.
  static kernel::Result<Mode> parse(const std::string& text);
};

// The most runs one search may make, and the most distinct failures it keeps.
inline constexpr std::uint64_t kMaxBudgetRuns = 100'000'000;
inline constexpr std::size_t kMaxFindings = 100;

struct ExploreOptions {
  Mode mode;
  std::uint64_t budget_runs = 1000;  // >= 1
  double budget_seconds = 0;         // wall-clock seconds; 0: no time budget
  std::uint64_t seed_start = 0;
  int jobs = 1;
  // Go through the whole budget, keeping the first run of each distinct failure signature,
  // instead of stopping at the first failure.
  bool all = false;
  // exhaustive: partial-order reduction (reduction.h); off, every schedule within the bound.
  bool reduce = true;
  // Only the budget's runs i with i % shard_count == shard_index (random, pct and swarm; a
  // cluster task's share of one search). Each run is the one the whole search makes at i, so the
  // shards' findings together are the whole search's. 0 <= shard_index < shard_count.
  int shard_index = 0;
  int shard_count = 1;
  const std::atomic<bool>* stop = nullptr;  // set (by a signal handler): no further run starts
};

// What a search's workers ask before each run: whether the time budget still allows one and no
// stop was requested. Once closed it stays closed (so the runs made are a prefix of the order).
class RunGate {
 public:
  explicit RunGate(const ExploreOptions& o);
  bool open();  // thread-safe
  // Why it closed: the stop flag (an interrupt) rather than the clock.
  bool interrupted() const { return stop_ != nullptr && stop_->load(); }

 private:
  const std::atomic<bool>* stop_;
  double budget_seconds_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<bool> closed_{false};
};

// A failing run the search found, with what reproduces it.
struct Finding {
  std::uint64_t run = 0;     // its index in the search
  run::RunOptions options;   // its policy and disarmed faults (record_choices on)
  run::RunRecord record;     // with its tape and process names
  std::string signature;     // failure_signature(record)
};

struct Coverage {
  std::uint64_t runs = 0;                  // runs counted: up to the first failure, or all made
  std::uint64_t distinct_schedules = 0;    // distinct trace hashes among them
  std::array<std::uint64_t, kernel::kChoiceKinds> choices = {};  // choice points they made, by kind
  std::uint64_t steps_hint = 0;            // pct: the fifo probe run's events
  std::uint64_t processes = 0;             // pct: the fifo probe run's processes
  bool stopped_by_time = false;
  bool interrupted = false;
  // exhaustive: whether every tape within the bound was run, and how many prefixes were left.
  bool exhausted = false;
  std::uint64_t pending = 0;
  bool frontier_full = false;  // stopped at kMaxPendingPrefixes (exhaustive.h)
  bool reduced = false;        // with partial-order reduction (reduction.h)
};

struct ExploreResult {
  Coverage coverage;
  std::vector<Finding> findings;  // in run order; at most one per signature
};

// A failure's kind, for telling failures apart: its check, and its diagnosis with every number
// replaced by '#' ("rank #: torn read of /cache/m.om at #.# s (f.yaml:#:#)").
std::string failure_signature(const run::RunRecord& r);

}  // namespace racesim::search
