// A rank run without a stack of its own: the interpreter (interpreter.h) as a state machine the
// kernel resumes (kernel::Resumable), for a program whose every step can run so
// (Step::Stackless, runs_stackless): computing, sleeping, barriers, collectives, counters, marks
// and locals, and the loops, slots, uses and ifs around them.
//
// It runs the same steps in the same order, with the same kernel calls, as run_rank on a fiber,
// so a run's events and trace hash do not depend on which of the two runs a rank. What changes
// is memory: a fiber touches at least a 4 KiB page of its stack, while a stackless rank holds
// its process record, this machine and its model state, about 1 KiB (bench/README.md, "Memory
// per rank"), which is what lets a million ranks fit.
#pragma once

#include <cstdint>

#include <boost/container/small_vector.hpp>

#include "src/scenario/compile/step.h"

namespace racesim::scenario {

class RankMachine final : public kernel::Resumable {
 public:
  // Runs `program` (REQUIRES: runs_stackless(program), and a simulated run, not a live one) as
  // ctx.rank; like the body run_rank is called from, it tells the run when the program ended
  // (RunState::program_ended) unless the simulation tears down. `program` outlives the run.
  RankMachine(const StepList& program, RankContext ctx);
  bool resume(kernel::WaitStatus status) override;

 private:
  // A list of steps in progress: the program's, a block's, or a loop's body with `left` more
  // times to run (0 for the others).
  struct Frame {
    const StepList* steps;
    std::uint32_t next;  // the index of the step to run next
    std::int64_t left;
  };
  // Runs steps until one arms a wait (true) or the program ends (false).
  bool run_until_wait();
  // Starts the next run of a loop's body, counted against the event limit as RepeatStep counts
  // it: true when that reached the limit, and this rank sleeps beyond any limit.
  bool spend_iteration();

  RankContext ctx_;
  boost::container::small_vector<Frame, 2> frames_;
  const Step* waiting_ = nullptr;  // the kSplit step whose wait is armed
};

}  // namespace racesim::scenario
