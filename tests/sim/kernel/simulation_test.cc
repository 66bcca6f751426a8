#include "sim/kernel/simulation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <set>
#include <thread>
#include <vector>

#include "sim/kernel/channel.h"
#include "sim/kernel/sync.h"

namespace racesim::kernel {
namespace {

using namespace time_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SimulationTest, EqualTimeEventsRunInInsertionOrderUnderFifo) {
  Simulation sim;
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) {
    sim.spawn("p" + std::to_string(i), [&, i] {
      order.push_back(i);
      sim.sleep_for(1_s);  // all wake at t=1s, in the order they slept
      order.push_back(10 + i);
    });
  }
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(r.end_time, 1_s);
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 10, 11, 12, 13));
}

TEST(SimulationTest, TiesAmongManyFutureEventsRunInInsertionOrder) {
  // 2,000 callbacks at 8 distinct times, scheduled in scrambled time order: the event heap
  // leaves ties in no particular order, so this fails unless each due set is put back in
  // insertion order.
  Simulation sim;
  std::vector<std::pair<Time, int>> ran;
  std::uint64_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const Time t = static_cast<Time>(1 + (x >> 40) % 8) * 1_s;
    sim.schedule_at(t, [&ran, &sim, i] { ran.emplace_back(sim.now(), i); });
  }
  const auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  ASSERT_EQ(ran.size(), 2000u);
  EXPECT_TRUE(std::is_sorted(ran.begin(), ran.end())) << "by time, then by insertion";
}

TEST(SimulationTest, TimersBatchedByTimeRunInInsertionOrderAmongTheOtherEventsOfTheirTime) {
  // Pushes of one future time in a row share a batch (one heap entry); a push of another time
  // ends it; a callback is never batched. Here, in insertion order: p0 @1s (alone), p1 @2s,
  // p2 @1s (alone again), p3 @1s (opens a batch), a callback @1s, p4 @1s and p5 @1s (the
  // batch). At 1 s they must run in exactly that order, then again at 3 s (a reused batch).
  Simulation sim;
  std::vector<std::string> order;
  std::size_t pending_at_half = 0;
  sim.schedule_at(500_ms, [&] { pending_at_half = sim.events_pending(); });
  const Time wake[] = {1_s, 2_s, 1_s, 1_s, 1_s, 1_s};
  for (int i = 0; i < 6; ++i) {
    sim.spawn("p" + std::to_string(i), [&, i] {
      if (i == 4) sim.schedule_at(1_s, [&] { order.push_back("cb@" + std::to_string(sim.now() / 1_ms)); });
      sim.sleep_until(wake[i]);
      order.push_back("p" + std::to_string(i) + "@" + std::to_string(sim.now() / 1_ms));
      if (i >= 2) {
        sim.sleep_until(3_s);
        order.push_back("p" + std::to_string(i) + "@" + std::to_string(sim.now() / 1_ms));
      }
    });
  }
  const auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_THAT(order, ElementsAre("p0@1000", "p2@1000", "p3@1000", "cb@1000", "p4@1000", "p5@1000", "p1@2000",
                                 "p2@3000", "p3@3000", "p4@3000", "p5@3000"));
  EXPECT_EQ(pending_at_half, 7u) << "six timers and a callback, batched or not";
  EXPECT_EQ(sim.events_pending(), 0u);
}

TEST(SimulationTest, AShortSleepRunsBeforeEarlierPushedLaterTimersAndEveryEventIsCounted) {
  // The latest future push is held out of the heap until the next pop: here p's 1 s timer is
  // held while q runs, then moved into the heap by q's 2 s timer; r's 10 ms sleep, held and
  // earlier than both, runs first without entering the heap.
  Simulation sim;
  std::vector<std::string> order;
  std::vector<std::size_t> pending;
  sim.spawn("p", [&] {
    sim.sleep_until(1_s);
    order.push_back("p@" + std::to_string(sim.now() / 1_ms));
    pending.push_back(sim.events_pending());
  });
  sim.spawn("q", [&] {
    pending.push_back(sim.events_pending());  // p's timer (held) and r's start
    sim.sleep_until(2_s);
    order.push_back("q@" + std::to_string(sim.now() / 1_ms));
  });
  sim.spawn("r", [&] {
    pending.push_back(sim.events_pending());  // p's timer (in the heap) and q's (held)
    sim.sleep_for(10_ms);
    order.push_back("r@" + std::to_string(sim.now() / 1_ms));
    pending.push_back(sim.events_pending());
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_THAT(order, ElementsAre("r@10", "p@1000", "q@2000"));
  EXPECT_THAT(pending, ElementsAre(2u, 2u, 2u, 1u));
}

// Every rank of a collective waits with a timeout and is released early, round after round:
// the timers left behind must not pile up (they once did: 4,096 ranks x 80 collectives of stale
// timers, a 10 MB heap), and dropping them must change nothing that runs.
TEST(SimulationTest, StaleTimersOfWaitsEndedEarlyAreDroppedWithoutChangingWhatRuns) {
  constexpr int kProcs = 1500;
  constexpr int kRounds = 10;
  Simulation sim;
  Barrier b(sim, "b", kProcs);
  std::size_t most_pending = 0;
  int timeouts = 0;
  std::vector<Time> ends;
  for (int i = 0; i < kProcs; ++i) {
    sim.spawn("p" + std::to_string(i), [&, i] {
      for (int k = 0; k < kRounds; ++k) {
        sim.sleep_for((i % 7 + 1) * 1_ms);  // arrivals spread over time: deadlines differ
        if (b.arrive_and_wait(1_h) == WaitStatus::kTimeout) ++timeouts;
        most_pending = std::max(most_pending, sim.events_pending());
      }
      ends.push_back(sim.now());
    });
  }
  const RunResult r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(timeouts, 0);
  // Each round ends when the slowest arrives (7 ms): the run is over long before any timer.
  EXPECT_EQ(sim.now(), kRounds * 7_ms);
  EXPECT_EQ(ends.size(), static_cast<std::size_t>(kProcs));
  // Pending at a release: a round's resumes and live timers (at most 2 * kProcs) and at most as
  // many stale timers; without the drop, every round's stale timers (over 15,000 here).
  EXPECT_LE(most_pending, static_cast<std::size_t>(4 * kProcs));
  EXPECT_EQ(sim.events_pending(), 0u);
}

// A stale timer past the time limit ends the run there, as it did when it stayed in the heap
// until due; dropping it must not turn the end into a deadlock.
TEST(SimulationTest, DroppedStaleTimersPastTheTimeLimitStillEndTheRunAtTheLimit) {
  for (const bool past_limit : {true, false}) {
    SCOPED_TRACE(past_limit ? "timers past the limit" : "timers before the limit");
    constexpr int kProcs = 1500;
    Simulation sim;
    Event go(sim, "go"), never(sim, "never");
    for (int i = 0; i < kProcs; ++i) {
      sim.spawn("p" + std::to_string(i), [&] {
        EXPECT_EQ(go.wait(past_limit ? 10_s : 2_s), WaitStatus::kOk);
        never.wait();  // no deadline: blocked for good
      });
    }
    sim.spawn("setter", [&] {
      sim.sleep_for(1_s);
      go.set();
    });
    const RunResult r = sim.run({.time_limit = 5_s});
    EXPECT_EQ(sim.events_pending(), 0u) << "the stale timers were dropped";
    if (past_limit) {
      EXPECT_EQ(r.outcome, RunOutcome::kTimeLimit);
      EXPECT_EQ(sim.now(), 5_s);
    } else {
      EXPECT_EQ(r.outcome, RunOutcome::kDeadlock);
      EXPECT_EQ(sim.now(), 1_s);
    }
  }
}

// Waits that start together with one deadline share a batch; when some end early and their
// timers are dropped, the others' must stay, and time out at their deadline in the order the
// waits began.
TEST(SimulationTest, DroppingStaleTimersKeepsTheLiveTimersOfABatchInOrder) {
  constexpr int kProcs = 2048;
  Simulation sim;
  std::vector<std::unique_ptr<Event>> events;
  for (int i = 0; i < kProcs; ++i) events.push_back(std::make_unique<Event>(sim, "e" + std::to_string(i)));
  const auto woken_early = [](int i) { return i % 2 == 0 || i < 300; };
  std::vector<int> timed_out;
  std::vector<Time> timeout_times;
  for (int i = 0; i < kProcs; ++i) {
    sim.spawn("p" + std::to_string(i), [&, i] {
      const WaitStatus st = events[static_cast<std::size_t>(i)]->wait(10_s);
      EXPECT_EQ(st, woken_early(i) ? WaitStatus::kOk : WaitStatus::kTimeout) << i;
      if (st == WaitStatus::kTimeout) {
        timed_out.push_back(i);
        timeout_times.push_back(sim.now());
      }
    });
  }
  std::size_t pending_after = 0;
  sim.spawn("setter", [&] {
    sim.sleep_for(1_s);
    for (int i = kProcs; i-- > 0;) {
      if (woken_early(i)) events[static_cast<std::size_t>(i)]->set();
    }
    sim.sleep_for(1_s);
    pending_after = sim.events_pending();
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  std::vector<int> expected;
  for (int i = 0; i < kProcs; ++i) {
    if (!woken_early(i)) expected.push_back(i);
  }
  EXPECT_EQ(timed_out, expected);
  EXPECT_THAT(timeout_times, ::testing::Each(10_s));
  // The live timers only: the early waits' were dropped.
  EXPECT_EQ(pending_after, expected.size());
}

TEST(SimulationTest, YieldInterleavesProcessesAtTheSameTime) {
  Simulation sim;
  std::vector<char> order;
  for (char c : {'a', 'b'}) {
    sim.spawn(std::string(1, c), [&, c] {
      for (int i = 0; i < 3; ++i) {
        order.push_back(c);
        sim.yield();
      }
    });
  }
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_THAT(order, ElementsAre('a', 'b', 'a', 'b', 'a', 'b'));
  EXPECT_EQ(sim.now(), 0);
}

TEST(SimulationTest, VirtualTimeAdvancesOnlyThroughEvents) {
  Simulation sim;
  std::vector<Time> seen;
  sim.spawn("sleeper", [&] {
    sim.sleep_for(200_ms);
    seen.push_back(sim.now());
    sim.sleep_until(5_s);
    seen.push_back(sim.now());
    sim.sleep_until(1_s);  // in the past: returns at once
    seen.push_back(sim.now());
  });
  auto r = sim.run();
  EXPECT_THAT(seen, ElementsAre(200_ms, 5_s, 5_s));
  EXPECT_EQ(r.end_time, 5_s);
}

TEST(SimulationTest, CallbacksRunAtTheirTimeAndCanBeCancelled) {
  Simulation sim;
  std::vector<std::string> log;
  sim.schedule_at(3_s, [&] { log.push_back("three@" + format_duration(sim.now())); });
  auto h = sim.schedule_at(2_s, [&] { log.push_back("cancelled"); });
  sim.schedule_after(1_s, [&] {
    log.push_back("one");
    sim.spawn("from_callback", [&] {
      log.push_back("spawned@" + format_duration(sim.now()));
      sim.sleep_for(5_s);  // keeps the run alive past the 3s callback
    });
  });
  EXPECT_TRUE(sim.cancel(h));
  EXPECT_FALSE(sim.cancel(h));
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_THAT(log, ElementsAre("one", "spawned@1s", "three@3s"));
}

TEST(SimulationTest, PendingCallbacksDoNotOutliveTheLastProcess) {
  Simulation sim;
  bool late = false;
  sim.schedule_at(10_s, [&] { late = true; });
  sim.spawn("p", [&] { sim.sleep_for(1_s); });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(r.end_time, 1_s);
  EXPECT_FALSE(late);
  // Without any process, callbacks run until the queue is empty.
  Simulation callbacks_only;
  callbacks_only.schedule_at(10_s, [&] { late = true; });
  EXPECT_EQ(callbacks_only.run().end_time, 10_s);
  EXPECT_TRUE(late);
}

TEST(SimulationTest, JoinWaitsAndReportsHowTheProcessEnded) {
  Simulation sim;
  std::vector<std::string> log;
  Process* worker = sim.spawn("worker", [&] { sim.sleep_for(3_s); });
  Process* victim = sim.spawn("victim", [&] { sim.sleep_for(100_s); });
  sim.spawn("boss", [&] {
    EXPECT_EQ(sim.join(worker, 1_s), JoinStatus::kTimeout);
    EXPECT_EQ(sim.now(), 1_s);
    EXPECT_EQ(sim.join(worker), JoinStatus::kReturned);
    EXPECT_EQ(sim.now(), 3_s);
    EXPECT_EQ(sim.join(worker), JoinStatus::kReturned);  // already finished: at once
    sim.kill(victim);
    EXPECT_EQ(sim.join(victim), JoinStatus::kKilled);
    log.push_back("done@" + format_duration(sim.now()));
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_THAT(log, ElementsAre("done@3s"));
  EXPECT_EQ(victim->exit_kind(), ExitKind::kKilled);
}

TEST(SimulationTest, KillWithdrawsPendingWaitsAndUnwindsTheStack) {
  Simulation sim;
  Mutex m(sim, "m");
  bool destructor_ran = false;
  bool victim_got_lock = false;
  std::vector<std::string> log;
  struct Guard {
    bool* flag;
    ~Guard() { *flag = true; }
  };
  sim.spawn("holder", [&] {
    m.lock();
    sim.sleep_for(10_s);
    m.unlock();
  });
  Process* victim = sim.spawn("victim", [&] {
    Guard g{&destructor_ran};
    m.lock(20_s);  // queued behind holder, with a timeout that must not fire after the kill
    victim_got_lock = true;
  });
  sim.spawn("third", [&] {
    sim.sleep_for(1_ms);
    m.lock();
    log.push_back("third got lock@" + format_duration(sim.now()));
    m.unlock();
  });
  sim.schedule_at(5_s, [&] { sim.kill(victim); });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_TRUE(destructor_ran);
  EXPECT_FALSE(victim_got_lock);
  // The killed waiter left the queue, so the unlock at 10s goes to "third".
  EXPECT_THAT(log, ElementsAre("third got lock@10s"));
  EXPECT_EQ(r.end_time, 10_s);  // the victim's 20s timer was withdrawn with it
}

TEST(SimulationTest, KillBeforeStartSkipsTheBodyAndKillSelfThrows) {
  Simulation sim;
  bool ran = false, after_self_kill = false;
  Process* never = sim.spawn("never", [&] { ran = true; });
  sim.kill(never);
  sim.spawn("suicidal", [&] {
    sim.kill(sim.current());
    after_self_kill = true;
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_FALSE(ran);
  EXPECT_FALSE(after_self_kill);
  EXPECT_EQ(never->exit_kind(), ExitKind::kKilled);
}

TEST(SimulationTest, DaemonsDoNotKeepTheRunAliveNorDeadlockIt) {
  Simulation sim;
  Event never(sim, "never");
  int ticks = 0;
  sim.spawn("ticker", [&] {
    for (;;) {
      sim.sleep_for(1_s);
      ++ticks;
    }
  }, {.daemon = true});
  sim.spawn("waiter", [&] { never.wait(); }, {.daemon = true});
  sim.spawn("main", [&] { sim.sleep_for(3500_ms); });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(ticks, 3);
  EXPECT_EQ(r.end_time, 3500_ms);
}

TEST(SimulationTest, TimeLimitEndsTheRunAndTheRunCanContinue) {
  Simulation sim;
  std::vector<Time> seen;
  sim.spawn("p", [&] {
    for (int i = 0; i < 5; ++i) {
      sim.sleep_for(10_s);
      seen.push_back(sim.now());
    }
  });
  auto r = sim.run({.time_limit = 25_s});
  EXPECT_EQ(r.outcome, RunOutcome::kTimeLimit);
  EXPECT_EQ(r.end_time, 25_s);
  EXPECT_THAT(seen, ElementsAre(10_s, 20_s));
  auto r2 = sim.run();
  EXPECT_EQ(r2.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(r2.end_time, 50_s);
  EXPECT_EQ(seen.size(), 5u);
}

// A duration that saturates (a huge compute stretched by a straggler, a draw beyond any limit) is
// kTimeMax: a sleep that long ends the run as a timeout at its limit. It used to be taken as "no
// timeout", and the run ended as a deadlock at 0 s with no known releaser.
TEST(SimulationTest, ASleepBeyondAnyLimitEndsAsATimeoutNotADeadlock) {
  Simulation sim;
  sim.spawn("p", [&] { sim.sleep_for(add_time(100_s, kTimeMax)); });
  sim.spawn("q", [&] { sim.sleep_for(scale_time(2400_h, 1e6)); });
  const auto r = sim.run({.time_limit = 1_h});
  EXPECT_EQ(r.outcome, RunOutcome::kTimeLimit);
  EXPECT_EQ(r.end_time, 1_h);
  // A wait on a queue with kTimeMax has no timeout: nobody releases it, so it is a deadlock.
  Simulation other;
  Event ev(other, "never");
  other.spawn("r", [&] { ev.wait(kTimeMax); });
  EXPECT_EQ(other.run({.time_limit = 1_h}).outcome, RunOutcome::kDeadlock);
}

TEST(SimulationTest, EventLimitStopsARunawayLoop) {
  Simulation sim;
  std::function<void()> again;
  again = [&] { sim.schedule_after(1_ns, again); };  // reschedules itself forever
  sim.schedule_at(0, again);
  auto r = sim.run({.event_limit = 1000});
  EXPECT_EQ(r.outcome, RunOutcome::kEventLimit);
  EXPECT_EQ(r.events, 1000u);
  EXPECT_EQ(r.end_time, 999);
}

TEST(SimulationTest, StopEndsTheRunWithItsReason) {
  Simulation sim;
  sim.spawn("p", [&] {
    sim.sleep_for(1_s);
    sim.stop("enough");
    sim.sleep_for(1_s);
  });
  sim.spawn("q", [&] { sim.sleep_for(100_s); });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kStopped);
  EXPECT_EQ(r.message, "enough");
  EXPECT_EQ(r.end_time, 1_s);
}

TEST(SimulationTest, AnExceptionInAProcessIsAnErrorResultNamingIt) {
  Simulation sim;
  sim.spawn("loader", [&] {
    sim.sleep_for(2_s);
    throw std::runtime_error("truncated model file");
  });
  sim.spawn("other", [&] { sim.sleep_for(10_s); });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kError);
  EXPECT_THAT(r.message, HasSubstr("process 'loader' failed: truncated model file"));
  EXPECT_EQ(r.end_time, 2_s);
}

TEST(SimulationTest, AnExceptionInACallbackIsAnErrorResult) {
  Simulation sim;
  sim.schedule_at(1_s, [] { throw std::runtime_error("boom"); });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kError);
  EXPECT_THAT(r.message, HasSubstr("callback failed: boom"));
}

TEST(SimulationTest, ThreeProcessCycleIsReportedAsADeadlockNamingAllThree) {
  Simulation sim;
  Mutex m1(sim, "m1"), m2(sim, "m2"), m3(sim, "m3");
  auto body = [&](Mutex& mine, Mutex& next) {
    return [&] {
      mine.lock();
      sim.sleep_for(1_s);
      next.lock();
    };
  };
  sim.spawn("A", body(m1, m2));
  sim.spawn("B", body(m2, m3));
  sim.spawn("C", body(m3, m1));
  sim.spawn("bystander", [&] { sim.sleep_for(5_s); });
  auto r = sim.run();
  ASSERT_EQ(r.outcome, RunOutcome::kDeadlock);
  EXPECT_EQ(r.end_time, 5_s);  // detected when nothing is left to happen
  const DeadlockReport& d = r.deadlock;
  ASSERT_EQ(d.blocked.size(), 3u);
  ASSERT_EQ(d.cycles.size(), 1u);
  EXPECT_THAT(d.cycles[0], ElementsAre(0, 1, 2));
  const std::string text = d.to_string();
  EXPECT_THAT(text, HasSubstr("A: lock on mutex 'm2': waiting for B (blocked in lock on mutex 'm3')"));
  EXPECT_THAT(text, HasSubstr("B: lock on mutex 'm3': waiting for C (blocked in lock on mutex 'm1')"));
  EXPECT_THAT(text, HasSubstr("C: lock on mutex 'm1': waiting for A (blocked in lock on mutex 'm2')"));
  EXPECT_THAT(text, HasSubstr("cycle: A -> B -> C -> A"));
}

TEST(SimulationTest, ABlockedProcessWithNoKnownReleaserIsADeadlockWithoutCycle) {
  Simulation sim;
  Event ev(sim, "model_ready");
  sim.spawn("reader", [&] { ev.wait(); });
  auto r = sim.run();
  ASSERT_EQ(r.outcome, RunOutcome::kDeadlock);
  EXPECT_TRUE(r.deadlock.cycles.empty());
  EXPECT_THAT(r.deadlock.to_string(), HasSubstr("reader: wait on event 'model_ready': no known releaser"));
}

TEST(SimulationTest, StaleTimersDoNotMoveTheDeadlockTime) {
  // The waiter's wait with a 100 s timeout ends early, at 3 s; its timer event stays queued but
  // does nothing, so the deadlock is reported at the last real dispatch, not at 100 s.
  Simulation sim;
  Event never(sim, "never");
  Event ev(sim, "early");
  sim.spawn("setter", [&] {
    sim.sleep_for(3_s);
    ev.set();
  });
  sim.spawn("waiter", [&] {
    ev.wait(100_s);   // woken at 3 s; its timer at 100 s is now stale
    never.wait();
  });
  auto r = sim.run();
  ASSERT_EQ(r.outcome, RunOutcome::kDeadlock);
  EXPECT_EQ(r.end_time, 3_s);
  EXPECT_EQ(sim.now(), 3_s);
}

// sleep_until_or_teardown returns true when the sleep ends, false when the simulation tears
// down during it (the caller's code after it runs, its destructors run as it returns, and the
// process ends as killed); a kill while the run goes on unwinds the stack as ever, and so does
// teardown in a plain sleep_until.
TEST(SimulationTest, SleepUntilOrTeardownReturnsFalseAtTeardownOnly) {
  int slept = 0, returned_false = 0, after_unwound_call = 0, destroyed = 0;
  struct Count {
    int* n;
    ~Count() { ++*n; }
  };
  {
    Simulation sim;
    Process* a = sim.spawn("a", [&] {
      Count c{&destroyed};
      if (!sim.sleep_until_or_teardown(100_s)) ++returned_false;
    });
    Process* b = sim.spawn("b", [&] {
      if (sim.sleep_until_or_teardown(1_s)) ++slept;
    });
    Process* c = sim.spawn("c", [&] {
      Count k{&destroyed};
      sim.sleep_until_or_teardown(100_s);
      ++after_unwound_call;
    });
    Process* d = sim.spawn("d", [&] {
      Count k{&destroyed};
      sim.sleep_until(100_s);
      ++after_unwound_call;
    });
    sim.schedule_at(2_s, [&] { sim.kill(c); });
    sim.schedule_at(3_s, [&] { sim.stop("done"); });
    EXPECT_EQ(sim.run().outcome, RunOutcome::kStopped);
    EXPECT_EQ(c->exit_kind(), ExitKind::kKilled);
    EXPECT_EQ(destroyed, 1);  // c's, unwound during the run
    EXPECT_EQ(returned_false, 0);
    sim.shutdown();
    EXPECT_EQ(a->exit_kind(), ExitKind::kKilled);
    EXPECT_EQ(b->exit_kind(), ExitKind::kReturned);
    EXPECT_EQ(d->exit_kind(), ExitKind::kKilled);  // unwound to its entry frame, not failed
  }
  EXPECT_EQ(slept, 1);
  EXPECT_EQ(returned_false, 1);
  EXPECT_EQ(after_unwound_call, 0);
  EXPECT_EQ(destroyed, 3);
  EXPECT_EQ(StackPool::for_this_thread().stats().stacks_in_use, 0u);
}

TEST(SimulationTest, DestroyingASimulationUnwindsBlockedProcesses) {
  int unwound = 0;
  struct Count {
    int* n;
    ~Count() { ++*n; }
  };
  {
    Simulation sim;
    Event never(sim, "never");
    for (int i = 0; i < 10; ++i) {
      sim.spawn("w", [&] {
        Count c{&unwound};
        never.wait();
      });
    }
    EXPECT_EQ(sim.run().outcome, RunOutcome::kDeadlock);
  }
  EXPECT_EQ(unwound, 10);
  EXPECT_EQ(StackPool::for_this_thread().stats().stacks_in_use, 0u);
}

// At teardown a blocked process is unwound to its entry frame in one pass (forced_unwind.h):
// every destructor on the way runs, innermost first, and so does a catch (...) that rethrows; a
// typed handler of ProcessKilled does not (it does when a process is killed during the run).
// Nested frames, a destructor that throws and catches inside, and the process's stack given
// back: a regression crashes or leaks, under the sanitizers too.
TEST(SimulationTest, TeardownUnwindsEveryFrameInOnePass) {
  std::vector<std::string> order;
  struct Note {
    std::vector<std::string>* order;
    std::string what;
    ~Note() {
      try {
        throw std::runtime_error("inside a destructor");
      } catch (const std::exception&) {
        order->push_back(what);
      }
    }
  };
  int typed = 0;
  {
    std::function<void(int)> nest;  // outlives the simulation, whose teardown unwinds its frames
    Simulation sim;
    Event never(sim, "never");
    nest = [&](int depth) {
      Note n{&order, "frame " + std::to_string(depth)};
      if (depth == 3) {
        try {
          never.wait();
        } catch (const ProcessKilled&) {
          ++typed;
          throw;
        } catch (...) {
          order.push_back("catch-all");
          throw;
        }
      } else {
        nest(depth + 1);
      }
    };
    Process* nested = sim.spawn("w", [&] { nest(0); });
    Process* victim = sim.spawn("killed", [&] {
      try {
        never.wait();
      } catch (const ProcessKilled&) {
        ++typed;
        throw;
      }
    });
    sim.schedule_at(1, [&] { sim.kill(victim, "test"); });
    EXPECT_EQ(sim.run().outcome, RunOutcome::kDeadlock);
    EXPECT_EQ(typed, 1);  // the process killed during the run
    EXPECT_TRUE(order.empty());
    sim.shutdown();
    // The unwind ended at the entry frame: the process is killed, not failed by its own
    // catch (...), and nothing was reported.
    EXPECT_EQ(nested->exit_kind(), ExitKind::kKilled);
    EXPECT_EQ(victim->exit_kind(), ExitKind::kKilled);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"catch-all", "frame 3", "frame 2", "frame 1", "frame 0"}));
  EXPECT_EQ(typed, 1);
  EXPECT_EQ(StackPool::for_this_thread().stats().stacks_in_use, 0u);
}

TEST(SimulationTest, APrimitiveMayDieBeforeItsWaitersAreUnwound) {
  // With the full trace on, a resumed waiter records the end of its wait span; it must not read
  // the (destroyed) queue to do so. The sanitizer build turns a regression into a failure.
  Simulation sim({.trace = TraceLevel::kFull});
  auto ev = std::make_unique<Event>(sim, "short-lived");
  bool unwound = false;
  struct Flag {
    bool* f;
    ~Flag() { *f = true; }
  };
  sim.spawn("w", [&] {
    Flag flag{&unwound};
    ev->wait();
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kDeadlock);
  ev.reset();
  sim.shutdown();
  EXPECT_TRUE(unwound);
  EXPECT_EQ(sim.live_processes(), 0u);
}

TEST(SimulationTest, SeveralSimulationsOnOneThreadRunInTurn) {
  Simulation a, b;
  int na = 0, nb = 0;
  a.spawn("a", [&] { a.sleep_for(1_s); ++na; });
  b.spawn("b", [&] { b.sleep_for(2_s); ++nb; });
  EXPECT_EQ(b.run().end_time, 2_s);
  EXPECT_EQ(a.run().end_time, 1_s);
  EXPECT_EQ(na + nb, 2);
}

// A randomized workload: processes draw sleep times from their streams and contend on a
// mutex and a channel; under the random policy equal-time ties are shuffled too.
std::uint64_t randomized_run(std::uint64_t seed, PolicySpec policy = PolicySpec::random()) {
  Simulation sim({.seed = seed, .policy = policy});
  Mutex m(sim, "m");
  Channel<int> ch(sim, "ch", 4);
  for (int i = 0; i < 8; ++i) {
    sim.spawn("w" + std::to_string(i), [&, i] {
      RandomStream rs = sim.stream("worker" + std::to_string(i));
      for (int k = 0; k < 20; ++k) {
        sim.sleep_for(static_cast<Time>(rs.uniform_u64(3)) * 1_ms);
        m.lock();
        sim.trace_record('i', "test", "in", "{\"k\":" + std::to_string(k) + "}");
        m.unlock();
        ch.send(i);
      }
    });
  }
  sim.spawn("sink", [&] {
    int v;
    for (int k = 0; k < 160; ++k) ch.recv(v);
  });
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  return r.trace_hash;
}

TEST(SimulationTest, SameSeedGivesTheSameTraceHashOverAHundredRuns) {
  const std::uint64_t first = randomized_run(1234);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(randomized_run(1234), first) << "run " << i;
}

TEST(SimulationTest, DifferentSeedsGiveDifferentHashes) {
  std::set<std::uint64_t> hashes;
  for (std::uint64_t s = 0; s < 20; ++s) hashes.insert(randomized_run(s));
  EXPECT_EQ(hashes.size(), 20u);
}

TEST(SimulationTest, FourSimulationsOnFourThreadsMatchSequentialRuns) {
  std::vector<std::uint64_t> expected;
  for (std::uint64_t s = 0; s < 4; ++s) expected.push_back(randomized_run(100 + s));
  std::vector<std::uint64_t> got(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Several runs per thread so that the threads really overlap.
      std::uint64_t h = 0;
      for (int k = 0; k < 10; ++k) h = randomized_run(100 + t);
      got[t] = h;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(got, expected);
}

// Five processes that interleave by yields and make model choices (some of which sleep).
void spawn_choosers(Simulation& sim, std::vector<int>& order) {
  for (int i = 0; i < 5; ++i) {
    sim.spawn("p", [&sim, &order, i] {
      for (int k = 0; k < 5; ++k) {
        order.push_back(i);
        sim.yield();
        if (sim.choose(3) == 0) sim.sleep_for(1_ms);
      }
    });
  }
}

TEST(SimulationTest, ReplayOfARandomRunReproducesItsTraceHash) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    Simulation rec({.seed = seed, .policy = PolicySpec::random(), .record_choices = true});
    std::vector<int> order_rec;
    spawn_choosers(rec, order_rec);
    const auto r1 = rec.run();
    ASSERT_FALSE(rec.tape().empty());
    // Replay with a different run seed: the choices alone must fix the schedule.
    Simulation rep({.seed = seed + 1000, .policy = PolicySpec::replay(rec.tape())});
    std::vector<int> order_rep;
    spawn_choosers(rep, order_rep);
    const auto r2 = rep.run();
    EXPECT_EQ(r2.trace_hash, r1.trace_hash);
    EXPECT_EQ(order_rep, order_rec);
    EXPECT_FALSE(rep.replay_diverged());
    // And a different schedule (another random seed) gives another hash: the check can fail.
    Simulation other({.seed = seed + 7, .policy = PolicySpec::random()});
    std::vector<int> order_other;
    spawn_choosers(other, order_other);
    EXPECT_NE(other.run().trace_hash, r1.trace_hash);
  }
}

// A tape recorded where the policy did not decide (fifo, or a kind left out as swarm does) takes
// the first option each time; its replay must take it the same way, or the due sets after it
// differ and so does the run.
TEST(SimulationTest, ReplayOfATapeRecordedWithoutDecidingReproducesItsTraceHash) {
  PolicySpec wake_only = PolicySpec::random(3);
  wake_only.kinds = static_cast<ChoiceKinds>(1u << static_cast<unsigned>(ChoiceKind::kModel));
  for (const PolicySpec& spec : {PolicySpec::fifo(), wake_only}) {
    Simulation rec({.seed = 5, .policy = spec, .record_choices = true});
    std::vector<int> order_rec;
    spawn_choosers(rec, order_rec);
    const auto r1 = rec.run();
    ASSERT_GT(rec.tape().size(), 10u);
    Simulation rep({.seed = 5, .policy = PolicySpec::replay(rec.tape())});
    std::vector<int> order_rep;
    spawn_choosers(rep, order_rep);
    EXPECT_EQ(rep.run().trace_hash, r1.trace_hash) << spec.to_string();
    EXPECT_EQ(order_rep, order_rec);
    EXPECT_FALSE(rep.replay_diverged()) << rep.replay_divergence();
  }
}

// In sticky order the process that ran last is option 0 while it is due: with every choice at 0
// a yielding process runs to its end before the next starts, and a tape recorded so replays.
TEST(SimulationTest, StickyOrderLetsTheLastProcessGoOnAndReplays) {
  auto spawn_yielders = [](Simulation& sim, std::vector<int>& order) {
    for (int i = 0; i < 3; ++i) {
      sim.spawn("p", [&sim, &order, i] {
        for (int k = 0; k < 3; ++k) {
          order.push_back(i);
          sim.yield();
        }
      });
    }
  };
  PolicySpec sticky = PolicySpec::prefix({});
  sticky.sticky = true;
  Simulation rec({.policy = sticky, .record_choices = true});
  std::vector<int> order;
  spawn_yielders(rec, order);
  const auto r1 = rec.run();
  EXPECT_EQ(order, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  // One preemption: the second choice taken off option 0.
  std::vector<Choice> tape = rec.tape();
  ASSERT_GT(tape.size(), 2u);
  for (const Choice& c : tape) EXPECT_EQ(c.value, 0u);
  tape[1].value = 1;
  PolicySpec preempt = PolicySpec::prefix(tape);
  preempt.sticky = true;
  Simulation pre({.policy = preempt, .record_choices = true});
  std::vector<int> order2;
  spawn_yielders(pre, order2);
  const auto r2 = pre.run();
  EXPECT_NE(order2, order);
  PolicySpec again = PolicySpec::replay(pre.tape());
  again.sticky = true;
  Simulation rep({.policy = again});
  std::vector<int> order3;
  spawn_yielders(rep, order3);
  EXPECT_EQ(rep.run().trace_hash, r2.trace_hash);
  EXPECT_EQ(order3, order2);
  EXPECT_FALSE(rep.replay_diverged()) << rep.replay_divergence();
  EXPECT_NE(r1.trace_hash, r2.trace_hash);
}

TEST(SimulationTest, AHundredThousandProcessesFit) {
#if defined(RACESIM_SANITIZE)
  const int n = 10000;  // sanitizer stacks are 8x larger and every frame is padded
#else
  const int n = 100000;
#endif
  Simulation sim;
  Barrier b(sim, "all", n);
  int done = 0;
  for (int i = 0; i < n; ++i) {
    sim.spawn("p", [&] {
      sim.sleep_for(1_s);
      b.arrive_and_wait();
      ++done;
    });
  }
  auto r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  EXPECT_EQ(done, n);
  EXPECT_EQ(r.end_time, 1_s);
}

}  // namespace
}  // namespace racesim::kernel
