// The emulated device: memory peak and OOM, in-order streams, events across streams, and the
// host's sync with its timeout.
#include "sim/device/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::device {
namespace {

using namespace kernel::time_literals;
using kernel::Simulation;
using kernel::Time;
using ::testing::HasSubstr;

DeviceConfig small() {
  DeviceConfig c;
  c.memory = 100ull << 20;
  c.h2d_bandwidth = 1e9;
  c.launch_latency = 0;
  return c;
}

TEST(DeviceTest, MemoryTracksPeakAndRefusesBeyondCapacity) {
  Simulation sim;
  Device d(sim, "rank 0", small());
  auto a = d.alloc(60ull << 20, "full tensor");
  ASSERT_TRUE(a);
  auto b = d.alloc(30ull << 20, "shard");
  ASSERT_TRUE(b);
  EXPECT_EQ(d.used(), 90ull << 20);
  auto c = d.alloc(20ull << 20, "gate.weight");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.message(), "out of device memory on rank 0: gate.weight needs 20 MiB, 90 MiB of 100 MiB in use");
  d.free(*a);
  EXPECT_EQ(d.used(), 30ull << 20);
  EXPECT_TRUE(d.alloc(20ull << 20, "again"));
  EXPECT_EQ(d.peak(), 90ull << 20);
}

// Freed slots are reused, but a handle frees only its own allocation: freeing it twice, or
// freeing a handle whose slot now holds a newer allocation, changes nothing.
TEST(DeviceTest, AStaleHandleNeverFreesItsSuccessor) {
  Simulation sim;
  Device d(sim, "rank 0", small());
  const auto a = d.alloc(10ull << 20, "a");
  ASSERT_TRUE(a);
  d.free(*a);
  const auto b = d.alloc(20ull << 20, "b");  // reuses a's slot
  ASSERT_TRUE(b);
  EXPECT_NE(*a, *b);
  d.free(*a);  // stale: b stays
  EXPECT_EQ(d.used(), 20ull << 20);
  d.free(12345);  // never returned
  EXPECT_EQ(d.used(), 20ull << 20);
  d.free(*b);
  d.free(*b);
  EXPECT_EQ(d.used(), 0u);
  // Many allocations live at once, freed in another order, all accounted for.
  std::vector<std::uint64_t> handles;
  for (int i = 0; i < 50; ++i) handles.push_back(*d.alloc(1ull << 20, "x"));
  EXPECT_EQ(d.used(), 50ull << 20);
  for (int i = 49; i >= 0; i -= 2) d.free(handles[static_cast<std::size_t>(i)]);
  EXPECT_EQ(d.used(), 25ull << 20);
  for (int i = 0; i < 50; i += 2) d.free(handles[static_cast<std::size_t>(i)]);
  EXPECT_EQ(d.used(), 0u);
  EXPECT_EQ(d.peak(), 50ull << 20);
}

TEST(DeviceTest, AStreamRunsInOrderWhileTheHostGoesOn) {
  Simulation sim;
  Device d(sim, "rank 0", small());
  Time enqueued_at = -1, synced_at = -1;
  std::vector<std::string> order;
  sim.spawn("host", [&] {
    Stream& s = d.stream("compute");
    s.kernel(2_s);
    s.copy(500'000'000, true);  // 0.5 s at 1 GB/s
    s.enqueue("mark", [&] {
      order.push_back("after copy at " + std::to_string(kernel::to_seconds(sim.now())));
      return kernel::Status::ok();
    });
    enqueued_at = sim.now();
    EXPECT_TRUE(s.sync().is_ok());
    synced_at = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(enqueued_at, 0);
  EXPECT_EQ(synced_at, 2500_ms);
  EXPECT_THAT(order, ::testing::ElementsAre("after copy at 2.500000"));
}

TEST(DeviceTest, AStragglerRanksKernelsTakeItsFactorLongerAndOthersDoNot) {
  // The fault point device.compute: the straggler of rank 1 stretches rank 1's kernels only.
  Simulation sim;
  kernel::FaultSeam seam;
  kernel::ActiveFault f("slow", kernel::kStraggler, 1, kernel::RandomStream(1, "fault/slow/1"));
  f.set_arg("factor", [](kernel::RandomStream&, int) { return 3.0; });
  seam.add(std::move(f));
  Device slow(sim, "rank 1", small()), fast(sim, "rank 0", small());
  slow.set_faults(&seam, 1);
  fast.set_faults(&seam, 0);
  Time slow_done = -1, fast_done = -1;
  sim.spawn("host", [&] {
    Stream& a = slow.stream("compute");
    Stream& b = fast.stream("compute");
    a.kernel(1_s);
    b.kernel(1_s);
    EXPECT_TRUE(b.sync().is_ok());
    fast_done = sim.now();
    EXPECT_TRUE(a.sync().is_ok());
    slow_done = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(fast_done, 1_s);
  EXPECT_EQ(slow_done, 3_s);
  EXPECT_EQ(seam.all()[0].hit_count(), 1u);
}

TEST(DeviceTest, EventsOrderWorkAcrossStreams) {
  Simulation sim;
  Device d(sim, "rank 0", small());
  Time second_done = -1;
  sim.spawn("host", [&] {
    Stream& a = d.stream("a");
    Stream& b = d.stream("b");
    a.kernel(3_s);
    const auto ev = a.record();
    b.wait_event(a, ev);
    b.kernel(1_s);
    EXPECT_TRUE(b.sync().is_ok());
    second_done = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(second_done, 4_s);
}

TEST(DeviceTest, SyncTimesOutOnAStuckStreamAndADeadlockNamesIt) {
  for (bool timeout : {true, false}) {
    Simulation sim;
    Device d(sim, "rank 1", small());
    kernel::Event never(sim, "peer");
    std::string error;
    sim.spawn("rank 1", [&] {
      Stream& comm = d.stream("comm");
      comm.enqueue("scatter", [&] {
        never.wait();
        return kernel::Status::ok();
      });
      const auto st = comm.sync(timeout ? 1836_s : kernel::kTimeMax);
      error = st.is_ok() ? "" : st.message();
    });
    const auto res = sim.run();
    if (timeout) {
      ASSERT_EQ(res.outcome, kernel::RunOutcome::kCompleted);
      EXPECT_EQ(error, "sync on stream 'rank 1/comm' timed out after 1836s in scatter");
    } else {
      ASSERT_EQ(res.outcome, kernel::RunOutcome::kDeadlock);
      EXPECT_THAT(res.deadlock.to_string(),
                  HasSubstr("rank 1: sync on stream 'rank 1/comm': waiting for rank 1/comm (blocked in wait on event 'peer')"));
    }
  }
}

TEST(DeviceTest, AFailedOperationFailsLaterSyncs) {
  Simulation sim;
  Device d(sim, "rank 0", small());
  std::string error;
  sim.spawn("host", [&] {
    Stream& s = d.stream("comm");
    s.enqueue("all_gather", [] { return kernel::Status::error("mismatch"); });
    s.kernel(1_s);
    error = s.sync().message();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(error, "mismatch");
}

}  // namespace
}  // namespace racesim::device
