// The page cache's dirty-byte accounting and its flusher, in virtual time, against figures worked
// out by hand; and a local mount that writes back through it (sim/storage/fs.h).
#include "sim/storage/page_cache.h"
#include "sim/storage/fs.h"
#include "tests/sim/storage/test_mounts.h"

#include <gtest/gtest.h>

namespace racesim::storage {
namespace {

using namespace kernel::time_literals;
using kernel::Simulation;
using kernel::Time;

using testing::kMiB;

// Limit 100 MiB, background 50 MiB, expire 30 s, a disk of 100 MiB/s (10 ms per MiB).
PageCacheConfig config() { return {100 * kMiB, 50 * kMiB, 30_s, 100.0 * kMiB}; }

TEST(PageCacheTest, DirtyBytesStayUntilTheyExpireThenTheFlusherWritesThemAtTheDiskRate) {
  PageCache pc(config());
  pc.dirtied(1, 10 * kMiB, 1_s);
  pc.dirtied(1, 10 * kMiB, 2_s);
  pc.advance(30_s);
  EXPECT_EQ(pc.dirty_bytes(), 20 * kMiB);  // nothing is 30 s old yet
  pc.advance(31_s + 99_ms);
  EXPECT_EQ(pc.dirty_bytes(), 20 * kMiB);  // the first chunk is being written: 31 s to 31.1 s
  pc.advance(31_s + 100_ms);
  EXPECT_EQ(pc.dirty_bytes(), 10 * kMiB);
  EXPECT_EQ(pc.dirty_bytes(1), 10 * kMiB);
  pc.advance(32_s + 100_ms);  // the second is due at 32 s, written by 32.1 s
  EXPECT_EQ(pc.dirty_bytes(), 0u);
  EXPECT_EQ(pc.dirty_bytes(1), 0u);
  EXPECT_EQ(pc.written_back_bytes(), 20 * kMiB);
}

TEST(PageCacheTest, AboveTheBackgroundThresholdTheFlusherStartsAtOnceAndStopsBelowIt) {
  PageCache pc(config());
  for (int i = 0; i < 6; ++i) pc.dirtied(1, 10 * kMiB, 0);  // 60 MiB: above 50 at 0 s
  pc.advance(100_ms);  // the first 10 MiB written by 0.1 s: 50 MiB, no longer above
  EXPECT_EQ(pc.dirty_bytes(), 50 * kMiB);
  pc.advance(29_s);  // the rest waits for its expiry
  EXPECT_EQ(pc.dirty_bytes(), 50 * kMiB);
  pc.advance(30_s + 100_ms);
  EXPECT_EQ(pc.dirty_bytes(), 40 * kMiB);
}

TEST(PageCacheTest, TheLimitSaysWhatStillFits) {
  PageCache pc(config());
  pc.dirtied(1, 90 * kMiB, 0);
  EXPECT_TRUE(pc.fits(10 * kMiB));
  EXPECT_FALSE(pc.fits(10 * kMiB + 1));
}

TEST(PageCacheTest, FsyncTakesOneFilesBytesAndTheFlusherSkipsThem) {
  PageCache pc(config());
  pc.dirtied(1, 10 * kMiB, 0);
  pc.dirtied(2, 20 * kMiB, 0);
  pc.dirtied(1, 5 * kMiB, 1_s);
  EXPECT_EQ(pc.take(1), 15 * kMiB);
  EXPECT_EQ(pc.dirty_bytes(), 20 * kMiB);
  EXPECT_EQ(pc.take(1), 0u);
  // Dirtied again after the fsync: only the new bytes are the file's.
  pc.dirtied(1, 1 * kMiB, 2_s);
  EXPECT_EQ(pc.dirty_bytes(1), 1 * kMiB);
  pc.advance(30_s + 200_ms);  // file 2's 20 MiB (due at 30 s) written by 30.2 s; file 1's old chunks skipped
  EXPECT_EQ(pc.dirty_bytes(2), 0u);
  EXPECT_EQ(pc.dirty_bytes(1), 1 * kMiB);
  EXPECT_EQ(pc.written_back_bytes(), 20 * kMiB);
  pc.advance(32_s + 10_ms);
  EXPECT_EQ(pc.dirty_bytes(), 0u);
  pc.drop(3);  // a file with nothing dirty
  EXPECT_EQ(pc.dirty_bytes(), 0u);
}

// A local mount whose disk does 100 MiB/s and whose page cache copies at 1000 MiB/s, 1 MiB chunks.
MountConfig write_back(std::uint64_t dirty_limit) {
  MountConfig c = testing::local_mount("/c");
  c.page_cache_bandwidth = 1000.0 * kMiB;
  c.dirty_limit = dirty_limit;
  return c;
}

struct Timings {
  Time written = 0, synced = 0, read = 0;
  std::uint64_t bytes_synced = 0;
};

// Writes 50 MiB, fsyncs, then reads the file back.
Timings write_sync_read(const MountConfig& c) {
  Simulation sim;
  FileSystem fs(sim, "local", c);
  Timings t;
  sim.spawn("writer", [&] {
    auto fd = fs.create("/c/m.om", 0, 0, false, 50 * kMiB);
    fs.write(*fd, 50 * kMiB);
    t.written = sim.now();
    fs.fsync(*fd);
    t.synced = sim.now();
    fs.close(*fd);
    const Time before = sim.now();
    auto r = fs.read("/c/m.om", 0);
    EXPECT_TRUE(r && r->intact());
    t.read = sim.now() - before;
  });
  EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  t.bytes_synced = fs.stats().bytes_synced;
  return t;
}

TEST(PageCacheTest, AWriteBackMountWritesAtMemorySpeedAndFsyncWaitsForTheDisk) {
  const Timings t = write_sync_read(write_back(1024 * kMiB));
  EXPECT_EQ(t.written, 50_ms);                   // 50 MiB at 1000 MiB/s
  EXPECT_EQ(t.synced - t.written, 500_ms);       // 50 MiB at 100 MiB/s
  EXPECT_EQ(t.read, 50_ms);                      // from the page cache
  EXPECT_EQ(t.bytes_synced, 50 * kMiB);
  // Without a page cache every byte goes at the disk's rate and fsync has nothing left to write.
  MountConfig through = write_back(0);
  through.page_cache_bandwidth = 0;
  const Timings d = write_sync_read(through);
  EXPECT_EQ(d.written, 500_ms);
  EXPECT_EQ(d.synced, d.written);
  EXPECT_EQ(d.read, 500_ms);
  EXPECT_EQ(d.bytes_synced, 0u);
}

// The node's copies share page_cache_bandwidth; one copy gets at most page_cache_stream_bandwidth.
TEST(PageCacheTest, CopiesShareTheNodesRateUpToOneStreamsRate) {
  for (int writers : {1, 2}) {
    Simulation sim;
    MountConfig c = write_back(1024 * kMiB);
    c.page_cache_stream_bandwidth = 800.0 * kMiB;
    FileSystem fs(sim, "local", c);
    std::vector<Time> done;
    for (int i = 0; i < writers; ++i) {
      sim.spawn("w" + std::to_string(i), [&, i] {
        auto fd = fs.create("/c/f" + std::to_string(i), 0, i, false, 40 * kMiB);
        fs.write(*fd, 40 * kMiB);
        done.push_back(sim.now());
      });
    }
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    // 800 MiB/s alone; 500 each together (give or take a chunk: the rate is set as a chunk starts).
    for (Time t : done) EXPECT_NEAR(kernel::to_seconds(t), writers == 1 ? 0.050 : 0.080, 0.001) << writers;
  }
}

TEST(PageCacheTest, PastTheDirtyLimitWritersGoAtTheDisksRate) {
  MountConfig c = write_back(20 * kMiB);
  c.dirty_background = 20 * kMiB;  // no background writeback within the run
  const Timings t = write_sync_read(c);
  // 20 MiB fit (20 ms), the other 30 go through at 100 MiB/s (300 ms); fsync writes the 20.
  EXPECT_EQ(t.written, 320_ms);
  EXPECT_EQ(t.synced - t.written, 200_ms);
  EXPECT_EQ(t.bytes_synced, 20 * kMiB);
  // With the flusher running from 10 MiB (the default background: half the limit) it makes room
  // as the writer goes, so more of the file is copied at memory speed.
  const Timings b = write_sync_read(write_back(20 * kMiB));
  EXPECT_GT(b.written, 50_ms);
  EXPECT_LT(b.written, 320_ms);
}

TEST(PageCacheTest, AReplacedFilesDirtyBytesAreDropped) {
  Simulation sim;
  FileSystem fs(sim, "local", write_back(1024 * kMiB));
  Time synced = -1;
  sim.spawn("writer", [&] {
    auto a = fs.create("/c/a", 0, 0, false, 30 * kMiB);
    fs.write(*a, 30 * kMiB);
    fs.close(*a);
    auto b = fs.create("/c/b.tmp", 0, 0, false, 10 * kMiB);
    fs.write(*b, 10 * kMiB);
    // b replaces a: a's 30 dirty MiB go with it; b's fsync writes only its own 10.
    fs.rename("/c/b.tmp", "/c/a", 0);
    const Time before = sim.now();
    fs.fsync(*b);
    synced = sim.now() - before;
    fs.close(*b);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(synced, 100_ms);
  EXPECT_EQ(fs.stats().bytes_synced, 10 * kMiB);
}

}  // namespace
}  // namespace racesim::storage
