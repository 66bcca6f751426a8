// A node's cores under the CFS-like scheduler (sim/host/cpu_scheduler.h) against closed forms:
// processor sharing of equal jobs, the mean response time of an M/M/c queue (Erlang C), the
// wake-up latency of a slice and a sleeper's credit, and a killed process giving its core back.
#include "sim/host/cpu_scheduler.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/random.h"
#include "sim/kernel/simulation.h"

namespace racesim::host {
namespace {

using kernel::kMillisecond;
using kernel::kSecond;
using kernel::Time;

CpuConfig cores(int n) {
  CpuConfig c;
  c.cores = n;
  return c;
}

TEST(CpuSchedulerTest, DefaultsScaleAsLinuxDoesWithTheCoreCount) {
  const CpuConfig one = cores(1).with_defaults(), four = cores(4).with_defaults(), many = cores(192).with_defaults();
  EXPECT_EQ(one.latency, 6 * kMillisecond);
  EXPECT_EQ(four.latency, 18 * kMillisecond);
  EXPECT_EQ(many.latency, 24 * kMillisecond) << "the factor stops at 8 CPUs";
  EXPECT_EQ(many.min_granularity, 3 * kMillisecond);
  EXPECT_EQ(many.wakeup_granularity, 4 * kMillisecond);
}

// n equal jobs of W on c cores, all runnable at 0: processor sharing gives each c/n of a core,
// so all finish at n/c * W (within 5%: the last slices round it); with n <= c each takes W.
TEST(CpuSchedulerTest, EqualJobsShareTheCoresAsProcessorSharingSays) {
  for (const auto& [n, c] : std::vector<std::pair<int, int>>{{2, 4}, {8, 4}, {8, 8}, {12, 8}, {16, 4}, {3, 2}}) {
    SCOPED_TRACE(std::to_string(n) + " jobs on " + std::to_string(c) + " cores");
    kernel::Simulation sim;
    CpuScheduler cpu(sim, "node 0", cores(c));
    const Time work = 2 * kSecond;
    std::vector<Time> done(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      sim.spawn("job" + std::to_string(i), [&, i] {
        cpu.run(work);
        done[static_cast<std::size_t>(i)] = sim.now();
      });
    }
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    const double expect = kernel::to_seconds(work) * std::max(1.0, static_cast<double>(n) / c);
    double sum = 0, last = 0;
    for (Time t : done) {
      sum += kernel::to_seconds(t);
      last = std::max(last, kernel::to_seconds(t));
    }
    EXPECT_NEAR(last, expect, 0.05 * expect);
    EXPECT_NEAR(sum / n, expect, 0.05 * expect);
    EXPECT_EQ(cpu.stats().busy, work * n) << "every job got all its time, no more";
  }
}

// An M/M/c queue of compute requests: Poisson arrivals at rate lambda, exponential work of mean
// 1/mu. The number of jobs in the system is the same birth-death process under processor
// sharing as under FIFO (departure rate min(n, c) mu either way), so the mean response time is
// Erlang C's: 1/mu + C(c, a) / (c mu - lambda), a = lambda / mu.
TEST(CpuSchedulerTest, AnMMcQueueHasErlangCsMeanResponseTime) {
  for (const auto& [c, rho] : std::vector<std::pair<int, double>>{{1, 0.6}, {4, 0.7}, {8, 0.8}}) {
    SCOPED_TRACE(std::to_string(c) + " cores at load " + std::to_string(rho));
    const double mu = 10;  // 100 ms of work on average: many slices long
    const double lambda = rho * c * mu;
    kernel::Simulation sim;
    CpuScheduler cpu(sim, "node 0", cores(c));
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
  auto order = [](kernel::Simulation& sim) {
    CpuScheduler cpu(sim, "node 0", cores(1));
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

}  // namespace
}  // namespace racesim::host
