// The storage model's operations and consistency modes, in virtual time.
#include "sim/storage/fs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::storage {
namespace {

using namespace kernel::time_literals;
using kernel::Simulation;
using kernel::Time;

constexpr std::uint64_t kMiB = 1ull << 20;

// A mount with round numbers: 1 ms per metadata op, 100 MiB/s shared, 100 MiB/s per client,
// 1 MiB chunks.
MountConfig mount(MountKind kind) {
  MountConfig c;
  c.kind = kind;
  c.meta_latency = 1_ms;
  c.bandwidth = 100.0 * kMiB;
  c.client_bandwidth = 100.0 * kMiB;
  c.chunk = kMiB;
  return c;
}

TEST(FileSystemTest, AFileBeingWrittenIsVisibleWithItsCurrentSizeOnLocal) {
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  std::vector<std::uint64_t> seen;
  std::optional<ReadResult> torn, whole;
  sim.spawn("writer", [&] {
    auto fd = fs.create("/c/m.om", 0, 0, false, 50 * kMiB);
    ASSERT_TRUE(fd);
    fs.write(*fd, 50 * kMiB);  // 500 ms
    fs.close(*fd);
  });
  sim.spawn("reader", [&] {
    sim.sleep_for(251_ms);  // create done at 1 ms; 25 chunks of 10 ms landed by 251 ms
    seen.push_back(fs.stat("/c/m.om", 1).size);
    torn = fs.read("/c/m.om", 1);
    sim.sleep_for(1_s);
    whole = fs.read("/c/m.om", 1);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(seen[0], 25 * kMiB);
  ASSERT_TRUE(torn && whole);
  EXPECT_FALSE(torn->intact());
  EXPECT_EQ(torn->content.writer, 0);
  EXPECT_EQ(torn->content.length, 50 * kMiB);
  EXPECT_TRUE(whole->intact());
  EXPECT_EQ(fs.stats().bytes_written, 50 * kMiB);
}

TEST(FileSystemTest, NfsOthersSeeDataOnlyAfterCloseOrFsync) {
  Simulation sim;
  FileSystem fs(sim, "nfs", mount(MountKind::kNfs));
  std::vector<std::uint64_t> sizes;
  std::uint64_t own = 0;
  sim.spawn("writer", [&] {
    auto fd = fs.create("/c/m.om", 0, 0, false, 20 * kMiB);
    fs.write(*fd, 10 * kMiB);
    fs.fsync(*fd);               // 10 MiB reach the server at ~102 ms
    fs.write(*fd, 10 * kMiB);
    own = fs.stat("/c/m.om", 0).size;  // the writer sees its own 20 MiB
    fs.close(*fd);
  });
  sim.spawn("reader", [&] {
    sim.sleep_for(50_ms);
    sizes.push_back(fs.read("/c/m.om", 1)->bytes);   // nothing flushed yet
    sim.sleep_for(100_ms);
    sizes.push_back(fs.read("/c/m.om", 1)->bytes);   // the fsync'd part
    sim.sleep_for(1_s);
    sizes.push_back(fs.read("/c/m.om", 1)->bytes);   // all, after close
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_THAT(sizes, ::testing::ElementsAre(0, 10 * kMiB, 20 * kMiB));
  EXPECT_EQ(own, 20 * kMiB);
}

TEST(FileSystemTest, NfsAttributeAndNegativeLookupCachesDelayVisibility) {
  Simulation sim;
  FileSystem fs(sim, "nfs", mount(MountKind::kNfs));
  Time listed = -1, statted = -1;
  std::uint64_t cached_size = 99;
  sim.spawn("writer", [&] {
    sim.sleep_for(1_s);
    auto fd = fs.create("/c/m.om", 0, 0, false, kMiB);
    fs.write(*fd, kMiB);
    fs.close(*fd);  // done at ~1.013 s
  });
  sim.spawn("poller", [&] {
    // Looked up (absent) at 0 s: the negative entry and the listing live for acdirmin (30 s).
    for (int i = 0; i < 1000 && listed < 0; ++i) {
      if (!fs.list("/c/", ".om", 1).empty()) listed = sim.now();
      if (listed < 0) sim.sleep_for(200_ms);
    }
  });
  sim.spawn("statter", [&] {
    sim.sleep_for(1005_ms);  // sees the new file, size 0, mid-write
    cached_size = fs.stat("/c/m.om", 2).size;
    for (int i = 0; i < 1000 && statted < 0; ++i) {
      sim.sleep_for(100_ms);
      if (fs.stat("/c/m.om", 2).size == kMiB) statted = sim.now();
    }
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(cached_size, 0u);
  // The attribute cache (acregmin 3 s) hides the final size until ~3 s after the first stat.
  EXPECT_GE(statted, 1005_ms + 3_s);
  EXPECT_LT(statted, 1005_ms + 3_s + 200_ms);
  // The listing cached at 0 s hides the file until 30 s, although it was complete at ~1 s.
  EXPECT_GE(listed, 30_s);
  EXPECT_LT(listed, 30_s + 300_ms);
  // On local the same poll sees it at once.
  Simulation sim2;
  FileSystem local(sim2, "local", mount(MountKind::kLocal));
  Time seen = -1;
  sim2.spawn("w", [&] { sim2.sleep_for(1_s); local.create("/c/m.om", 0, 0, false, 1); });
  sim2.spawn("p", [&] {
    for (int i = 0; i < 100 && seen < 0; ++i) {
      if (!local.list("/c/", ".om", 1).empty()) seen = sim2.now();
      sim2.sleep_for(200_ms);
    }
  });
  sim2.run();
  EXPECT_LT(seen, 1300_ms);
}

TEST(FileSystemTest, RenameIsAtomicAndExclusiveCreateFails) {
  Simulation sim;
  FileSystem fs(sim, "lustre", mount(MountKind::kLustre));
  std::vector<std::string> events;
  sim.spawn("writer", [&] {
    auto fd = fs.create("/c/m.om.tmp.0", 0, 0, false, 10 * kMiB);
    fs.write(*fd, 10 * kMiB);
    fs.fsync(*fd);
    fs.close(*fd);
    EXPECT_EQ(fs.rename("/c/m.om.tmp.0", "/c/m.om", 0), FsError::kOk);
    EXPECT_FALSE(fs.create("/c/m.om", 0, 0, true, 1));  // O_EXCL on an existing name
    EXPECT_EQ(fs.rename("/c/nope", "/c/x", 0), FsError::kNotFound);
    EXPECT_TRUE(fs.list("/c/", "tmp", 0).empty());
    EXPECT_THAT(fs.list("/c/", ".om", 0), ::testing::ElementsAre("/c/m.om"));
  });
  sim.spawn("reader", [&] {
    // Every look at the final name sees nothing or the whole file, never a part.
    for (int i = 0; i < 200; ++i) {
      if (auto r = fs.read("/c/m.om", 1)) {
        events.push_back(r->intact() ? "intact" : "torn");
        break;
      }
      sim.sleep_for(10_ms);
    }
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_THAT(events, ::testing::ElementsAre("intact"));
}

TEST(FileSystemTest, ConcurrentWritersShareTheBandwidthAsInProcessorSharing) {
  // N writers of S bytes each at once on a mount of bandwidth B finish at N*S/B (closed form of
  // processor sharing with equal jobs); the per-client cap binds when N is small.
  for (int n : {1, 4, 8}) {
    Simulation sim;
    MountConfig c = mount(MountKind::kLustre);
    c.meta_latency = 0;
    c.client_bandwidth = 50.0 * kMiB;
    FileSystem fs(sim, "lustre", c);
    std::vector<Time> done(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      sim.spawn("w" + std::to_string(i), [&, i] {
        auto fd = fs.create("/f" + std::to_string(i), i, i, false, 40 * kMiB);
        fs.write(*fd, 40 * kMiB);
        done[static_cast<std::size_t>(i)] = sim.now();
      });
    }
    sim.run();
    const double rate = std::min(50.0, 100.0 / n);  // MiB/s per writer
    const double expected = 40.0 / rate;              // seconds
    for (Time t : done) EXPECT_NEAR(kernel::to_seconds(t), expected, expected * 0.02) << n << " writers";
  }
}

TEST(FileSystemTest, FlockModes) {
  for (FlockMode mode : {FlockMode::kFlock, FlockMode::kLocalflock, FlockMode::kNoflock}) {
    Simulation sim;
    MountConfig c = mount(MountKind::kLustre);
    c.flock = mode;
    FileSystem fs(sim, "lustre", c);
    Time second_got_it = -1;
    FsError first = FsError::kOk;
    sim.spawn("a", [&] {
      fs.create("/c/m.om", 0, 0, false, 0);
      first = fs.lock("/c/m.om", 0, true, true);
      sim.sleep_for(5_s);
      fs.unlock("/c/m.om", 0);
    });
    sim.spawn("b", [&] {
      sim.sleep_for(1_s);
      if (fs.lock("/c/m.om", 1, false, true) == FsError::kOk) second_got_it = sim.now();
    });
    sim.run();
    switch (mode) {
      case FlockMode::kFlock:  // b (shared) waits for a's exclusive lock
        EXPECT_EQ(first, FsError::kOk);
        EXPECT_GE(second_got_it, 5_s);
        break;
      case FlockMode::kLocalflock:  // different clients: no exclusion at all
        EXPECT_EQ(first, FsError::kOk);
        EXPECT_LT(second_got_it, 2_s);
        break;
      case FlockMode::kNoflock:  // ENOSYS for everyone
        EXPECT_EQ(first, FsError::kNoSys);
        EXPECT_EQ(second_got_it, -1);
        break;
    }
  }
}

TEST(FileSystemTest, FlockSharedHoldersCoexistAndNonBlockingFailsFast) {
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  std::vector<FsError> got;
  Time writer_at = -1;
  sim.spawn("r1", [&] {
    fs.create("/l", 0, 0, false, 0);
    got.push_back(fs.lock("/l", 0, false, true));
    sim.sleep_for(2_s);
    fs.unlock("/l", 0);
  });
  sim.spawn("r2", [&] {
    sim.sleep_for(100_ms);
    got.push_back(fs.lock("/l", 0, false, true));  // shared with r1 at once
    got.push_back(fs.lock("/l", 0, true, false) == FsError::kWouldBlock ? FsError::kOk : FsError::kExists);
    sim.sleep_for(2_s);
    fs.unlock("/l", 0);
  });
  sim.spawn("w", [&] {
    sim.sleep_for(200_ms);
    EXPECT_EQ(fs.lock("/l", 0, true, true, 500_ms), FsError::kTimedOut);
    EXPECT_EQ(fs.lock("/l", 0, true, true), FsError::kOk);
    writer_at = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_THAT(got, ::testing::ElementsAre(FsError::kOk, FsError::kOk, FsError::kOk));
  EXPECT_GE(writer_at, 2100_ms);  // after both shared holders left
}

}  // namespace
}  // namespace racesim::storage
