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

// `writers` processes at once on mount `c`, each writing `bytes` to a file of its own, then,
// when `sync`, fsyncing it: each one's time from the start to the end of its write, or with
// `sync` from the end of its write to the end of its fsync.
std::vector<Time> writers_at_once(const MountConfig& c, int writers, std::uint64_t bytes, bool sync) {
  Simulation sim;
  FileSystem fs(sim, "local", c);
  std::vector<Time> took;
  for (int i = 0; i < writers; ++i) {
    sim.spawn("w" + std::to_string(i), [&, i] {
      auto fd = fs.create("/c/f" + std::to_string(i), 0, i, false, bytes);
      fs.write(*fd, bytes);
      const Time written = sim.now();
      if (sync) fs.fsync(*fd);
      took.push_back(sync ? sim.now() - written : written);
    });
  }
  EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(took.size(), static_cast<std::size_t>(writers));
  return took;
}

// The node's copies share page_cache_bandwidth; one copy gets at most page_cache_stream_bandwidth.
TEST(PageCacheTest, CopiesShareTheNodesRateUpToOneStreamsRate) {
  MountConfig c = write_back(1024 * kMiB);
  c.page_cache_stream_bandwidth = 800.0 * kMiB;
  for (int writers : {1, 2}) {
    // 800 MiB/s alone; 500 each together (give or take a chunk: the rate is set as a chunk starts).
    for (Time t : writers_at_once(c, writers, 40 * kMiB, false)) {
      EXPECT_NEAR(kernel::to_seconds(t), writers == 1 ? 0.050 : 0.080, 0.001) << writers;
    }
  }
}

// One fsync goes to the disk at most at disk_stream_bandwidth; fsyncs at once share the disk's
// rate (a virtual disk that one stream does not keep busy).
TEST(PageCacheTest, OneFsyncGoesAtTheDisksStreamRateAndFsyncsAtOnceShareTheDisk) {
  MountConfig c = write_back(1024 * kMiB);
  c.disk_stream_bandwidth = 60.0 * kMiB;
  for (int writers : {1, 2, 3}) {
    const std::vector<Time> synced = writers_at_once(c, writers, 30 * kMiB, true);
    // Alone 30 MiB at 60 MiB/s (not the disk's 100): 0.5 s. Two at once 50 MiB/s each (the disk
    // shared, under the stream's cap): 0.6 s; three 33 MiB/s each: 0.9 s (give or take a chunk
    // of 1 MiB: the rate is set as a chunk starts, and the first fsync starts alone).
    const double expected = writers == 1 ? 0.5 : writers == 2 ? 0.6 : 0.9;
    for (Time t : synced) EXPECT_NEAR(kernel::to_seconds(t), expected, writers == 1 ? 0.001 : 0.02) << writers;
  }
  // Without the cap one fsync takes the whole disk.
  MountConfig uncapped = write_back(1024 * kMiB);
  const Timings t = write_sync_read(uncapped);
  EXPECT_EQ(t.synced - t.written, 500_ms) << "50 MiB at 100 MiB/s";
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

// How a file leaves in freeing(): unlinked, renamed over, truncated by open(O_TRUNC), or
// unlinked while open and then closed.
enum class Leaves { kUnlink, kRenameOver, kTruncate, kUnlinkOpen };

// A writer writes 20 MiB to a file, fsyncs it when `sync`, writes 20 MiB more (dirty), and the
// file's bytes go as `how` says: the time the call that frees them took.
Time freeing(const MountConfig& c, bool sync, Leaves how) {
  Simulation sim;
  FileSystem fs(sim, "local", c);
  Time took = -1;
  sim.spawn("writer", [&] {
    auto fd = fs.create("/c/f", 0, 0, false, 40 * kMiB);
    fs.write(*fd, 20 * kMiB);
    if (sync) fs.fsync(*fd);
    fs.write(*fd, 20 * kMiB);
    if (how != Leaves::kUnlinkOpen) fs.close(*fd);
    auto other = fs.create("/c/g", 0, 0, false, 0);
    fs.close(*other);
    const Time before = sim.now();
    switch (how) {
      case Leaves::kUnlink: fs.unlink("/c/f", 0); break;
      case Leaves::kRenameOver: fs.rename("/c/g", "/c/f", 0); break;
      case Leaves::kTruncate: fs.close(*fs.create("/c/f", 0, 0, storage::OpenMode::kTruncate, 0)); break;
      case Leaves::kUnlinkOpen:
        fs.unlink("/c/f", 0);
        EXPECT_EQ(sim.now(), before) << "nothing is freed while a descriptor holds it";
        fs.close(*fd);
        break;
    }
    took = sim.now() - before;
  });
  EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  return took;
}

// A write-back mount that frees dirty bytes at 1000 MiB/s and bytes on the disk at 100.
MountConfig frees_both() {
  MountConfig c = write_back(1024 * kMiB);
  c.truncate_bandwidth = 1000.0 * kMiB;
  c.truncate_disk_bandwidth = 100.0 * kMiB;
  return c;
}

// Freeing a file's bytes: those still dirty at truncate_bandwidth (pages only), those written
// back at truncate_disk_bandwidth (their blocks too), however the file goes.
TEST(PageCacheTest, BytesOnTheDiskAreFreedAtTheirOwnRate) {
  MountConfig c = frees_both();
  for (Leaves how : {Leaves::kUnlink, Leaves::kRenameOver, Leaves::kTruncate, Leaves::kUnlinkOpen}) {
    const int at = static_cast<int>(how);
    // 40 MiB dirty at 1000 MiB/s: 40 ms. Synced after 20 MiB: 20 of them on the disk at 100
    // MiB/s (200 ms) and 20 dirty (20 ms).
    EXPECT_EQ(freeing(c, false, how), 40_ms) << at;
    EXPECT_EQ(freeing(c, true, how), 220_ms) << at;
  }
  // Without a rate of their own, bytes on the disk are freed as the rest.
  c.truncate_disk_bandwidth = 0;
  EXPECT_EQ(freeing(c, true, Leaves::kUnlink), 40_ms);
  // Nor does a rate for them alone free the dirty bytes at a cost.
  c.truncate_bandwidth = 0;
  c.truncate_disk_bandwidth = 100.0 * kMiB;
  EXPECT_EQ(freeing(c, true, Leaves::kRenameOver), 200_ms);
}

// A truncation gives a file's blocks back: what a later writer writes over it is not on the disk
// until it is synced, even where it lands past the truncated bytes (a writer that kept its offset).
TEST(PageCacheTest, ATruncatedFilesBlocksAreNotCountedAgain) {
  Simulation sim;
  FileSystem fs(sim, "local", frees_both());
  Time took = -1;
  sim.spawn("writers", [&] {
    auto a = fs.create("/c/f", 0, 0, false, 40 * kMiB);
    fs.write(*a, 20 * kMiB);
    fs.fsync(*a);  // 20 MiB on the disk
    auto b = fs.create("/c/f", 0, 1, storage::OpenMode::kTruncate, 40 * kMiB);  // frees them
    fs.write(*a, 20 * kMiB);  // a's offset: bytes 20-40 MiB, a hole before them, dirty
    fs.close(*a);
    fs.close(*b);
    const Time before = sim.now();
    fs.unlink("/c/f", 0);
    took = sim.now() - before;
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(took, 40_ms) << "the file's 40 MiB at the dirty rate: none of it on the disk";
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
