// Stackless processes (Simulation::spawn_stackless, process.h's Resumable): the same events and
// trace hash as fibers doing the same, kills, teardown, failures, deadlocks and the event limit.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"

namespace racesim::kernel {
namespace {

using namespace time_literals;
using ::testing::HasSubstr;

// A body that runs `rounds` rounds of: sleep `nap`, then arrive at `barrier` (if any). Logs what
// it saw; `on_end` runs when it ends normally.
class Napper final : public Resumable {
 public:
  Napper(Simulation& sim, Barrier* barrier, Time nap, int rounds, std::vector<std::string>* log)
      : sim_(sim), barrier_(barrier), nap_(nap), rounds_(rounds), log_(log) {}
  bool resume(WaitStatus status) override {
    if (log_) log_->push_back(std::string(status == WaitStatus::kKilled ? "killed" : "resumed") + "@" + format_duration(sim_.now()) +
                              (sim_.tearing_down() ? " (teardown)" : ""));
    if (status == WaitStatus::kKilled) {
      if (in_barrier_ && !sim_.tearing_down()) barrier_->wait_ended(status, generation_);
      return false;
    }
    if (in_barrier_) {
      barrier_->wait_ended(status, generation_);
      in_barrier_ = false;
    }
    for (;;) {
      if (phase_ == 0) {
        if (done_ == rounds_) return false;
        phase_ = 1;
        sim_.arm_sleep_until(sim_.deadline_after(nap_));
        return true;
      }
      phase_ = 0;
      ++done_;
      if (barrier_ != nullptr && barrier_->arrive(kTimeMax, generation_)) {
        in_barrier_ = true;
        return true;
      }
    }
  }

 private:
  Simulation& sim_;
  Barrier* barrier_;
  Time nap_;
  int rounds_;
  std::vector<std::string>* log_;
  int phase_ = 0, done_ = 0;
  bool in_barrier_ = false;
  std::uint64_t generation_ = 0;
};

// The same program on a fiber.
void nap_on_fiber(Simulation& sim, Barrier* barrier, Time nap, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    sim.sleep_for(nap);
    if (barrier != nullptr) barrier->arrive_and_wait();
  }
}

// n processes napping (i + 1) * 1 ms each round and meeting at a barrier; the stackless ones
// where `stackless(i)`.
RunResult barrier_run(int n, const std::function<bool(int)>& stackless, std::vector<Time>* ends = nullptr) {
  Simulation sim({.seed = 7});
  Barrier b(sim, "b", static_cast<std::size_t>(n));
  std::vector<Process*> ps;
  for (int i = 0; i < n; ++i) {
    const Time nap = (i + 1) * 1_ms;
    if (stackless(i)) {
      ps.push_back(sim.spawn_stackless("p" + std::to_string(i), std::make_unique<Napper>(sim, &b, nap, 5, nullptr)));
    } else {
      ps.push_back(sim.spawn("p" + std::to_string(i), [&sim, &b, nap] { nap_on_fiber(sim, &b, nap, 5); }));
    }
  }
  RunResult r = sim.run();
  if (ends) {
    for (Process* p : ps) ends->push_back(p->exit_time());
  }
  return r;
}

TEST(StacklessTest, SleepsAndMeetsABarrierWithTheSameEventsAsFibers) {
  std::vector<Time> fiber_ends, stackless_ends, mixed_ends;
  const RunResult fibers = barrier_run(6, [](int) { return false; }, &fiber_ends);
  const RunResult stackless = barrier_run(6, [](int) { return true; }, &stackless_ends);
  const RunResult mixed = barrier_run(6, [](int i) { return i % 2 == 0; }, &mixed_ends);
  EXPECT_EQ(fibers.outcome, RunOutcome::kCompleted);
  // Five rounds, each as long as the slowest nap (6 ms).
  EXPECT_EQ(fibers.end_time, 30_ms);
  EXPECT_EQ(stackless.end_time, 30_ms);
  EXPECT_EQ(stackless.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(stackless.events, fibers.events);
  EXPECT_EQ(stackless.trace_hash, fibers.trace_hash);
  EXPECT_EQ(mixed.trace_hash, fibers.trace_hash);
  EXPECT_EQ(stackless_ends, fiber_ends);
  EXPECT_EQ(mixed_ends, fiber_ends);
  // Not a hash that ignores what ran: another nap gives another.
  EXPECT_NE(barrier_run(5, [](int) { return true; }).trace_hash, fibers.trace_hash);
}

TEST(StacklessTest, AKilledWaiterWithdrawsItsArrivalAndEndsKilled) {
  Simulation sim;
  Barrier b(sim, "b", 3);
  std::vector<std::string> log;
  Process* victim = sim.spawn_stackless("victim", std::make_unique<Napper>(sim, &b, 1_ms, 1, &log));
  sim.spawn_stackless("a", std::make_unique<Napper>(sim, &b, 2_ms, 1, nullptr));
  Process* late = sim.spawn("late", [&] {
    sim.sleep_for(10_ms);
    b.arrive_and_wait();
  });
  sim.spawn("killer", [&] {
    sim.sleep_for(5_ms);
    EXPECT_EQ(b.arrived(), 2u);
    sim.kill(victim, "test");
    sim.yield();
    EXPECT_EQ(b.arrived(), 1u);  // the victim's arrival withdrawn
  });
  const RunResult r = sim.run();
  // `late` arrives as the second of three: nobody opens the barrier.
  EXPECT_EQ(r.outcome, RunOutcome::kDeadlock);
  EXPECT_EQ(victim->exit_kind(), ExitKind::kKilled);
  EXPECT_EQ(victim->exit_time(), 5_ms);
  EXPECT_EQ(victim->kill_cause(), "test");
  EXPECT_EQ(late->state(), ProcessState::kBlocked);
  EXPECT_THAT(log, ::testing::ElementsAre("resumed@0s", "resumed@1ms", "killed@5ms"));
  ASSERT_EQ(r.deadlock.blocked.size(), 2u);
  EXPECT_EQ(r.deadlock.blocked[0].name, "a");
  EXPECT_EQ(r.deadlock.blocked[0].waits_for, "arrive on barrier 'b'");
}

TEST(StacklessTest, AtTeardownTheBodyIsToldAndTheProcessEndsKilled) {
  std::vector<std::string> log;
  Process* p = nullptr;
  {
    Simulation sim;
    p = sim.spawn_stackless("sleeper", std::make_unique<Napper>(sim, nullptr, 1_h, 1, &log));
    EXPECT_EQ(sim.run({.time_limit = 1_s}).outcome, RunOutcome::kTimeLimit);
    EXPECT_EQ(p->state(), ProcessState::kBlocked);
    sim.shutdown();
    EXPECT_EQ(p->exit_kind(), ExitKind::kKilled);
    EXPECT_EQ(sim.live_processes(), 0u);
  }
  EXPECT_THAT(log, ::testing::ElementsAre("resumed@0s", "killed@1s (teardown)"));
}

// A body that does one thing when it starts.
class Once final : public Resumable {
 public:
  explicit Once(std::function<bool()> fn) : fn_(std::move(fn)) {}
  bool resume(WaitStatus status) override {
    if (status == WaitStatus::kKilled || ran_) return false;
    ran_ = true;
    return fn_();
  }

 private:
  std::function<bool()> fn_;
  bool ran_ = false;
};

TEST(StacklessTest, AnExceptionFailsTheRunNamingTheProcess) {
  Simulation sim;
  Process* p = sim.spawn_stackless("thrower", std::make_unique<Once>([]() -> bool { throw std::runtime_error("boom"); }));
  const RunResult r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kError);
  EXPECT_EQ(r.message, "process 'thrower' failed: boom");
  EXPECT_EQ(p->exit_kind(), ExitKind::kFailed);
}

TEST(StacklessTest, AnExceptionAfterArmingAWaitWithdrawsIt) {
  Simulation sim;
  Barrier b(sim, "b", 2);
  Process* p = sim.spawn_stackless("thrower", std::make_unique<Once>([&]() -> bool {
                                     std::uint64_t gen = 0;
                                     EXPECT_TRUE(b.arrive(1_s, gen));
                                     throw std::runtime_error("after arming");
                                   }));
  const RunResult r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kError);
  EXPECT_EQ(r.message, "process 'thrower' failed: after arming");
  EXPECT_EQ(p->exit_kind(), ExitKind::kFailed);
  EXPECT_EQ(p->waiting_in(), nullptr) << "out of the barrier's queue";
  EXPECT_TRUE(p->finished());
}

TEST(StacklessTest, KillingItselfEndsItKilled) {
  Simulation sim;
  Process* self = nullptr;
  self = sim.spawn_stackless("self", std::make_unique<Once>([&]() -> bool {
                               sim.kill(self, "itself");
                               return false;
                             }));
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_EQ(self->exit_kind(), ExitKind::kKilled);
}

TEST(StacklessTest, AJoinerOfAStacklessProcessIsWokenWhenItEnds) {
  Simulation sim;
  Process* p = sim.spawn_stackless("napper", std::make_unique<Napper>(sim, nullptr, 3_ms, 2, nullptr));
  Time joined = -1;
  sim.spawn("joiner", [&] {
    EXPECT_EQ(sim.join(p), JoinStatus::kReturned);
    joined = sim.now();
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_EQ(joined, 6_ms);
}

TEST(StacklessTest, SpendingPastTheEventLimitEndsTheRunThere) {
  Simulation sim;
  int spent = 0;
  sim.spawn_stackless("spender", std::make_unique<Once>([&]() -> bool {
                        for (;;) {
                          ++spent;
                          if (sim.spend(1)) {
                            sim.arm_sleep_until(kTimeMax);
                            return true;
                          }
                        }
                      }));
  const RunResult r = sim.run({.event_limit = 100});
  EXPECT_EQ(r.outcome, RunOutcome::kEventLimit);
  EXPECT_EQ(spent, 99);  // the start event and 99 units of work
  EXPECT_THAT(r.message, HasSubstr("units of work without events reached the event limit"));
}

}  // namespace
}  // namespace racesim::kernel
