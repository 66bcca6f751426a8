#include "sim/kernel/sync.h"

#include <memory>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/kernel/channel.h"

namespace racesim::kernel {
namespace {

using namespace time_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(EventTest, WakesEveryWaiterAndStaysSet) {
  Simulation sim;
  Event ev(sim, "ready");
  std::vector<std::string> log;
  for (int i = 0; i < 3; ++i) {
    sim.spawn("w" + std::to_string(i), [&, i] {
      EXPECT_EQ(ev.wait(), WaitStatus::kOk);
      log.push_back(std::to_string(i) + "@" + format_duration(sim.now()));
    });
  }
  sim.spawn("setter", [&] {
    sim.sleep_for(2_s);
    ev.set();
    EXPECT_EQ(ev.wait(), WaitStatus::kOk);  // already set: no block
    log.push_back("setter@" + format_duration(sim.now()));
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_THAT(log, ElementsAre("setter@2s", "0@2s", "1@2s", "2@2s"));
}

TEST(EventTest, WaitTimesOut) {
  Simulation sim;
  Event ev(sim, "never");
  sim.spawn("w", [&] {
    EXPECT_EQ(ev.wait(300_ms), WaitStatus::kTimeout);
    EXPECT_EQ(sim.now(), 300_ms);
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
}

TEST(LatchTest, ReleasesWhenTheCountReachesZero) {
  Simulation sim;
  Latch latch(sim, "loaded", 3);
  Time released = -1;
  sim.spawn("waiter", [&] {
    latch.wait();
    released = sim.now();
  });
  for (int i = 1; i <= 3; ++i) {
    sim.spawn("r", [&, i] {
      sim.sleep_for(i * 1_s);
      latch.count_down();
    });
  }
  sim.run();
  EXPECT_EQ(released, 3_s);
  EXPECT_EQ(latch.count(), 0u);
}

TEST(BarrierTest, IsReusableAcrossGenerations) {
  Simulation sim;
  Barrier b(sim, "step", 3);
  std::vector<std::string> log;
  for (int i = 0; i < 3; ++i) {
    sim.spawn("p" + std::to_string(i), [&, i] {
      for (int round = 0; round < 2; ++round) {
        sim.sleep_for((i + 1) * 1_s);
        EXPECT_EQ(b.arrive_and_wait(), WaitStatus::kOk);
        log.push_back(std::to_string(i) + ":" + format_duration(sim.now()));
      }
    });
  }
  sim.run();
  // Round one releases at 3s, round two at 3s + 3s.
  EXPECT_THAT(log, ElementsAre("2:3s", "0:3s", "1:3s", "2:6s", "0:6s", "1:6s"));
  EXPECT_EQ(b.generation(), 2u);
}

TEST(BarrierTest, TimeoutWithdrawsTheArrival) {
  Simulation sim;
  Barrier b(sim, "pair", 2);
  std::vector<std::string> log;
  sim.spawn("early", [&] {
    EXPECT_EQ(b.arrive_and_wait(1_s), WaitStatus::kTimeout);
    EXPECT_EQ(b.arrived(), 0u);
    log.push_back("early timed out");
  });
  sim.spawn("late", [&] {
    sim.sleep_for(2_s);
    // Had the early arrival stayed counted, this would complete the barrier.
    EXPECT_EQ(b.arrive_and_wait(1_s), WaitStatus::kTimeout);
    log.push_back("late timed out");
  });
  sim.run();
  EXPECT_THAT(log, ElementsAre("early timed out", "late timed out"));
}

TEST(BarrierTest, AProcessKilledWhileWaitingHasNotArrivedAndIsNamedAsKilled) {
  // p0 arrives and is killed (a crash) at 5 s; p1 and p2 arrive at 10 s. Had p0 stayed counted,
  // the barrier would open without it.
  Simulation sim;
  Barrier b(sim, "world", 3);
  bool passed = false;
  Process* p0 = sim.spawn("rank0", [&] { b.arrive_and_wait(); passed = true; });
  Process* p1 = sim.spawn("rank1", [&] { sim.sleep_for(10_s); b.arrive_and_wait(); passed = true; });
  Process* p2 = sim.spawn("rank2", [&] { sim.sleep_for(10_s); b.arrive_and_wait(); passed = true; });
  b.set_participants({p0, p1, p2});
  sim.schedule_at(5_s, [&] { sim.kill(p0, "crash fault 'c'"); });
  auto r = sim.run();
  ASSERT_EQ(r.outcome, RunOutcome::kDeadlock);
  EXPECT_FALSE(passed);
  EXPECT_EQ(b.arrived(), 2u);
  EXPECT_THAT(r.deadlock.key_line(),
              HasSubstr("arrive on barrier 'world': waiting for rank0 (killed at 5s by crash fault 'c')"));
  EXPECT_EQ(p0->exit_description(), "killed at 5s by crash fault 'c'");
  EXPECT_EQ(p1->exit_description(), "running");
}

TEST(BarrierTest, DeclaredParticipantsNameWhoIsMissing) {
  Simulation sim;
  Barrier b(sim, "world", 3);
  Event never(sim, "never");
  Process* p0 = sim.spawn("rank0", [&] { b.arrive_and_wait(); });
  Process* p1 = sim.spawn("rank1", [&] { b.arrive_and_wait(); });
  Process* p2 = sim.spawn("rank2", [&] { never.wait(); });
  b.set_participants({p0, p1, p2});
  auto r = sim.run();
  ASSERT_EQ(r.outcome, RunOutcome::kDeadlock);
  EXPECT_THAT(r.deadlock.to_string(),
              HasSubstr("rank0: arrive on barrier 'world': waiting for rank2 (blocked in wait on "
                        "event 'never')"));
}

// wake_all is a one-pass form of calling wake() on each waiter in turn: it must push the same
// events in the same order, so every policy sees the same due set and every trace hash is kept.
// Run the same program both ways (queues of 2 and of 7 waiters, one of which timed out and one
// of which was killed before the release) under fifo and random policies, and compare what each
// process saw, when, and the trace hash.
class ReleaseQueue final : public Waitable {
 public:
  std::string describe() const override { return "release queue"; }
  WaitQueue queue{this, "wait"};
};

struct ReleaseOutcome {
  std::vector<std::string> log;
  std::uint64_t hash = 0;
  std::uint64_t events = 0;
};

ReleaseOutcome release_all(bool batched, int waiters, PolicySpec policy) {
  Simulation sim({.seed = 7, .policy = policy});
  ReleaseQueue q;
  ReleaseOutcome out;
  std::vector<Process*> procs;
  for (int i = 0; i < waiters; ++i) {
    procs.push_back(sim.spawn("w" + std::to_string(i), [&, i] {
      // w1 gives up before the release; the others wait for it.
      const Time timeout = i == 1 ? 1_s : kTimeMax;
      const WaitStatus s = sim.wait_on(&q.queue, sim.deadline_after(timeout));
      out.log.push_back("w" + std::to_string(i) + ":" + std::to_string(static_cast<int>(s)) + "@" +
                        format_duration(sim.now()));
    }));
  }
  sim.spawn("releaser", [&] {
    sim.sleep_for(2_s);
    if (waiters > 3) sim.kill(procs[3]);  // leaves the queue mid-way
    out.log.push_back("queued " + std::to_string(q.queue.size()));
    if (batched) {
      sim.wake_all(q.queue, WaitStatus::kClosed);
    } else {
      while (Process* p = q.queue.front()) sim.wake(p, WaitStatus::kClosed);
    }
    out.log.push_back("left " + std::to_string(q.queue.size()));
  });
  const RunResult r = sim.run();
  EXPECT_EQ(r.outcome, RunOutcome::kCompleted);
  out.hash = r.trace_hash;
  out.events = r.events;
  return out;
}

TEST(WakeAllTest, PushesTheEventsWakeWouldInTheSameOrder) {
  for (int waiters : {2, 7}) {
    for (const PolicySpec& policy : {PolicySpec::fifo(), PolicySpec::random(3)}) {
      SCOPED_TRACE("waiters " + std::to_string(waiters) + ", policy " + std::to_string(static_cast<int>(policy.kind)));
      const ReleaseOutcome one_by_one = release_all(false, waiters, policy);
      const ReleaseOutcome batched = release_all(true, waiters, policy);
      EXPECT_EQ(batched.log, one_by_one.log);
      EXPECT_EQ(batched.hash, one_by_one.hash);
      EXPECT_EQ(batched.events, one_by_one.events);
      // Every waiter but the timed-out and the killed one was released, with the status given.
      const std::string closed = ":" + std::to_string(static_cast<int>(WaitStatus::kClosed)) + "@2s";
      int released = 0;
      for (const std::string& line : batched.log) released += line.find(closed) != std::string::npos;
      EXPECT_EQ(released, waiters - 1 - (waiters > 3 ? 1 : 0));
      EXPECT_THAT(batched.log, ::testing::Contains("left 0"));
    }
  }
}

// A barrier whose rounds take no virtual time releases all its waiters at one instant, round
// after round: each release must reuse the due set, not grow it (it once grew by N events a
// round for the whole run: 10,000 processes x 60 rounds held 19 MB of spent events).
TEST(WakeAllTest, ReleasesAtOneInstantDoNotAccumulate) {
  Simulation sim;
  constexpr int kProcs = 200;
  constexpr int kRounds = 500;
  Barrier b(sim, "b", kProcs);
  std::size_t most_pending = 0;
  for (int i = 0; i < kProcs; ++i) {
    sim.spawn("p", [&] {
      for (int k = 0; k < kRounds; ++k) {
        b.arrive_and_wait();
        most_pending = std::max(most_pending, sim.events_pending());
      }
    });
  }
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_EQ(sim.now(), 0);
  EXPECT_EQ(b.generation(), static_cast<std::uint64_t>(kRounds));
  EXPECT_LE(most_pending, static_cast<std::size_t>(kProcs));
  EXPECT_LE(sim.due_capacity(), static_cast<std::size_t>(4 * kProcs));
}

TEST(MutexTest, HandsOffInFifoOrderAndTimesOut) {
  Simulation sim;
  Mutex m(sim, "m");
  std::vector<std::string> log;
  sim.spawn("holder", [&] {
    m.lock();
    sim.sleep_for(5_s);
    m.unlock();
  });
  for (int i = 0; i < 3; ++i) {
    sim.spawn("w" + std::to_string(i), [&, i] {
      sim.sleep_for(1_s);
      const Time timeout = i == 1 ? 2_s : kTimeMax;
      if (m.lock(timeout) == WaitStatus::kTimeout) {
        log.push_back("w1 timeout@" + format_duration(sim.now()));
        return;
      }
      EXPECT_EQ(m.owner(), sim.current());
      log.push_back("w" + std::to_string(i) + "@" + format_duration(sim.now()));
      sim.sleep_for(1_s);
      m.unlock();
    });
  }
  sim.run();
  EXPECT_THAT(log, ElementsAre("w1 timeout@3s", "w0@5s", "w2@6s"));
  EXPECT_EQ(m.owner(), nullptr);
}

// Five waiters queue on a mutex (at distinct instants, so no schedule tie decides their order);
// the order in which they get it is the wake choices'.
std::vector<int> lock_order(Simulation& sim) {
  auto m = std::make_shared<Mutex>(sim, "m");
  auto order = std::make_shared<std::vector<int>>();
  sim.spawn("holder", [&sim, m] {
    m->lock();
    sim.sleep_for(10_s);
    m->unlock();
  });
  for (int i = 0; i < 5; ++i) {
    sim.spawn("w", [&sim, m, order, i] {
      sim.sleep_for(Time(i + 1) * 1_s);
      m->lock();
      order->push_back(i);
      sim.sleep_for(1_s);
      m->unlock();
    });
  }
  sim.run();
  return *order;
}

TEST(MutexTest, WhoGetsAFreedLockIsAWakeChoiceThatReplays) {
  {
    Simulation fifo({.record_choices = true});
    EXPECT_THAT(lock_order(fifo), ElementsAre(0, 1, 2, 3, 4));
    // Four hand-offs with 5, 4, 3 and 2 waiters: each recorded, each taking the first (the
    // other choices are the schedule's: six processes start at 0).
    std::vector<Choice> wakes;
    for (const Choice& c : fifo.tape()) {
      if (c.kind == ChoiceKind::kWake) wakes.push_back(c);
      EXPECT_EQ(c.value, 0u);
    }
    ASSERT_EQ(wakes.size(), 4u);
    EXPECT_EQ(wakes[0].options, 5u);
    EXPECT_EQ(wakes[3].options, 2u);
    EXPECT_EQ(wakes[0].at, 10_s);
  }
  std::set<std::vector<int>> orders;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Simulation rec({.seed = seed, .policy = PolicySpec::random(), .record_choices = true});
    const auto order = lock_order(rec);
    orders.insert(order);
    Simulation rep({.seed = seed + 99, .policy = PolicySpec::replay(rec.tape())});
    EXPECT_EQ(lock_order(rep), order);
    EXPECT_FALSE(rep.replay_diverged()) << rep.replay_divergence();
  }
  EXPECT_GT(orders.size(), 5u);  // random wake order reaches orders fifo never does
}

TEST(MutexTest, TryLockFailsWhenHeld) {
  Simulation sim;
  Mutex m(sim, "m");
  sim.spawn("a", [&] {
    EXPECT_TRUE(m.try_lock());
    sim.sleep_for(1_s);
    m.unlock();
  });
  sim.spawn("b", [&] {
    EXPECT_FALSE(m.try_lock());
    sim.sleep_for(2_s);
    EXPECT_TRUE(m.try_lock());
    m.unlock();
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
}

TEST(SemaphoreTest, LimitsConcurrencyWithFifoHandOff) {
  Simulation sim;
  Semaphore sem(sim, "slots", 2);
  std::vector<std::string> log;
  for (int i = 0; i < 4; ++i) {
    sim.spawn("p" + std::to_string(i), [&, i] {
      sem.acquire();
      log.push_back(std::to_string(i) + "@" + format_duration(sim.now()));
      sim.sleep_for(1_s);
      sem.release();
    });
  }
  sim.run();
  EXPECT_THAT(log, ElementsAre("0@0s", "1@0s", "2@1s", "3@1s"));
  EXPECT_EQ(sem.available(), 2u);
}

TEST(SemaphoreTest, AcquireTimesOutAndReleaseDoesNotLetNewcomersOvertake) {
  Simulation sim;
  Semaphore sem(sim, "s", 0);
  std::vector<std::string> log;
  sim.spawn("timed", [&] {
    EXPECT_EQ(sem.acquire(1_s), WaitStatus::kTimeout);
    log.push_back("timed out");
  });
  sim.spawn("waiter", [&] {
    sim.sleep_for(2_s);
    sem.acquire();
    log.push_back("waiter");
  });
  sim.spawn("releaser", [&] {
    sim.sleep_for(3_s);
    sem.release();
    EXPECT_FALSE(sem.try_acquire());  // the permit went to the waiter
  });
  sim.run();
  EXPECT_THAT(log, ElementsAre("timed out", "waiter"));
}

TEST(RingBufferTest, KeepsFifoOrderAcrossWrapAroundAndGrowth) {
  RingBuffer<std::string> rb;
  int next_in = 0, next_out = 0;
  // Interleave pushes and pops so the head wraps around at several capacities.
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < round % 7 + 1; ++k) rb.push_back(std::to_string(next_in++));
    for (int k = 0; k < round % 5 && !rb.empty(); ++k) {
      ASSERT_EQ(rb.front(), std::to_string(next_out++));
      rb.pop_front();
    }
  }
  while (!rb.empty()) {
    ASSERT_EQ(rb.front(), std::to_string(next_out++));
    rb.pop_front();
  }
  EXPECT_EQ(next_in, next_out);
  EXPECT_EQ(rb.size(), 0u);
}

TEST(ChannelTest, BoundedChannelBlocksSendersAndKeepsOrder) {
  Simulation sim;
  Channel<int> ch(sim, "q", 2);
  std::vector<std::string> log;
  sim.spawn("producer", [&] {
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(ch.send(i), WaitStatus::kOk);
      log.push_back("sent" + std::to_string(i) + "@" + format_duration(sim.now()));
    }
  });
  sim.spawn("consumer", [&] {
    for (int i = 0; i < 5; ++i) {
      sim.sleep_for(1_s);
      int v = -1;
      ASSERT_EQ(ch.recv(v), WaitStatus::kOk);
      EXPECT_EQ(v, i);
    }
  });
  sim.run();
  EXPECT_THAT(log, ElementsAre("sent0@0s", "sent1@0s", "sent2@1s", "sent3@2s", "sent4@3s"));
}

TEST(ChannelTest, RecvTimesOutAndTrySendReportsFull) {
  Simulation sim;
  Channel<std::string> ch(sim, "q", 1);
  sim.spawn("p", [&] {
    std::string v;
    EXPECT_EQ(ch.recv(v, 500_ms), WaitStatus::kTimeout);
    EXPECT_EQ(sim.now(), 500_ms);
    EXPECT_EQ(ch.try_send("a"), WaitStatus::kOk);
    EXPECT_EQ(ch.try_send("b"), WaitStatus::kTimeout);
    EXPECT_EQ(ch.send("c", 1_s), WaitStatus::kTimeout);
    EXPECT_EQ(ch.try_recv(v), WaitStatus::kOk);
    EXPECT_EQ(v, "a");
    EXPECT_EQ(ch.try_recv(v), WaitStatus::kTimeout);
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
}

TEST(ChannelTest, CloseWakesBlockedPeersAndDrainsTheBuffer) {
  Simulation sim;
  Channel<int> full(sim, "full", 1);
  Channel<int> empty(sim, "empty");
  std::vector<std::string> log;
  sim.spawn("blocked_sender", [&] {
    full.send(1);
    EXPECT_EQ(full.send(2), WaitStatus::kClosed);
    log.push_back("sender closed@" + format_duration(sim.now()));
  });
  sim.spawn("blocked_receiver", [&] {
    int v;
    EXPECT_EQ(empty.recv(v), WaitStatus::kClosed);
    log.push_back("receiver closed@" + format_duration(sim.now()));
  });
  sim.spawn("closer", [&] {
    sim.sleep_for(1_s);
    full.close();
    empty.close();
    int v = 0;
    EXPECT_EQ(full.recv(v), WaitStatus::kOk);  // buffered value survives close
    EXPECT_EQ(v, 1);
    EXPECT_EQ(full.recv(v), WaitStatus::kClosed);
    EXPECT_EQ(full.send(3), WaitStatus::kClosed);
  });
  sim.run();
  EXPECT_THAT(log, ElementsAre("sender closed@1s", "receiver closed@1s"));
}

TEST(ChannelTest, KilledReceiverDoesNotSwallowAValue) {
  Simulation sim;
  Channel<int> ch(sim, "q");
  int got = -1;
  Process* victim = sim.spawn("victim", [&] {
    int v;
    ch.recv(v);
    ADD_FAILURE() << "killed receiver resumed";
  });
  sim.spawn("survivor", [&] {
    sim.sleep_for(1_ms);
    ch.recv(got);
  });
  sim.spawn("sender", [&] {
    sim.sleep_for(1_s);
    sim.kill(victim);
    ch.send(42);
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  EXPECT_EQ(got, 42);
}

}  // namespace
}  // namespace racesim::kernel
