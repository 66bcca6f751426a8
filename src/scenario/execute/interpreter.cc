// The interpreter (see interpreter.h).
#include "src/scenario/execute/interpreter.h"

#include <string>

#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

namespace {

// A step in a full trace: a slice named for what it does, closed when it returns, throws, or its
// rank is killed (the unwinding at its death closes it then). Out of line: run_steps stays small.
[[gnu::noinline]] void run_traced(const Step& s, RankContext& ctx) {
  const std::string what = s.describe(ctx);
  const std::string name = what.empty() ? std::string(s.primitive) : std::string(s.primitive) + " " + what;
  const std::string args = "{\"at\":\"" + kernel::json_escape(where_text(s.where)) + "\"}";
  struct Close {
    RankContext& ctx;
    const std::string& name;
    std::string args;  // set when the step returned
    ~Close() { ctx.sim.trace_timeline('E', "step", name, args); }
  } close{ctx, name, {}};
  ctx.sim.trace_timeline('B', "step", name, args);
  s.run(ctx);
  close.args = s.trace_end_args(ctx);
}

template <bool kProgram>
void run_list(const StepList& steps, RankContext& ctx) {
  const bool full = ctx.sim.trace().full();
  for (const auto& s : steps) {
    if (s->on && !s->on->contains(ctx.rank)) continue;
    ctx.sim.set_site(s.get());  // the event log names the step a rank was in
    if (full && !s->container()) {
      // Not top level: its slice closes after it returns, so it is unwound at teardown.
      ctx.top_level = false;
      run_traced(*s, ctx);
    } else {
      ctx.top_level = kProgram;
      s->run(ctx);
      if constexpr (kProgram) {
        if (ctx.sim.tearing_down()) return;
      }
    }
  }
}

}  // namespace

void run_steps(const StepList& steps, RankContext& ctx) { run_list<false>(steps, ctx); }

void run_program(const StepList& steps, RankContext& ctx) { run_list<true>(steps, ctx); }

void fail_rank(const StepError& e, RankContext& ctx) {
  // An error the program did not catch ends its process. Under a group restart policy that is a
  // failure the agent restarts the group for, while it has restarts left (a check that is off
  // is the harness's to ignore, as without one).
  if (ctx.run.check_on(e.check)) {
    switch (ctx.run.group_failure(ctx.rank, ctx.sim.current(), e.diagnosis)) {
      case RunState::GroupOutcome::kRestarting:
        return;
      case RunState::GroupOutcome::kExhausted:
        ctx.run.fail(e.check, e.diagnosis + " (after " + std::to_string(ctx.run.group_restarts()) +
                                  " group restarts, platform.elastic.max_restarts)");
        return;
      case RunState::GroupOutcome::kNoPolicy:
        break;
    }
  }
  ctx.run.fail(e.check, e.diagnosis);
}

}  // namespace racesim::scenario
