#include "sim/kernel/resource.h"

#include <gtest/gtest.h>

namespace racesim::kernel {
namespace {

using namespace time_literals;

TEST(ResourceTest, DeterministicArrivalsGiveExactQueueAndUtilisation) {
  // Two servers, four jobs of 2s arriving at 0: two served 0-2s, two wait 2s and run 2-4s;
  // observed at 5s.
  Simulation sim;
  Resource r(sim, "disk", 2);
  for (int i = 0; i < 4; ++i) sim.spawn("job", [&] { r.use(2_s); });
  sim.spawn("observer", [&] {
    sim.sleep_for(5_s);
    const auto s = r.stats();
    EXPECT_EQ(s.acquisitions, 4u);
    EXPECT_EQ(s.queue_length_peak, 2u);
    EXPECT_DOUBLE_EQ(s.utilisation, 0.8);        // 8 server-seconds of 2 x 5
    EXPECT_DOUBLE_EQ(s.queue_length_mean, 0.8);  // 2 queued for 2 of 5 seconds
    EXPECT_EQ(s.wait_total, 4_s);
    EXPECT_EQ(s.wait_max, 2_s);
    EXPECT_EQ(s.busy, 0u);
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
}

TEST(ResourceTest, AcquireTimesOutAndCountsIt) {
  Simulation sim;
  Resource r(sim, "mds", 1);
  sim.spawn("hog", [&] { r.use(10_s); });
  sim.spawn("impatient", [&] {
    EXPECT_EQ(r.acquire(1_s), WaitStatus::kTimeout);
    EXPECT_EQ(r.stats().timeouts, 1u);
    EXPECT_EQ(r.stats().queue_length, 0u);
  });
  EXPECT_EQ(sim.run().outcome, RunOutcome::kCompleted);
}

// M/M/1 validation against the closed form: with arrival rate lambda and service rate mu, the
// mean wait in queue is Wq = rho / (mu - lambda) and the utilisation is rho = lambda / mu.
TEST(ResourceTest, MM1MatchesTheClosedForm) {
  const double lambda = 0.5, mu = 1.0;  // per second
  const int customers = 200000;
  Simulation sim({.seed = 7});
  Resource server(sim, "server", 1);
  sim.spawn("arrivals", [&] {
    RandomStream arr = sim.stream("arrivals");
    RandomStream svc = sim.stream("service");
    for (int i = 0; i < customers; ++i) {
      sim.sleep_for(static_cast<Time>(arr.exponential(1.0 / lambda) * kSecond));
      const Time service = static_cast<Time>(svc.exponential(1.0 / mu) * kSecond);
      sim.spawn("c", [&server, service] { server.use(service); });
    }
  });
  ASSERT_EQ(sim.run().outcome, RunOutcome::kCompleted);
  const auto s = server.stats();
  const double rho = lambda / mu;
  const double wq_expected = rho / (mu - lambda);  // 1 s
  const double wq = to_seconds(s.wait_total) / customers;
  EXPECT_NEAR(wq, wq_expected, 0.05 * wq_expected);
  EXPECT_NEAR(s.utilisation, rho, 0.01);
  // Mean queue length Lq = lambda * Wq (Little's law).
  EXPECT_NEAR(s.queue_length_mean, lambda * wq_expected, 0.05 * lambda * wq_expected);
}

}  // namespace
}  // namespace racesim::kernel
