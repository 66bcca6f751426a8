// The metadata server's queue against queueing theory (M/M/c: Erlang C; M/D/1: Pollaczek-
// Khinchine), its queue statistics on a burst, and through a mount: the mdtest figures its Lustre
// defaults come from.
#include "sim/storage/metadata_server.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/random.h"
#include "sim/kernel/simulation.h"
#include "sim/storage/fs.h"

namespace racesim::storage {
namespace {

using kernel::Time;
constexpr double kNs = 1e9;

// Erlang C: the mean wait in queue of M/M/c with arrival rate lambda and service rate mu (per s).
double erlang_c_wait_s(double lambda, double mu, int c) {
  const double a = lambda / mu, rho = a / c;
  double sum = 0, term = 1;  // a^k / k!
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double tail = term / (1 - rho);  // a^c / c! / (1 - rho)
  const double p_wait = tail / (sum + tail);
  return p_wait / (c * mu - lambda);
}

// Poisson arrivals at `lambda` per second, services drawn by `service_s`; the mean wait (s).
template <typename Service>
double simulated_wait_s(MetadataServer& mds, double lambda, int n, Service service_s) {
  kernel::RandomStream rng(7, "arrivals");
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += rng.exponential(1 / lambda);
    mds.serve(static_cast<Time>(t * kNs), static_cast<Time>(service_s() * kNs));
  }
  return static_cast<double>(mds.stats().wait_total) / kNs / n;
}

TEST(MetadataServerTest, MeanWaitMatchesErlangCForMMc) {
  // 8 threads, 1 ms mean service, at 60%, 80% and 90% load.
  for (double rho : {0.6, 0.8, 0.9}) {
    const int c = 8;
    const double mu = 1000, lambda = rho * c * mu;
    MetadataServer mds(c);
    kernel::RandomStream service(11, "service");
    const double w = simulated_wait_s(mds, lambda, 400'000, [&] { return service.exponential(1 / mu); });
    const double expected = erlang_c_wait_s(lambda, mu, c);
    EXPECT_NEAR(w, expected, 0.05 * expected) << "rho " << rho;
  }
}

TEST(MetadataServerTest, MeanWaitMatchesPollaczekKhinchineForMD1) {
  for (double rho : {0.5, 0.8}) {
    const double mu = 2000, lambda = rho * mu;  // 500 us deterministic service
    MetadataServer mds(1);
    const double w = simulated_wait_s(mds, lambda, 400'000, [&] { return 1 / mu; });
    const double expected = rho / (2 * mu * (1 - rho));
    EXPECT_NEAR(w, expected, 0.05 * expected) << "rho " << rho;
  }
}

TEST(MetadataServerTest, ABurstQueuesInArrivalOrderOverTheThreads) {
  MetadataServer mds(4);
  std::vector<Time> ends;
  for (int i = 0; i < 16; ++i) ends.push_back(mds.serve(0, 1'000'000));  // 16 at once, 1 ms each
  // Four at a time: the k-th finishes at (k / 4 + 1) ms.
  for (int i = 0; i < 16; ++i) EXPECT_EQ(ends[static_cast<std::size_t>(i)], (i / 4 + 1) * 1'000'000) << i;
  EXPECT_EQ(mds.stats().queue_peak, 12u);                    // the last arrival found 11 queued, and itself
  EXPECT_EQ(mds.stats().wait_total, 4 * (0 + 1 + 2 + 3) * 1'000'000);
  EXPECT_EQ(mds.stats().wait_max, 3'000'000);
  EXPECT_DOUBLE_EQ(mds.queue_mean(4'000'000), 24.0 / 4);    // Little: 24 ms of waiting over 4 ms
  // A later arrival after the burst drained does not wait.
  EXPECT_EQ(mds.serve(10'000'000, 1'000'000), 11'000'000);
  EXPECT_EQ(mds.stats().wait_max, 3'000'000);
}

// Lustre defaults through a mount: one client creating files one after another gets the mdtest
// single-thread rate (504/s); 240 clients together get at most the aggregate (15,000/s).
double creates_per_s(int clients, int each) {
  kernel::Simulation sim;
  MountConfig c;
  c.kind = MountKind::kLustre;
  c.root = "/s";
  c.metadata = MetadataConfig::lustre();
  FileSystem fs(sim, "shared", c);
  for (int p = 0; p < clients; ++p) {
    sim.spawn("client", [&fs, p, each] {
      for (int i = 0; i < each; ++i) {
        // The create alone (mdtest -F -C creates empty files; the close is not timed here).
        auto fd = fs.create("/s/f" + std::to_string(p) + "_" + std::to_string(i), p, p, OpenMode::kExclusive, 0);
        ASSERT_TRUE(fd);
      }
    });
  }
  const auto r = sim.run();
  EXPECT_EQ(r.outcome, kernel::RunOutcome::kCompleted);
  return clients * each / kernel::to_seconds(r.end_time);
}

TEST(MetadataServerTest, LustreDefaultsGiveTheMdtestRates) {
  EXPECT_NEAR(creates_per_s(1, 500), 504, 504 * 0.01);
  EXPECT_NEAR(creates_per_s(240, 200), 15'000, 15'000 * 0.02);
}

// Through a mount, Poisson arrivals of creates from many processes (one per operation) wait as
// M/D/1 says when the server has one thread.
TEST(MetadataServerTest, AMountsQueueIsMD1WithOneThread) {
  kernel::Simulation sim;
  MountConfig c;
  c.kind = MountKind::kLustre;
  c.root = "/s";
  c.metadata.threads = 1;
  c.metadata.of(MetaOp::kCreate) = {0, 1'000'000};  // 1 ms service, no latency outside
  FileSystem fs(sim, "shared", c);
  const double lambda = 800;  // 80% load
  const int n = 100'000;
  sim.spawn("arrivals", [&] {
    kernel::RandomStream rng(3, "arrivals");
    for (int i = 0; i < n; ++i) {
      sim.sleep_for(static_cast<Time>(rng.exponential(1 / lambda) * kNs));
      sim.spawn("op", [&fs, i] { ASSERT_TRUE(fs.create("/s/f" + std::to_string(i), 0, 0, OpenMode::kExclusive, 0)); });
    }
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  const auto& st = fs.metadata_server()->stats();
  ASSERT_EQ(st.ops, static_cast<std::uint64_t>(n));
  const double w = static_cast<double>(st.wait_total) / kNs / n;
  const double rho = 0.8, mu = 1000;
  const double expected = rho / (2 * mu * (1 - rho));
  EXPECT_NEAR(w, expected, 0.05 * expected);
  EXPECT_GT(st.queue_peak, 5u);
}

}  // namespace
}  // namespace racesim::storage
