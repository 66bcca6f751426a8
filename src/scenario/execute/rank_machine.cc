// A rank run without a stack of its own (see rank_machine.h).
#include "src/scenario/execute/rank_machine.h"

#include <cassert>
#include <utility>

#include "src/scenario/execute/interpreter.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

RankMachine::RankMachine(const StepList& program, RankContext ctx) : ctx_(std::move(ctx)) {
  // (That the program runs stackless is checked once, when it is compiled: CompiledProgram.)
  assert(ctx_.run.live() == nullptr && "a stackless rank REQUIRES a simulated run");
  frames_.push_back({&program, 0, 0});
}

bool RankMachine::resume(kernel::WaitStatus status) {
  kernel::Simulation& sim = ctx_.sim;
  if (status == kernel::WaitStatus::kKilled) {
    // As a fiber's stack unwinds: a crash fault undoes what the wait left behind; at teardown
    // nothing is touched (the run's state may be gone).
    if (waiting_ != nullptr && !sim.tearing_down()) waiting_->abandon(ctx_);
    return false;
  }
  try {
    if (const Step* s = std::exchange(waiting_, nullptr)) s->after_wait(ctx_, status);
    if (run_until_wait()) return true;
  } catch (const StepError& e) {
    fail_rank(e, ctx_);
  }
  // The program ended (as run_rank returns): its daemon helpers die.
  if (!sim.tearing_down()) ctx_.run.program_ended(ctx_.rank);
  return false;
}

bool RankMachine::spend_iteration() {
  if (!ctx_.sim.spend(1)) return false;
  ctx_.sim.arm_sleep_until(kernel::kTimeMax);  // the event limit: the run is ending
  return true;
}

bool RankMachine::run_until_wait() {
  // Bounded: each pass runs a step or ends a list, and loops count against the event limit.
  for (;;) {
    Frame& f = frames_.back();
    if (f.next == f.steps->size()) {
      if (frames_.size() == 1) return false;
      if (f.left == 0) {
        frames_.pop_back();
        continue;
      }
      --f.left;
      f.next = 0;
      if (spend_iteration()) return true;
      continue;
    }
    const Step& s = *(*f.steps)[f.next++];
    if (s.on && !s.on->contains(ctx_.rank)) continue;
    ctx_.sim.set_site(&s);  // the event log names the step a rank was in
    switch (s.stackless()) {
      case Step::Stackless::kNoWait:
        s.run(ctx_);
        break;
      case Step::Stackless::kSplit:
        if (s.arm(ctx_)) {
          waiting_ = &s;
          return true;
        }
        break;
      case Step::Stackless::kLoop: {
        const std::int64_t times = s.loop_times();
        if (times <= 0) break;
        frames_.push_back({s.loop_body(), 0, times - 1});
        if (spend_iteration()) return true;
        break;
      }
      case Step::Stackless::kBlock:
        if (const StepList* body = s.block_body(ctx_); body != nullptr && !body->empty()) {
          frames_.push_back({body, 0, 0});
        }
        break;
      case Step::Stackless::kNo:
        assert(false && "a stackless rank runs only steps that can (runs_stackless)");
        break;
    }
  }
}

}  // namespace racesim::scenario
