// A compiled step of the step language, what it sees when it runs (RankContext), and the error a
// failed operation raises (StepError). Steps are built by their primitive's compile function
// (registry.h) and run by the interpreter (interpreter.h).
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/kernel/random.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/time.h"
#include "src/scenario/compile/footprint.h"
#include "src/scenario/file/diagnostics.h"
#include "src/scenario/language/rank_selector.h"

namespace racesim::scenario {

class RunState;

// What a step sees when it runs: its rank, the run, the rank's own random stream and its local
// variables.
struct RankContext {
  kernel::Simulation& sim;
  RunState& run;
  int rank;
  int world;
  kernel::RandomStream rng;
  // The program's local variables (`let`), by the slot the compiler gave each: numbers in base
  // units, and the texts a listing's names are held in. Sized when the rank starts
  // (CompiledProgram::local_numbers and local_texts); a spawned process starts with a copy.
  std::vector<double> locals = {};
  std::vector<std::string> text_locals = {};
  // A local's slot for a step that gives it a value (`let`, a listing's loop): the slots in use
  // are known only once every `let` is compiled, so the vectors grow on first use.
  double& local(int slot) { return grown(locals, slot); }
  std::string& text_local(int slot) { return grown(text_locals, slot); }

 private:
  template <typename T>
  static T& grown(std::vector<T>& v, int slot) {
    const auto i = static_cast<std::size_t>(slot);
    if (i >= v.size()) v.resize(i + 1);
    return v[i];
  }

 public:
  // True while one of the program's own steps runs (run_program sets it, run_steps clears it for
  // the steps nested in one): nothing is above that step but run_rank and the process body, so
  // it may return at teardown (Simulation::sleep_until_or_teardown) instead of being unwound.
  bool top_level = false;
};

// Thrown by a step whose operation failed (an I/O error, a lock that cannot be taken): a
// `try` step catches it; otherwise the rank stops and the run fails with this check.
struct StepError {
  std::string check;
  std::string diagnosis;
};

class Step {
 public:
  virtual ~Step() = default;
  // REQUIRES: called from the rank's simulated process.
  virtual void run(RankContext& ctx) const = 0;
  // What a full trace names its slice after the primitive ("/ckpt/step3/model.pt", "all_reduce
  // on world, 1 MiB"); "" for the primitive alone.
  virtual std::string describe(const RankContext& ctx) const {
    (void)ctx;
    return "";
  }
  // What a full trace adds to its slice once the step has returned (a JSON object, "" for
  // nothing): a collective's sequence number, known only when it has run.
  virtual std::string trace_end_args(const RankContext& ctx) const {
    (void)ctx;
    return "";
  }
  // True for a step that only runs other steps (if, repeat, a slot, use, for_each): no slice of
  // its own, its steps have theirs.
  virtual bool container() const { return false; }
  // Why this step has no live meaning with its arguments although its primitive has one
  // (PrimitiveInfo::live), as a live run's error says it; "" when it has one. A collective is
  // live as a barrier only.
  virtual std::string live_refusal() const { return ""; }
  Location where;
  std::optional<RankSelector> on;
  const char* primitive = "";  // its primitive's name (the registry's, which outlives programs)
  Footprint touches;           // what it may share with other ranks' steps (footprint.h)
};
using StepList = std::vector<std::unique_ptr<Step>>;

// A sampled duration (ns) as a Time: negative is 0, beyond kTimeMax is kTimeMax.
using kernel::to_time;
// A time as diagnoses print it: "41.3 s".
inline std::string seconds_text(kernel::Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", kernel::to_seconds(t));
  return buf;
}

// Raises the error a failed operation at `where` reports: "rank R: WHAT at T (FILE:LINE:COL)".
[[noreturn]] inline void raise_step_error(const RankContext& ctx, const Location& where, const std::string& check,
                                          const std::string& what) {
  throw StepError{check, "rank " + std::to_string(ctx.rank) + ": " + what + " at " + seconds_text(ctx.sim.now()) +
                             " (" + where_text(where) + ")"};
}
// The same for a step.
[[noreturn]] inline void raise_step_error(const RankContext& ctx, const Step& step, const std::string& check,
                                          const std::string& what) {
  raise_step_error(ctx, step.where, check, what);
}

}  // namespace racesim::scenario
