// A compiled step of the step language, what it sees when it runs (RankContext), and the error a
// failed operation raises (StepError). Steps are built by their primitive's compile function
// (registry.h) and run by the interpreter (interpreter.h).
#pragma once

#include <cstdint>
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
  // A stackless rank (execute/rank_machine.h) has nothing to unwind and leaves it false.
  bool top_level = false;
  // What a stackless step's arm() leaves for its after_wait() or abandon() (Step::Stackless): the
  // object it waits on and a number (a barrier's generation, a collective's sequence number).
  void* wait_object = nullptr;
  std::uint64_t wait_value = 0;
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

  // ---- Stackless ranks (execute/rank_machine.h) ----
  // How this step runs on a rank without a stack of its own, a state machine the kernel resumes
  // (kernel::Resumable). kNo: it may block anywhere, so only run() on a fiber runs it. kNoWait:
  // run() never blocks. kSplit: run() blocks at most once, and arm(), after_wait() and abandon()
  // do what it does around that wait. kLoop: a container that runs loop_body() loop_times()
  // times, each time counted against the event limit (repeat). kBlock: a container that runs
  // one list once, block_body() (a slot, a use, an unrolled for_each, an if whose condition
  // never blocks). A container runs stackless when every list it may run (bodies()) does.
  enum class Stackless : std::uint8_t { kNo, kNoWait, kSplit, kLoop, kBlock };
  virtual Stackless stackless() const { return Stackless::kNo; }
  // kSplit: what run() does up to its wait, and the wait armed (kernel::Simulation::arm_wait):
  // true; or the whole step when it need not wait: false. May throw StepError as run() does.
  virtual bool arm(RankContext& ctx) const {
    (void)ctx;
    return false;
  }
  // kSplit: what run() does once the wait arm() armed ended with `status` (kOk, kClosed or
  // kTimeout). May throw StepError as run() does.
  virtual void after_wait(RankContext& ctx, kernel::WaitStatus status) const {
    (void)ctx;
    (void)status;
  }
  // kSplit: the rank was killed in the wait arm() armed, while the run goes on (a crash
  // fault): what run()'s unwinding undoes (an arrival at a barrier). Not called at teardown.
  virtual void abandon(RankContext& ctx) const { (void)ctx; }
  // kLoop: the steps it repeats (a StepList, below) and how many times.
  virtual const std::vector<std::unique_ptr<Step>>* loop_body() const { return nullptr; }
  virtual std::int64_t loop_times() const { return 0; }
  // kBlock: the list to run now (an if's branch, decided now).
  virtual const std::vector<std::unique_ptr<Step>>* block_body(RankContext& ctx) const {
    (void)ctx;
    return nullptr;
  }
  // kLoop and kBlock: every list it may run.
  virtual std::vector<const std::vector<std::unique_ptr<Step>>*> bodies() const { return {}; }
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
// Whether every step of `steps` can run on a stackless rank (Step::Stackless), the bodies of its
// loops included.
bool runs_stackless(const StepList& steps);

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
