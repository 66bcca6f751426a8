// A node's cores under CFS and EEVDF (sim/host/cpu_scheduler.h) against closed forms: processor
// sharing of equal jobs, the mean response time of an M/M/c queue (Erlang C), the wake-up
// latency of a slice and a sleeper's credit (CFS), EEVDF's turns at the tick and a woken task's
// lag, a killed process giving its core back; and with a run queue per core, the job that has a
// core to itself and the balancing that turns it around, an ended process's load leaving its
// core, with their choices on the tape.
#include "sim/host/cpu_scheduler.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/random.h"
#include "sim/kernel/simulation.h"

namespace racesim::host {
namespace {

using kernel::kMillisecond;
using kernel::kSecond;
using kernel::Time;

CpuConfig cores(int n, CpuPolicy policy = CpuPolicy::kCfs) {
  CpuConfig c;
  c.cores = n;
  c.policy = policy;
  return c;
}

CpuConfig per_core(int n, Time balance_interval = 0, CpuPolicy policy = CpuPolicy::kCfs) {
  CpuConfig c = cores(n, policy);
  c.per_core = true;
  c.balance_interval = balance_interval;
  return c;
}

// n jobs of `work` on `config`'s cores, all runnable at 0: when each finished, sorted.
std::vector<Time> finish_times(const CpuConfig& config, int n, Time work, CpuStats* stats = nullptr,
                               kernel::SimulationOptions options = {}) {
  kernel::Simulation sim(options);
  CpuScheduler cpu(sim, "node 0", config);
  std::vector<Time> done(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    sim.spawn("job" + std::to_string(i), [&, i] {
      cpu.run(work);
      done[static_cast<std::size_t>(i)] = sim.now();
    });
  }
  EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  if (stats != nullptr) *stats = cpu.stats();
  std::sort(done.begin(), done.end());
  return done;
}

TEST(CpuSchedulerTest, DefaultsScaleAsLinuxDoesWithTheCoreCount) {
  const CpuConfig one = cores(1).with_defaults(), four = cores(4).with_defaults(), many = cores(192).with_defaults();
  EXPECT_EQ(one.latency, 6 * kMillisecond);
  EXPECT_EQ(four.latency, 18 * kMillisecond);
  EXPECT_EQ(many.latency, 24 * kMillisecond) << "the factor stops at 8 CPUs";
  EXPECT_EQ(many.min_granularity, 3 * kMillisecond);
  EXPECT_EQ(many.wakeup_granularity, 4 * kMillisecond);
  EXPECT_EQ(four.balance_interval, 256 * kMillisecond) << "64 ms per CPU of the domain";
}

// n equal jobs of W on c cores, all runnable at 0: processor sharing gives each c/n of a core,
// so all finish at n/c * W (within 5%: the last slices round it); with n <= c each takes W.
// Per-core queues give the same when the jobs divide evenly among the cores (each core's queue
// is then a processor-sharing queue of n/c jobs).
TEST(CpuSchedulerTest, EqualJobsShareTheCoresAsProcessorSharingSays) {
  for (const CpuPolicy policy : {CpuPolicy::kCfs, CpuPolicy::kEevdf}) {
  for (const auto& [n, c, queues] : std::vector<std::tuple<int, int, bool>>{
           {2, 4, false}, {8, 4, false}, {8, 8, false}, {12, 8, false}, {16, 4, false}, {3, 2, false},
           {2, 4, true}, {8, 4, true}, {16, 4, true}, {8, 8, true}}) {
    SCOPED_TRACE(std::to_string(n) + " jobs on " + std::to_string(c) + " cores" + (queues ? ", a queue per core" : "") +
                 (policy == CpuPolicy::kEevdf ? ", EEVDF" : ", CFS"));
    const Time work = 2 * kSecond;
    CpuStats stats;
    const std::vector<Time> done = finish_times(queues ? per_core(c, 0, policy) : cores(c, policy), n, work, &stats);
    const double expect = kernel::to_seconds(work) * std::max(1.0, static_cast<double>(n) / c);
    double sum = 0, last = 0;
    for (Time t : done) {
      sum += kernel::to_seconds(t);
      last = std::max(last, kernel::to_seconds(t));
    }
    EXPECT_NEAR(last, expect, 0.05 * expect);
    EXPECT_NEAR(sum / n, expect, 0.05 * expect);
    EXPECT_EQ(stats.busy, work * n) << "every job got all its time, no more";
  }
  }
}

// Three jobs of 2 s on two cores, a queue per core and no balancing within the run: one core's
// queue has one of them, which finishes at 2 s while the other two share a core (1 s each by
// then); the idle core pulls one of them at once (new-idle balancing), and both finish at 3 s.
// One shared queue gives each 2/3 of a core: all done at 3 s.
TEST(CpuSchedulerTest, AQueuePerCoreLeavesOneOfThreeJobsACoreToItself) {
  const Time work = 2 * kSecond;
  CpuStats stats;
  const std::vector<Time> apart = finish_times(per_core(2, kernel::kHour), 3, work, &stats);
  EXPECT_EQ(apart[0], 2 * kSecond);
  EXPECT_NEAR(kernel::to_seconds(apart[1]), 3, 0.01);
  EXPECT_NEAR(kernel::to_seconds(apart[2]), 3, 0.01);
  EXPECT_EQ(stats.migrations, 1u) << "the new-idle pull at 2 s";
  const std::vector<Time> shared = finish_times(cores(2), 3, work);
  for (Time t : shared) EXPECT_NEAR(kernel::to_seconds(t), 3, 0.05 * 3);
}

// The balancing turns around which job has a core to itself once per balance_interval (an
// imbalance of one moves at every second tick of interval/2): while all three run, one move
// per interval, then the new-idle pull when the first is done. So the first no longer finishes
// at the 2 s or 20 s of a job that kept a core, and the moves count the intervals. That holds
// while a job left alone on a core by a move (its utilisation about 1/2 from sharing one) is
// fully busy again by the next tick: here a half-life of an eighth of the interval (tick = 4
// half-lives: 0.97; with Linux's 32 ms and an interval of 100 ms, a tick of 1.56 half-lives,
// it would be 0.83, below 1/1.17, and the move could wait a tick longer).
TEST(CpuSchedulerTest, BalancingTurnsAroundWhichJobHasACoreToItself) {
  for (const auto& [work, interval] : std::vector<std::pair<Time, Time>>{{2 * kSecond, 100 * kMillisecond},
                                                                          {20 * kSecond, kSecond},
                                                                          {60 * kSecond, 100 * kMillisecond}}) {
    SCOPED_TRACE(std::to_string(kernel::to_seconds(work)) + " s jobs, interval " + std::to_string(kernel::to_seconds(interval)));
    CpuStats stats;
    CpuConfig config = per_core(2, interval);
    config.load_half_life = interval / 8;
    const std::vector<Time> done = finish_times(config, 3, work, &stats);
    EXPECT_GT(done[0], work + interval) << "the first shared a core after the first move";
    EXPECT_EQ(stats.migrations, static_cast<std::uint64_t>(done[0] / interval) + 1);
    EXPECT_GE(done[2], work * 3 / 2) << "no core idles while work waits: the last is done no sooner than 6/2";
  }
}

// Load tracking: three jobs that slept since the run began (their load and utilisation have
// decayed to nothing) wake at t0 on two cores; one core's queue gets one of them. That core runs
// work new and light: it has spare capacity until its job's utilisation, 1 - 2^(-t / half-life)
// running alone, passes 1/1.17, at 2.78 half-lives, and a busy core with spare capacity takes
// no work. So with a half-life of 100 ms and 250 ms jobs nothing moves until the lone job is done
// at 250 ms; the idle core then pulls one of the two that shared a core (250 ms done between
// them), and each runs its rest alone: together they finish at 750 ms after t0. With loads that follow the work at once (a half-life of 1 us) the
// balancing moves at its second tick, as it does by counting tasks.
TEST(CpuSchedulerTest, ACoreRunningNewLightWorkKeepsItToItself) {
  const Time t0 = 100 * kernel::kHour;
  const auto run = [&](Time half_life, Time work, CpuStats* stats) {
    CpuConfig config = per_core(2, 20 * kMillisecond);
    config.load_half_life = half_life;
    kernel::Simulation sim;
    CpuScheduler cpu(sim, "node 0", config);
    std::vector<Time> done(3, 0);
    for (int i = 0; i < 3; ++i) {
      sim.spawn("job" + std::to_string(i), [&, i] {
        sim.sleep_until(t0);
        cpu.run(work);
        done[static_cast<std::size_t>(i)] = sim.now() - t0;
      });
    }
    EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    *stats = cpu.stats();
    std::sort(done.begin(), done.end());
    return done;
  };
  CpuStats stats;
  const std::vector<Time> light = run(100 * kMillisecond, 250 * kMillisecond, &stats);
  EXPECT_EQ(light[0], 250 * kMillisecond) << "the lone job kept its core";
  EXPECT_EQ(light[1] + light[2], 750 * kMillisecond) << "the other two had 250 ms by then, 250 ms to go";
  EXPECT_LE(light[2] - light[1], 12 * kMillisecond) << "they shared their core fairly, within a slice";
  EXPECT_EQ(stats.migrations, 1u) << "only the new-idle pull at 250 ms";
  const std::vector<Time> counted = run(kernel::kMicrosecond, 250 * kMillisecond, &stats);
  EXPECT_GT(counted[0], 250 * kMillisecond) << "the lone job shared its core after the first move at 20 ms";
  EXPECT_GT(stats.migrations, 1u);
}

// The same three jobs of 2 s: the lone job's utilisation passes 1/1.17 at 278 ms (2.78 half-
// lives of 100 ms), so its core is fully busy at the balancing of 280 ms. The busiest core has
// twice its load (both its jobs runnable since t0), and the imbalance, half the difference, is
// half of one job's load: a job moves at the next balancing (290 ms), when its load counts half
// for the one that moved nothing.
TEST(CpuSchedulerTest, BalancingWaitsForALoneJobsUtilisationToGrow) {
  const Time t0 = 100 * kernel::kHour;
  CpuConfig config = per_core(2, 20 * kMillisecond);
  config.load_half_life = 100 * kMillisecond;
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", config);
  for (int i = 0; i < 3; ++i) {
    sim.spawn("job" + std::to_string(i), [&] {
      sim.sleep_until(t0);
      cpu.run(2 * kSecond);
    });
  }
  std::vector<std::uint64_t> moves;
  for (Time at : {275 * kMillisecond, 285 * kMillisecond, 295 * kMillisecond}) {
    sim.schedule_at(t0 + at, [&] { moves.push_back(cpu.stats().migrations); });
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(moves, (std::vector<std::uint64_t>{0, 0, 1}));
}

// An ended process's load and utilisation leave its core at once (Linux: task_dead_fair), where
// a sleeper's stay, decaying. E runs 2 s alone on core 0 and ends (its utilisation 1 then);
// three jobs, each of which last ran on core 1 (1 us each while E held core 0) and slept since,
// wake at t0 = 2.01 s: the first takes core 1, the second the idle core 0, the third queues on
// core 1. Core 0 runs new light work, its utilisation that of its job alone, so it has spare
// capacity until 2.78 half-lives (278 ms of 100 ms) and takes nothing; the balancing of 280 ms
// finds half a job's load to move and moves nothing, the one of 290 ms moves a job (its load
// counted half), as in BalancingWaitsForALoneJobsUtilisationToGrow. Were E's utilisation still
// on core 0 it would be fully busy from t0, and a job would move once core 1's load has grown
// past it (before 275 ms).
TEST(CpuSchedulerTest, AnEndedProcessesLoadLeavesItsCoreAtOnce) {
  const Time t0 = 2 * kSecond + 10 * kMillisecond;
  CpuConfig config = per_core(2, 20 * kMillisecond);
  config.load_half_life = 100 * kMillisecond;
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", config);
  kernel::Process* ended = sim.spawn("E", [&] { cpu.run(2 * kSecond); });
  for (int i = 0; i < 3; ++i) {
    sim.spawn("job" + std::to_string(i), [&, i] {
      sim.sleep_until(i * kMillisecond);
      cpu.run(kernel::kMicrosecond);
      sim.sleep_until(t0);
      cpu.run(2 * kSecond);
    });
  }
  std::vector<std::uint64_t> moves;
  std::vector<int> runnable;
  for (Time at : {Time{1}, 150 * kMillisecond, 275 * kMillisecond, 285 * kMillisecond, 295 * kMillisecond}) {
    sim.schedule_at(t0 + at, [&] {
      moves.push_back(cpu.stats().migrations);
      runnable.push_back(cpu.runnable());
    });
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  ASSERT_TRUE(ended->finished());
  EXPECT_EQ(runnable, (std::vector<int>{3, 3, 3, 3, 3}));
  ASSERT_EQ(moves.size(), 5u);
  EXPECT_EQ(moves[0], 1u) << "the second job woke on idle core 0, not its last";
  EXPECT_EQ(moves[1], 1u) << "core 0 counts E's utilisation no more";
  EXPECT_EQ(moves[2], 1u);
  EXPECT_EQ(moves[3], 1u) << "the balancing of 280 ms moved nothing";
  EXPECT_EQ(moves[4], 2u) << "the one of 290 ms moved a job";
}

// An M/M/c queue of compute requests: Poisson arrivals at rate lambda, exponential work of mean
// 1/mu. The number of jobs in the system is the same birth-death process under processor
// sharing as under FIFO (departure rate min(n, c) mu either way), so the mean response time is
// Erlang C's: 1/mu + C(c, a) / (c mu - lambda), a = lambda / mu. With a queue per core as well:
// no core idles while work waits (placement on an idle core, new-idle pulls), so min(n, c)
// cores serve.
TEST(CpuSchedulerTest, AnMMcQueueHasErlangCsMeanResponseTime) {
  for (const auto& [c, rho, queues, policy] : std::vector<std::tuple<int, double, bool, CpuPolicy>>{
           {1, 0.6, false, CpuPolicy::kCfs}, {4, 0.7, false, CpuPolicy::kCfs}, {8, 0.8, false, CpuPolicy::kCfs},
           {4, 0.7, true, CpuPolicy::kCfs}, {8, 0.8, true, CpuPolicy::kCfs}, {1, 0.6, false, CpuPolicy::kEevdf},
           {4, 0.7, false, CpuPolicy::kEevdf}, {8, 0.8, true, CpuPolicy::kEevdf}}) {
    SCOPED_TRACE(std::to_string(c) + " cores at load " + std::to_string(rho) + (queues ? ", a queue per core" : "") +
                 (policy == CpuPolicy::kEevdf ? ", EEVDF" : ", CFS"));
    const double mu = 10;  // 100 ms of work on average: many slices long
    const double lambda = rho * c * mu;
    kernel::Simulation sim;
    CpuScheduler cpu(sim, "node 0", queues ? per_core(c, 0, policy) : cores(c, policy));
    kernel::RandomStream rng(7, "mmc");
    const int jobs = 20'000;
    double total = 0;
    int finished = 0;
    sim.spawn("arrivals", [&] {
      for (int i = 0; i < jobs; ++i) {
        sim.sleep_for(kernel::to_time(rng.exponential(1e9 / lambda)));
        const Time work = std::max<Time>(1, kernel::to_time(rng.exponential(1e9 / mu)));
        sim.spawn("job", [&, work] {
          const Time start = sim.now();
          cpu.run(work);
          total += kernel::to_seconds(sim.now() - start);
          ++finished;
        });
      }
    });
    ASSERT_EQ(sim.run({.event_limit = 100'000'000}).outcome, kernel::RunOutcome::kCompleted);
    ASSERT_EQ(finished, jobs);
    // Erlang C.
    const double a = lambda / mu;
    double sum = 0, term = 1;
    for (int k = 0; k < c; ++k) {
      if (k > 0) term *= a / k;
      sum += term;
    }
    const double top = term * a / c / (1 - rho);  // a^c / c! / (1 - rho)
    const double erlang_c = top / (sum + top);
    const double expect = 1 / mu + erlang_c / (c * mu - lambda);
    EXPECT_NEAR(total / jobs, expect, 0.05 * expect);
  }
}

// One core: A computes 100 ms from 0. B, new, wakes at 5 ms for 1 ms: it has no credit, so it
// waits for A's slice (1-7 ms: the 6 ms period of one core's one task) to end. C slept after running
// early, and wakes at 50 ms: its credit (half a period behind) lets it preempt A at once.
TEST(CpuSchedulerTest, AWakeUpWaitsForTheSliceUnlessItsCreditPreempts) {
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", cores(1));
  Time a_done = 0, b_done = 0, c_done = 0;
  sim.spawn("C", [&] {
    cpu.run(kMillisecond);  // 0-1 ms
    sim.sleep_until(50 * kMillisecond);
    cpu.run(kMillisecond);
    c_done = sim.now();
  });
  sim.spawn("A", [&] {
    sim.sleep_until(kMillisecond);
    cpu.run(100 * kMillisecond);
    a_done = sim.now();
  });
  sim.spawn("B", [&] {
    sim.sleep_until(5 * kMillisecond);
    cpu.run(kMillisecond);
    b_done = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(b_done, 8 * kMillisecond) << "A's slice 1-7 ms, then B";
  EXPECT_EQ(c_done, 51 * kMillisecond) << "C preempts A at once";
  EXPECT_EQ(a_done, 103 * kMillisecond) << "100 ms of A, 1 of B, 1 of C, from 1 ms";
  EXPECT_GE(cpu.stats().preemptions, 2u);
  EXPECT_EQ(cpu.stats().waited, 4 * kMillisecond) << "B waited 2 ms; A 1 ms behind B and 1 ms behind C";
}

// One core busy with H; A and B wake together at 1 ms, tie, and wait: which runs first when H's
// slice ends is a model choice. Fifo runs A (queued first); a random policy runs B first in some
// seeds, and its tape replays that order.
TEST(CpuSchedulerTest, WhichOfTwoWorkWokenTogetherRunsFirstIsAChoice) {
  for (const CpuPolicy policy : {CpuPolicy::kCfs, CpuPolicy::kEevdf}) {
  SCOPED_TRACE(policy == CpuPolicy::kEevdf ? "EEVDF" : "CFS");
  auto order = [policy](kernel::Simulation& sim) {
    CpuScheduler cpu(sim, "node 0", cores(1, policy));
    Time a = 0, b = 0;
    sim.spawn("H", [&] { cpu.run(20 * kMillisecond); });
    sim.spawn("A", [&] {
      sim.sleep_until(kMillisecond);
      cpu.run(kMillisecond);
      a = sim.now();
    });
    sim.spawn("B", [&] {
      sim.sleep_until(kMillisecond);
      cpu.run(kMillisecond);
      b = sim.now();
    });
    EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    return a < b ? std::string("A") : std::string("B");
  };
  {
    kernel::Simulation sim({.record_choices = true});
    EXPECT_EQ(order(sim), "A");
    int model = 0;
    for (const kernel::Choice& ch : sim.tape()) model += ch.kind == kernel::ChoiceKind::kModel;
    EXPECT_GT(model, 0);
  }
  int b_first = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<kernel::Choice> tape;
    std::string first;
    {
      kernel::Simulation sim({.seed = seed, .policy = kernel::PolicySpec::random(), .record_choices = true});
      first = order(sim);
      tape = sim.tape();
    }
    b_first += first == "B";
    kernel::Simulation again({.seed = seed + 100, .policy = kernel::PolicySpec::replay(tape)});
    EXPECT_EQ(order(again), first);
    EXPECT_FALSE(again.replay_diverged()) << again.replay_divergence();
  }
  EXPECT_GT(b_first, 0);
  EXPECT_LT(b_first, 20);
  }
}

// EEVDF on one core, slice 1.4 ms, tick 4 ms (Linux 6.18's defaults for 2 CPUs at HZ=250).
CpuConfig eevdf_one_core() {
  CpuConfig c = cores(1, CpuPolicy::kEevdf);
  c.base_slice = 1400 * kernel::kMicrosecond;
  c.tick = 4 * kMillisecond;
  return c;
}

// Two spinners of 100 ms from 0: each runs until the first tick after its slice is used, so
// they take turns at every tick (as two threads spinning on one CPU of this project's VM ran
// 3.98 ms at a time): the first is done at 196 ms, after 25 turns, the second at 200 ms, and
// 48 of the 50 turns end in a preemption (the last of each, its work's end).
TEST(CpuSchedulerTest, EevdfTwoSpinnersTakeTurnsAtEachTick) {
  CpuStats stats;
  const std::vector<Time> done = finish_times(eevdf_one_core(), 2, 100 * kMillisecond, &stats);
  EXPECT_EQ(done[0], 196 * kMillisecond);
  EXPECT_EQ(done[1], 200 * kMillisecond);
  EXPECT_EQ(stats.preemptions, 48u);
}

// A spinner A computes 1 s from 0. B, new, wakes at 10.3 ms for 20 ms. A's deadline (renewed
// at the 8 ms tick to 9.4 ms of virtual runtime) is earlier than B's (placed at V with half a
// slice: 11 ms), so B waits for the 12 ms tick (CFS's sleeper would preempt at once: below),
// and then the two take turns at the ticks: B runs 12-16, 20-24, ..., 44-48 ms.
TEST(CpuSchedulerTest, EevdfAWokenTaskWaitsForTheTickThenTakesTurns) {
  for (const CpuPolicy policy : {CpuPolicy::kEevdf, CpuPolicy::kCfs}) {
    SCOPED_TRACE(policy == CpuPolicy::kEevdf ? "EEVDF" : "CFS");
    kernel::Simulation sim;
    CpuConfig config = eevdf_one_core();
    config.policy = policy;
    if (policy == CpuPolicy::kCfs) config.base_slice = config.tick = 0;
    CpuScheduler cpu(sim, "node 0", config);
    Time a = 0, b = 0;
    sim.spawn("A", [&] {
      cpu.run(kSecond);
      a = sim.now();
    });
    sim.spawn("B", [&] {
      sim.sleep_until(10'300 * kernel::kMicrosecond);
      cpu.run(20 * kMillisecond);
      b = sim.now();
    });
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(a, kSecond + 20 * kMillisecond);
    if (policy == CpuPolicy::kEevdf) {
      EXPECT_EQ(b, 48 * kMillisecond);
    } else {
      // CFS on one core: B, new, starts at the least virtual runtime and waits for A's 6 ms
      // period to end (at 12 ms), then they share 3 ms slices: not EEVDF's ticks.
      EXPECT_NE(b, 48 * kMillisecond);
    }
  }
}

// A task that stopped owed time (a positive lag) wakes placed that far behind V (twice as far,
// for the one task it joins): the running task is then ahead of V, not eligible, and not
// protected, so the woken one takes the core at once. A spins from 0; C, new, runs 1 ms from
// 2 ms: A's deadline is earlier, so C waits for the 4 ms tick and runs 4-5 ms, and stops owed
// 0.5 ms (V 3.5 ms, C at 3). Woken at 30 ms it runs at once, done at 31 ms; with no lag kept
// it would wait for the 32 ms tick (done at 33 ms).
TEST(CpuSchedulerTest, EevdfATaskOwedTimePreemptsAtItsWakeUp) {
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", eevdf_one_core());
  Time first = 0, second = 0;
  sim.spawn("A", [&] { cpu.run(kSecond); });
  sim.spawn("C", [&] {
    sim.sleep_until(2 * kMillisecond);
    cpu.run(kMillisecond);
    first = sim.now();
    sim.sleep_until(30 * kMillisecond);
    cpu.run(kMillisecond);
    second = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(first, 5 * kMillisecond);
  EXPECT_EQ(second, 31 * kMillisecond);
}

TEST(CpuSchedulerTest, AKilledProcessGivesItsCoreBack) {
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", cores(1));
  Time other_done = 0;
  kernel::Process* victim = sim.spawn("victim", [&] { cpu.run(10 * kSecond); });
  sim.spawn("other", [&] {
    cpu.run(kSecond);
    other_done = sim.now();
  });
  sim.schedule_at(kSecond, [&] { sim.kill(victim, "test"); });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_NEAR(kernel::to_seconds(other_done), 1.5, 0.005) << "half of the first second, then the core alone";
  EXPECT_EQ(cpu.runnable(), 0);
}

// A process that runs again at the instant its work ended keeps its core for the rest of its
// slice, as write(2) after write(2) does: on one core (a 6 ms period), A's 1 ms chunks run
// back to back through its first slice (6 ms: it was alone when it began). B, waiting since 0
// with no virtual runtime, then runs slices of 3 ms (the period two share) until it has more
// than A's 6 ms (at 15 ms), and A's chunks go on from there.
TEST(CpuSchedulerTest, BackToBackWorkKeepsItsCoreForItsSlice) {
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", cores(1));
  std::vector<Time> chunks;
  sim.spawn("A", [&] {
    for (int i = 0; i < 9; ++i) {
      cpu.run(kMillisecond);
      chunks.push_back(sim.now());
    }
  });
  sim.spawn("B", [&] { cpu.run(50 * kMillisecond); });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  const std::vector<Time> expect = {1 * kMillisecond, 2 * kMillisecond, 3 * kMillisecond,
                                    4 * kMillisecond, 5 * kMillisecond, 6 * kMillisecond,
                                    16 * kMillisecond, 17 * kMillisecond, 18 * kMillisecond};
  EXPECT_EQ(chunks, expect);
}

// With a queue per core, the core that new work queues on and which waiting task a balancing
// moves are model choices: recorded, different under a random policy, replayed from the tape.
TEST(CpuSchedulerTest, WhereWorkQueuesAndWhatBalancingMovesAreChoices) {
  const auto finishes = [](kernel::SimulationOptions options, std::vector<kernel::Choice>* tape) {
    kernel::Simulation sim(options);
    CpuScheduler cpu(sim, "node 0", per_core(2, 200 * kMillisecond));
    std::vector<Time> done(5, 0);
    for (int i = 0; i < 5; ++i) {
      sim.spawn("job" + std::to_string(i), [&, i] {
        cpu.run((i + 1) * kSecond);
        done[static_cast<std::size_t>(i)] = sim.now();
      });
    }
    EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    if (tape != nullptr) *tape = sim.tape();
    return done;
  };
  std::vector<kernel::Choice> tape;
  finishes({.record_choices = true}, &tape);
  int model = 0;
  for (const kernel::Choice& ch : tape) model += ch.kind == kernel::ChoiceKind::kModel;
  EXPECT_GE(model, 3) << "three jobs queue on a drawn core, and balancings choose among waiting work";
  std::set<std::vector<Time>> seen;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const std::vector<Time> first =
        finishes({.seed = seed, .policy = kernel::PolicySpec::random(), .record_choices = true}, &tape);
    seen.insert(first);
    EXPECT_EQ(finishes({.seed = seed, .policy = kernel::PolicySpec::replay(tape)}, nullptr), first);
  }
  EXPECT_GT(seen.size(), 1u);
}

// A queue per core: a killed process gives its core back whether it ran or waited (five jobs on
// two cores: killing four at 1 s kills both kinds), and the survivor goes on alone. By 1 s the
// cores had run 2 s; then the survivor runs its rest, so the busy time is its finish + 1 s.
TEST(CpuSchedulerTest, AKilledProcessLeavesItsCoresQueue) {
  kernel::Simulation sim;
  CpuScheduler cpu(sim, "node 0", per_core(2, kernel::kHour));
  std::vector<kernel::Process*> jobs;
  Time survivor_done = 0;
  for (int i = 0; i < 5; ++i) {
    jobs.push_back(sim.spawn("job" + std::to_string(i), [&, i] {
      cpu.run(4 * kSecond);
      if (i == 4) survivor_done = sim.now();
    }));
  }
  sim.schedule_at(kSecond, [&] {
    EXPECT_EQ(cpu.runnable(), 5);
    for (int i = 0; i < 4; ++i) sim.kill(jobs[static_cast<std::size_t>(i)], "test");
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_GT(survivor_done, kSecond);
  EXPECT_EQ(cpu.runnable(), 0);
  EXPECT_EQ(cpu.stats().busy, survivor_done + kSecond);
}

}  // namespace
}  // namespace racesim::host
