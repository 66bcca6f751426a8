// The storage model's operations and consistency modes, in virtual time.
#include "sim/storage/fs.h"
#include "sim/storage/faults.h"
#include "tests/sim/storage/test_mounts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace racesim::storage {
namespace {

// A read's result as an optional (nullopt: an error such as ENOENT).
std::optional<ReadResult> opt(kernel::Result<ReadResult> r) {
  return r ? std::optional<ReadResult>(*r) : std::nullopt;
}

// Writes `bytes` into a new file `path` by rank 0 on client 0 and closes it. REQUIRES: a process.
void write_whole(FileSystem& fs, const std::string& path, std::uint64_t bytes) {
  auto fd = fs.create(path, 0, 0, false, bytes);
  ASSERT_TRUE(fd.is_ok());
  fs.write(*fd, bytes);
  fs.close(*fd);
}

using namespace kernel::time_literals;
using kernel::Simulation;
using kernel::Time;

using testing::kMiB;

// A mount with round numbers: 1 ms per metadata op, 100 MiB/s shared, 100 MiB/s per client,
// 1 MiB chunks.
MountConfig mount(MountKind kind, std::string root = "/c") {
  MountConfig c;
  c.kind = kind;
  c.root = std::move(root);
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
    torn = opt(fs.read("/c/m.om", 1));
    sim.sleep_for(1_s);
    whole = opt(fs.read("/c/m.om", 1));
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
        auto fd = fs.create("/c/f" + std::to_string(i), i, i, false, 40 * kMiB);
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

// A mount with read_bandwidth reads at it (a read of memory is faster than a write to it);
// writes keep client_bandwidth. Without it reads go at the rates of writes.
TEST(FileSystemTest, ReadsGoAtTheReadBandwidthWhereTheMountSetsOne) {
  for (double read_mib : {0.0, 200.0}) {
    Simulation sim;
    MountConfig c = mount(MountKind::kLocal);
    c.meta_latency = 0;
    c.bandwidth = 1000.0 * kMiB;
    c.read_bandwidth = read_mib * kMiB;
    FileSystem fs(sim, "local", c);
    Time written = -1, read = -1;
    sim.spawn("w", [&] {
      write_whole(fs, "/c/f", 100 * kMiB);
      written = sim.now();
      const auto r = opt(fs.read("/c/f", 0));
      ASSERT_TRUE(r.has_value());
      EXPECT_EQ(r->bytes, 100 * kMiB);
      read = sim.now() - written;
    });
    sim.run();
    EXPECT_NEAR(kernel::to_seconds(written), 1.0, 0.01) << "100 MiB at client_bandwidth 100 MiB/s";
    EXPECT_NEAR(kernel::to_seconds(read), read_mib > 0 ? 0.5 : 1.0, 0.01) << "read_bandwidth " << read_mib;
  }
}

// Reads through a page cache share read_shared_bandwidth with their own node's reads only: two
// nodes' readers at once each read at read_bandwidth, and two of one node's share. The later
// reader is client 5, whose first transfer grows the per-client counts while client 0 reads.
TEST(FileSystemTest, ReadsThroughAPageCacheShareTheirNodesReadRate) {
  for (int second : {5, 0}) {
    Simulation sim;
    MountConfig c = mount(MountKind::kLocal);
    c.meta_latency = 0;
    c.page_cache_bandwidth = 1000.0 * kMiB;
    c.dirty_limit = 1ull << 40;
    c.read_bandwidth = 100.0 * kMiB;
    c.read_shared_bandwidth = 100.0 * kMiB;
    FileSystem fs(sim, "local", c);
    Time done_first = -1, done_second = -1;
    sim.spawn("w", [&] {
      write_whole(fs, "/c/f", 100 * kMiB);
      const Time t0 = sim.now();
      sim.spawn("r2", [&, t0] {
        sim.sleep_for(100_ms);
        ASSERT_TRUE(opt(fs.read("/c/f", second)).has_value());
        done_second = sim.now() - t0;
      });
      ASSERT_TRUE(opt(fs.read("/c/f", 0)).has_value());
      done_first = sim.now() - t0;
    });
    sim.run();
    if (second == 5) {
      EXPECT_NEAR(kernel::to_seconds(done_first), 1.0, 0.01) << "another node's read shares nothing";
      EXPECT_NEAR(kernel::to_seconds(done_second), 1.1, 0.01);
    } else {
      // From 0.1 s both read at 50 MiB/s: the first's last 90 MiB take 1.8 s, then the second
      // reads its last 10 MiB alone.
      EXPECT_NEAR(kernel::to_seconds(done_first), 1.9, 0.03);
      EXPECT_NEAR(kernel::to_seconds(done_second), 2.0, 0.03);
    }
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
    fs.create("/c/l", 0, 0, false, 0);
    got.push_back(fs.lock("/c/l", 0, false, true));
    sim.sleep_for(2_s);
    fs.unlock("/c/l", 0);
  });
  sim.spawn("r2", [&] {
    sim.sleep_for(100_ms);
    got.push_back(fs.lock("/c/l", 0, false, true));  // shared with r1 at once
    got.push_back(fs.lock("/c/l", 0, true, false) == FsError::kWouldBlock ? FsError::kOk : FsError::kExists);
    sim.sleep_for(2_s);
    fs.unlock("/c/l", 0);
  });
  sim.spawn("w", [&] {
    sim.sleep_for(200_ms);
    EXPECT_EQ(fs.lock("/c/l", 0, true, true, 500_ms), FsError::kTimedOut);
    EXPECT_EQ(fs.lock("/c/l", 0, true, true), FsError::kOk);
    writer_at = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_THAT(got, ::testing::ElementsAre(FsError::kOk, FsError::kOk, FsError::kOk));
  // r2's failed non-blocking conversion to exclusive dropped its shared lock (flock(2) removes
  // the old lock first, as Linux does), so the writer waits for r1 alone.
  EXPECT_GE(writer_at, 2000_ms);
  EXPECT_LT(writer_at, 2100_ms);
}

TEST(FileSystemTest, TruncatingAFileBeingReadTearsTheRead) {
  // O_CREAT|O_TRUNC by a second writer empties the same inode: a reader in the middle of reading
  // the published file gets a mixture; a rename over the name would not have touched it.
  for (bool by_rename : {false, true}) {
    Simulation sim;
    FileSystem fs(sim, "local", mount(MountKind::kLocal));
    std::optional<ReadResult> r;
    sim.spawn("first", [&] {
      auto fd = fs.create("/c/m.om", 0, 0, OpenMode::kTruncate, 50 * kMiB);
      fs.write(*fd, 50 * kMiB);
      fs.close(*fd);
    });
    sim.spawn("reader", [&] {
      sim.sleep_for(1_s);
      r = opt(fs.read("/c/m.om", 0));  // 500 ms of transfer (alone), longer once shared
    });
    sim.spawn("second", [&] {
      sim.sleep_for(1200_ms);
      if (by_rename) {
        auto fd = fs.create("/c/m.om.tmp", 0, 1, OpenMode::kExclusive, 50 * kMiB);
        fs.write(*fd, 50 * kMiB);
        fs.close(*fd);
        fs.rename("/c/m.om.tmp", "/c/m.om", 0);
      } else {
        auto fd = fs.create("/c/m.om", 0, 1, OpenMode::kTruncate, 50 * kMiB);
        fs.write(*fd, 50 * kMiB);
        fs.close(*fd);
      }
    });
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->bytes, 50 * kMiB);
    EXPECT_EQ(r->content.writer, 0);
    EXPECT_EQ(r->changed, !by_rename) << (by_rename ? "rename" : "truncate");
    EXPECT_EQ(r->intact(), by_rename);
  }
}

// Two writers truncate and write one file through their own descriptors (two ranks compiling at
// once, each dumping with O_CREAT|O_TRUNC). The first keeps writing at its own offset after the
// second's truncation: its later bytes land in the second's version. When the second writes those
// offsets afterwards (it is behind), the file ends whole; when the first writes them last (it was
// paused, here for 2 s halfway), the file stays a mixture of two versions for good, as on Linux.
TEST(FileSystemTest, AnOlderWriterStillWritingAfterATruncationLeavesAMixture) {
  for (bool first_paused : {false, true}) {
    Simulation sim;
    FileSystem fs(sim, "local", mount(MountKind::kLocal));
    sim.spawn("first", [&] {
      auto fd = fs.create("/c/m.om", 0, 0, OpenMode::kTruncate, 40 * kMiB);
      fs.write(*fd, 20 * kMiB);  // 200 ms alone
      if (first_paused) sim.sleep_for(2_s);
      fs.write(*fd, 20 * kMiB);  // from offset 20 MiB: into the second's version
      fs.close(*fd);
    });
    sim.spawn("second", [&] {
      sim.sleep_for(100_ms);
      auto fd = fs.create("/c/m.om", 0, 1, OpenMode::kTruncate, 40 * kMiB);
      fs.write(*fd, 40 * kMiB);
      fs.close(*fd);
    });
    std::optional<ReadResult> r;
    sim.spawn("reader", [&] {
      sim.sleep_for(10_s);
      r = opt(fs.read("/c/m.om", 0));
    });
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->content.writer, 1) << "the last truncation's identity";
    EXPECT_EQ(r->bytes, 40 * kMiB);
    EXPECT_EQ(r->intact(), !first_paused) << (first_paused ? "the older writer's bytes landed last" : "rewritten");
    EXPECT_EQ(fs.contents().torn, first_paused ? 1u : 0u);
  }
}

TEST(FileSystemTest, OpenModesKeepAppendAndExclusive) {
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  sim.spawn("p", [&] {
    auto fd = fs.create("/c/f", 0, 0, OpenMode::kTruncate, 10);
    fs.write(*fd, 10);
    fs.close(*fd);
    // O_CREAT alone: the content stays; rewriting 4 bytes from offset 0 keeps the size.
    fd = fs.create("/c/f", 0, 1, OpenMode::kKeep, 10);
    fs.write(*fd, 4);
    fs.close(*fd);
    EXPECT_EQ(fs.stat("/c/f", 0).size, 10u);
    EXPECT_EQ(fs.stat("/c/f", 0).content.writer, 0);
    // Append: at the end.
    fd = fs.create("/c/f", 0, 1, OpenMode::kAppend, 0);
    fs.write(*fd, 6);
    fs.close(*fd);
    EXPECT_EQ(fs.stat("/c/f", 0).size, 16u);
    auto missing = fs.create("/c/nope", 0, 0, OpenMode::kAppend, 0);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.message(), "ENOENT");
    auto taken = fs.create("/c/f", 0, 0, OpenMode::kExclusive, 0);
    ASSERT_FALSE(taken);
    EXPECT_EQ(taken.message(), "EEXIST");
    // O_TRUNC: a new content identity, size 0.
    fd = fs.create("/c/f", 0, 2, OpenMode::kTruncate, 7);
    EXPECT_EQ(fs.stat("/c/f", 0).size, 0u);
    EXPECT_EQ(fs.stat("/c/f", 0).content.writer, 2);
    EXPECT_EQ(fs.write(12345, 1), FsError::kBadFd);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
}

TEST(FileSystemTest, DirectoriesFollowLinuxRules) {
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  sim.spawn("p", [&] {
    auto make = [&](const char* path) {
      auto fd = fs.create(path, 0, 0, OpenMode::kTruncate, 0);
      if (!fd) return fd.message();
      fs.close(*fd);
      return std::string("ok");
    };
    // A name is created only in a directory that exists: the mount point, or one made.
    EXPECT_EQ(make("/c/missing/f"), "ENOENT");
    EXPECT_EQ(fs.mkdir("/c/a/b", 0), FsError::kNotFound);
    EXPECT_EQ(fs.mkdir("/c", 0), FsError::kExists);
    EXPECT_TRUE(fs.stat("/c", 0).dir);
    ASSERT_EQ(fs.mkdir("/c/a", 0), FsError::kOk);
    ASSERT_EQ(fs.mkdir("/c/a/b", 0), FsError::kOk);
    EXPECT_EQ(make("/c/a/b/f"), "ok");
    ASSERT_EQ(fs.mkdir("/c/empty", 0), FsError::kOk);
    ASSERT_EQ(fs.mkdir("/c/full", 0), FsError::kOk);
    EXPECT_EQ(make("/c/full/x"), "ok");
    EXPECT_EQ(make("/c/file"), "ok");
    // A directory replaces only an empty directory, and never a file.
    EXPECT_EQ(fs.rename("/c/a", "/c/full", 0), FsError::kNotEmpty);
    EXPECT_EQ(fs.rename("/c/a", "/c/file", 0), FsError::kNotDir);
    EXPECT_EQ(fs.rename("/c/a", "/c/a/b/c", 0), FsError::kInvalid);
    EXPECT_EQ(fs.rename("/c/a", "/c", 0), FsError::kBusy);
    EXPECT_EQ(fs.rename("/c", "/d", 0), FsError::kBusy) << "the mount point does not move";
    EXPECT_EQ(fs.rename("/c/file", "/c/empty", 0), FsError::kIsDir);
    EXPECT_EQ(fs.rename("/c/file", "/c/nowhere/file", 0), FsError::kNotFound);
    EXPECT_TRUE(fs.stat("/c/full/x", 0).exists) << "a refused rename changes nothing";
    EXPECT_TRUE(fs.stat("/c/a/b/f", 0).exists);
    ASSERT_EQ(fs.rename("/c/a", "/c/empty", 0), FsError::kOk);
    EXPECT_TRUE(fs.stat("/c/empty/b/f", 0).exists);
    EXPECT_FALSE(fs.stat("/c/a", 0).exists);
    EXPECT_EQ(fs.copy("/c/file", "/c/nowhere/copy", 0, 0), FsError::kNotFound);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
}

TEST(FileSystemTest, GlobIsNonRecursiveAndSkipsHiddenNames) {
  EXPECT_TRUE(FileSystem::glob_match("*.om", "model.om", false));
  EXPECT_FALSE(FileSystem::glob_match("*.om", "model.om.tmp.3", false));
  EXPECT_TRUE(FileSystem::glob_match("*key*", "a_key_b", false));
  EXPECT_FALSE(FileSystem::glob_match("*.om", ".model.om", false));
  EXPECT_TRUE(FileSystem::glob_match("*.om", ".model.om", true));
  EXPECT_TRUE(FileSystem::glob_match(".m?.om", ".m1.om", false));
  EXPECT_FALSE(FileSystem::glob_match("m?.om", "m12.om", false));
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  sim.spawn("p", [&] {
    ASSERT_EQ(fs.mkdir("/c/sub", 0), FsError::kOk);
    for (const char* path : {"/c/a.om", "/c/.hidden.om", "/c/b.om.tmp.1", "/c/sub/x.om"}) {
      ASSERT_TRUE(fs.create(path, 0, 0, OpenMode::kTruncate, 0)) << path;
    }
    EXPECT_THAT(fs.list("/c/*.om", 0), ::testing::ElementsAre("/c/a.om"));
    EXPECT_THAT(fs.list("/c/*.om", 0, true), ::testing::ElementsAre("/c/.hidden.om", "/c/a.om"));
    // ORT's scan for a name containing the key sees the temporary file too.
    EXPECT_THAT(fs.list("/c/", ".om", 0),
                ::testing::ElementsAre("/c/.hidden.om", "/c/a.om", "/c/b.om.tmp.1"));
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
}

// any() is list()'s answer to "is there anything?": on two file systems built alike, the same
// calls give the same answer, take the same time and count the same metadata operations (nfs
// through its directory cache, which any() fills and reuses as list() does).
TEST(FileSystemTest, AnyAnswersWhatListWouldAtTheSameCost) {
  const std::vector<std::pair<std::string, bool>> calls = {
      {"/c/*.om", false}, {"/c/*.om", true}, {"/c/*.x", false}, {"/c/.h*", false}, {"/c/.h*", true},
      {"/c/s?b", false},  {"/c/sub/*", false}, {"/nodir/*", false}, {"c", false}, {"/c/*.om", false}};
  for (MountKind kind : {MountKind::kLocal, MountKind::kLustre, MountKind::kNfs}) {
    Simulation sim;
    FileSystem by_list(sim, "a", mount(kind));
    FileSystem by_any(sim, "b", mount(kind));
    std::vector<std::string> listed, answered;
    auto prepare = [&](FileSystem& fs) {
      ASSERT_EQ(fs.mkdir("/c/sub", 0), FsError::kOk);
      for (const char* path : {"/c/a.om", "/c/.hidden.om", "/c/b.om.tmp.1"}) {
        ASSERT_TRUE(fs.create(path, 0, 0, OpenMode::kTruncate, 0)) << path;
      }
    };
    sim.spawn("list", [&] {
      prepare(by_list);
      for (const auto& [pattern, hidden] : calls) {
        const Time t0 = sim.now();
        const std::uint64_t ops = by_list.stats().meta_ops;
        const bool found = !by_list.list(pattern, 1, hidden).empty();
        listed.push_back(pattern + (found ? " yes " : " no ") + std::to_string(sim.now() - t0) + " ns " +
                         std::to_string(by_list.stats().meta_ops - ops) + " ops");
      }
    });
    sim.spawn("any", [&] {
      prepare(by_any);
      for (const auto& [pattern, hidden] : calls) {
        const Time t0 = sim.now();
        const std::uint64_t ops = by_any.stats().meta_ops;
        const bool found = by_any.any(pattern, 1, hidden);
        answered.push_back(pattern + (found ? " yes " : " no ") + std::to_string(sim.now() - t0) + " ns " +
                           std::to_string(by_any.stats().meta_ops - ops) + " ops");
      }
    });
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(answered, listed) << static_cast<int>(kind);
    ASSERT_EQ(listed.size(), calls.size());
    EXPECT_EQ(listed[0], "/c/*.om yes 1000000 ns 1 ops") << static_cast<int>(kind);
    EXPECT_EQ(listed[2], "/c/*.x no 1000000 ns 1 ops") << static_cast<int>(kind);
  }
  // A listing an eio fault fails: empty and kIo from both.
  Simulation sim;
  kernel::FaultSeam seam;
  kernel::ActiveFault f("f", kEio, 0, kernel::RandomStream(1, "fault/f/0"));
  f.set_arg("rate", [](kernel::RandomStream&, int) { return 1.0; });
  seam.add(std::move(f));
  FileSystem fs(sim, "shared", mount(MountKind::kLocal));
  fs.set_faults(&seam, "shared");
  FsError listed = FsError::kOk, answered = FsError::kOk;
  bool found = true;
  kernel::Process* p = sim.spawn("rank 0", [&] {
    EXPECT_TRUE(fs.list("/c/*", 0, false, &listed).empty());
    found = fs.any("/c/*", 0, false, &answered);
  });
  seam.bind(p, 0);
  sim.run();
  EXPECT_EQ(listed, FsError::kIo);
  EXPECT_EQ(answered, FsError::kIo);
  EXPECT_FALSE(found);
}

TEST(FileSystemTest, MkdirAndDirectoryRenameMoveEverythingAtOnce) {
  Simulation sim;
  FileSystem fs(sim, "lustre", mount(MountKind::kLustre));
  sim.spawn("p", [&] {
    EXPECT_EQ(fs.mkdir("/c/.tmp-1", 0), FsError::kOk);
    EXPECT_EQ(fs.mkdir("/c/.tmp-1", 0), FsError::kExists);
    auto fd = fs.create("/c/.tmp-1/m.om", 0, 1, OpenMode::kTruncate, kMiB);
    fs.write(*fd, kMiB);
    fs.close(*fd);
    EXPECT_TRUE(fs.list("/c/*", 0).empty());  // hidden
    EXPECT_EQ(fs.rename("/c/.tmp-1", "/c/v1", 0), FsError::kOk);
    EXPECT_TRUE(fs.stat("/c/v1", 0).exists);
    EXPECT_FALSE(fs.stat("/c/.tmp-1/m.om", 0).exists);
    auto r = opt(fs.read("/c/v1/m.om", 0));
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->intact());
    EXPECT_THAT(fs.list("/c/*", 0), ::testing::ElementsAre("/c/v1"));
    EXPECT_EQ(fs.unlink("/c/v1/m.om", 0), FsError::kOk);
    EXPECT_EQ(fs.unlink("/c/v1/m.om", 0), FsError::kNotFound);
    EXPECT_FALSE(fs.read("/c/v1/m.om", 0));
    EXPECT_EQ(fs.rename("/c/v1/m.om", "/c/x", 0), FsError::kNotFound);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
}

TEST(FileSystemTest, CopyOfATornFileIsTorn) {
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  std::optional<ReadResult> whole_copy, torn_copy;
  sim.spawn("writer", [&] {
    auto fd = fs.create("/c/m.om", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    fs.write(*fd, 10 * kMiB);  // 100 ms
    fs.close(*fd);
  });
  sim.spawn("copier", [&] {
    sim.sleep_for(50_ms);
    EXPECT_EQ(fs.copy("/c/m.om", "/c/torn.om", 0, 1), FsError::kOk);
    sim.sleep_for(1_s);
    EXPECT_EQ(fs.copy("/c/m.om", "/c/whole.om", 0, 1), FsError::kOk);
    EXPECT_EQ(fs.copy("/c/nope", "/c/x", 0, 1), FsError::kNotFound);
    torn_copy = opt(fs.read("/c/torn.om", 0));
    whole_copy = opt(fs.read("/c/whole.om", 0));
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  ASSERT_TRUE(torn_copy && whole_copy);
  EXPECT_FALSE(torn_copy->intact());
  EXPECT_EQ(torn_copy->content.length, 10 * kMiB);
  EXPECT_TRUE(whole_copy->intact());
  EXPECT_EQ(whole_copy->content.writer, 0);
}

TEST(FileSystemTest, AProcessThatDiesReleasesItsLocksAndItsFilesStayTorn) {
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  kernel::Process* writer = sim.spawn("writer", [&] {
    auto fd = fs.create("/c/m.om", 0, 0, OpenMode::kTruncate, 100 * kMiB);
    fs.lock("/c/m.om", 0, true, true);
    fs.write(*fd, 100 * kMiB);  // 1 s; killed at 300 ms
    fs.unlock("/c/m.om", 0);
    fs.close(*fd);
  });
  Time got = -1;
  std::optional<ReadResult> r;
  sim.spawn("reader", [&] {
    sim.sleep_for(100_ms);
    EXPECT_EQ(fs.lock("/c/m.om", 0, false, true), FsError::kOk);
    got = sim.now();
    r = opt(fs.read("/c/m.om", 0));
  });
  sim.schedule_at(300_ms, [&] {
    sim.kill(writer);
    fs.release(writer);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_GE(got, 300_ms);
  EXPECT_LT(got, 310_ms);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->complete);  // the kernel closed it
  EXPECT_LT(r->bytes, 100 * kMiB);
  EXPECT_GE(r->bytes, 29 * kMiB);
  EXPECT_FALSE(r->intact());
}

TEST(FileSystemTest, ReleasingADeadProcessClosesItsOwnFilesOnly) {
  // `doomed` holds two files open when it is killed at 50 ms; `survivor` holds one across it.
  Simulation sim;
  FileSystem fs(sim, "local", mount(MountKind::kLocal));
  int doomed_fds[2] = {-1, -1};
  kernel::Process* doomed = sim.spawn("doomed", [&] {
    doomed_fds[0] = *fs.create("/c/a", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    doomed_fds[1] = *fs.create("/c/b", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    fs.write(doomed_fds[0], 10 * kMiB);
  });
  FsError survivor_write = FsError::kBadFd, survivor_close = FsError::kBadFd;
  sim.spawn("survivor", [&] {
    const int fd = *fs.create("/c/s", 1, 1, OpenMode::kTruncate, kMiB);
    sim.sleep_for(100_ms);
    survivor_write = fs.write(fd, kMiB);
    survivor_close = fs.close(fd);
  });
  FsError after[2] = {FsError::kOk, FsError::kOk};
  sim.spawn("checker", [&] {
    sim.sleep_for(60_ms);
    for (int i = 0; i < 2; ++i) after[i] = fs.close(doomed_fds[i]);
  });
  sim.schedule_at(50_ms, [&] {
    sim.kill(doomed);
    fs.release(doomed);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(after[0], FsError::kBadFd);  // the kernel closed both of the dead process's files
  EXPECT_EQ(after[1], FsError::kBadFd);
  EXPECT_EQ(survivor_write, FsError::kOk);  // and left the other process's open
  EXPECT_EQ(survivor_close, FsError::kOk);
}

TEST(FileSystemTest, NfsClientSeesItsOwnCreatesAndWritesAtOnce) {
  // Ranks on one node share the nfs client: a poller on the writer's node sees the new name at
  // its next listing and the growing size at once; a poller on another node waits out acdirmin.
  Simulation sim;
  FileSystem fs(sim, "nfs", mount(MountKind::kNfs));
  Time same = -1, other = -1;
  std::uint64_t same_size = 0;
  sim.spawn("writer", [&] {
    sim.sleep_for(1_s);
    auto fd = fs.create("/c/m.om", 0, 0, OpenMode::kTruncate, 50 * kMiB);
    fs.write(*fd, 50 * kMiB);
    fs.close(*fd);
  });
  auto poller = [&](int client, Time& seen) {
    for (int i = 0; i < 1000 && seen < 0; ++i) {
      if (!fs.list("/c/*.om", client).empty()) {
        seen = sim.now();
        if (client == 0) {
          sim.sleep_for(100_ms);
          same_size = fs.stat("/c/m.om", 0).size;
        }
      } else {
        sim.sleep_for(200_ms);
      }
    }
  };
  sim.spawn("same node", [&] { poller(0, same); });
  sim.spawn("other node", [&] { poller(1, other); });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_GE(same, 1_s);
  EXPECT_LT(same, 1300_ms);
  EXPECT_GT(same_size, 0u);
  EXPECT_LT(same_size, 50 * kMiB);
  EXPECT_GE(other, 30_s);
}

TEST(FileSystemTest, TransfersOfOneClientShareItsBandwidth) {
  // Two 50 MiB writes from one client capped at 50 MiB/s: each gets 25 MiB/s and ends at 2 s;
  // from two clients each gets 50 MiB/s and ends at 1 s.
  for (bool one_client : {true, false}) {
    Simulation sim;
    MountConfig c = mount(MountKind::kLustre);
    c.meta_latency = 0;
    c.client_bandwidth = 50.0 * kMiB;
    FileSystem fs(sim, "lustre", c);
    std::vector<Time> done;
    for (int i = 0; i < 2; ++i) {
      sim.spawn("w" + std::to_string(i), [&, i] {
        auto fd = fs.create("/c/f" + std::to_string(i), one_client ? 0 : i, i, OpenMode::kTruncate, 50 * kMiB);
        fs.write(*fd, 50 * kMiB);
        done.push_back(sim.now());
      });
    }
    sim.run();
    ASSERT_EQ(done.size(), 2u);
    const double expected = one_client ? 2.0 : 1.0;
    for (Time t : done) EXPECT_NEAR(kernel::to_seconds(t), expected, 0.03) << one_client;
  }
}

TEST(FileSystemTest, AClientsTransfersKeepTheirShareWhenAnotherClientJoinsLater) {
  // Client 0 writes two 50 MiB files at once under a 50 MiB/s client cap: 25 MiB/s each, both
  // end at 2 s. At 0.5 s client 4096 starts a 50 MiB write of its own (the per-client counts
  // grow to hold it while client 0's transfers sleep): 50 MiB/s, ends at 1.5 s, and client 0's
  // rate is unchanged. At 3 s client 0 writes alone again: its count is back to one, so 50
  // MiB/s, ending at 4 s.
  Simulation sim;
  MountConfig c = mount(MountKind::kLustre);
  c.meta_latency = 0;
  c.bandwidth = 1024.0 * kMiB;
  c.client_bandwidth = 50.0 * kMiB;
  FileSystem fs(sim, "lustre", c);
  std::vector<std::pair<std::string, Time>> done;
  auto writer = [&](std::string name, int client, Time start) {
    sim.spawn(name, [&, name, client, start] {
      sim.sleep_for(start);
      auto fd = fs.create("/c/" + name, client, client, OpenMode::kTruncate, 50 * kMiB);
      ASSERT_TRUE(fd);
      ASSERT_EQ(fs.write(*fd, 50 * kMiB), FsError::kOk);
      done.emplace_back(name, sim.now());
    });
  };
  writer("a", 0, 0);
  writer("b", 0, 0);
  writer("late", 4096, 500_ms);
  writer("again", 0, 3_s);
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  std::map<std::string, double> at;
  for (const auto& [name, t] : done) at[name] = kernel::to_seconds(t);
  ASSERT_EQ(at.size(), 4u);
  EXPECT_NEAR(at["a"], 2.0, 0.03);
  EXPECT_NEAR(at["b"], 2.0, 0.03);
  EXPECT_NEAR(at["late"], 1.5, 0.03);
  EXPECT_NEAR(at["again"], 4.0, 0.03);
}

TEST(FileSystemTest, MetadataJitterComesFromTheMountsStream) {
  auto run = [](std::uint64_t seed) {
    Simulation sim({.seed = seed});
    MountConfig c = mount(MountKind::kLocal);
    c.meta_jitter = 10_ms;
    FileSystem fs(sim, "local", c, sim.stream("fs/local"));
    std::vector<Time> at;
    sim.spawn("p", [&] {
      for (int i = 0; i < 20; ++i) {
        fs.stat("/x", 0);
        at.push_back(sim.now());
      }
    });
    sim.run();
    return at;
  };
  const auto a = run(1), b = run(1), c = run(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Each op costs 1 ms plus [0, 10 ms): 20 ops take between 20 and 220 ms, and not all equal.
  EXPECT_GE(a.back(), 20_ms);
  EXPECT_LT(a.back(), 220_ms);
  EXPECT_NE(a[1] - a[0], a[2] - a[1]);
}

TEST(FileSystemTest, NfsAttributeCacheLifetimeGrowsWhileNothingChanges) {
  // A client stats an unchanged file every 500 ms: revalidations at 0, 3, 9, 21 s (lifetime
  // 3 -> 6 -> 12 -> 24 s). A change at 22 s is seen at the revalidation at 45 s; with acregmax
  // 10 s the lifetime stops at 10 s (revalidations at 0, 3, 9, 19, 29 s): seen at 29 s.
  for (Time acregmax : {60_s, 10_s}) {
    Simulation sim;
    MountConfig c = mount(MountKind::kNfs);
    c.meta_latency = 0;
    c.acregmax = acregmax;
    FileSystem fs(sim, "nfs", c);
    Time seen = -1;
    sim.spawn("writer", [&] {
      auto fd = fs.create("/c/f", 0, 0, OpenMode::kTruncate, kMiB);
      fs.close(*fd);  // empty until 22 s
      sim.sleep_for(22_s);
      fd = fs.create("/c/f", 0, 0, OpenMode::kAppend, kMiB);
      fs.write(*fd, kMiB);
      fs.close(*fd);
    });
    sim.spawn("watcher", [&] {
      for (int i = 0; i < 200 && seen < 0; ++i) {
        if (fs.stat("/c/f", 1).size > 0) seen = sim.now();
        sim.sleep_for(500_ms);
      }
    });
    sim.run();
    if (acregmax == 60_s) {
      EXPECT_EQ(seen, 45_s);
    } else {
      EXPECT_EQ(seen, 29_s);
    }
  }
}

// Two lookups of a missing name by one client at the same moment both go to the server; the
// second to return finds the lifetime the first set still running, so it stays at acdirmin (30
// s), as nfs_update_inode keeps it: the file created at 1 s is seen at the first lookup after
// 30 s. (Each used to count as a revalidation that found nothing changed and doubled the
// negative entry to 60 s.) After it ran out, an unchanged refresh doubles it.
TEST(FileSystemTest, NfsLookupsAtOnceDoNotLengthenANegativeEntry) {
  Simulation sim;
  FileSystem fs(sim, "nfs", mount(MountKind::kNfs));
  Time seen = -1;
  std::vector<CacheUse> first_two;
  sim.spawn("writer", [&] {
    sim.sleep_for(1_s);
    fs.create("/c/late", 0, 0, OpenMode::kTruncate, 0);
  });
  for (int i = 0; i < 2; ++i) {
    sim.spawn("early " + std::to_string(i), [&] {
      EXPECT_FALSE(fs.stat("/c/late", 1).exists);
      first_two.push_back(fs.last_cache_use());
    });
  }
  sim.spawn("poller", [&] {
    sim.sleep_for(100_ms);
    for (int i = 0; i < 1000 && seen < 0; ++i) {
      if (fs.stat("/c/late", 1).exists) seen = sim.now();
      sim.sleep_for(500_ms);
    }
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(first_two, (std::vector<CacheUse>{CacheUse::kMiss, CacheUse::kMiss}));
  EXPECT_GE(seen, 30_s);
  EXPECT_LT(seen, 31_s);

  // The lifetime alone: set at 0 to 30 s; a refresh within it keeps it (and when it was set);
  // one after it ran out and unchanged doubles it; a change starts it again at the minimum.
  CacheLifetime life;
  life.refresh(0, false, 30_s, 60_s);
  EXPECT_EQ(life.lifetime, 30_s);
  EXPECT_TRUE(life.fresh(29_s));
  EXPECT_FALSE(life.fresh(30_s));
  life.refresh(10_s, false, 30_s, 60_s);
  EXPECT_EQ(life.lifetime, 30_s);
  EXPECT_EQ(life.lifetime_set_at, 0);
  EXPECT_TRUE(life.fresh(39_s));
  life.refresh(40_s, false, 30_s, 60_s);
  EXPECT_EQ(life.lifetime, 60_s);
  life.refresh(200_s, false, 30_s, 60_s);
  EXPECT_EQ(life.lifetime, 60_s) << "capped at the maximum";
  life.refresh(201_s, true, 30_s, 60_s);
  EXPECT_EQ(life.lifetime, 30_s);
  EXPECT_EQ(life.lifetime_set_at, 201_s);
}

// A client that looked a name up and found it missing keeps that negative entry (acdirmin, 30 s):
// an open of the name fails with ENOENT from the cache, with no round trip, until it ends. The
// writer's own client and a client that never looked see the file at once.
TEST(FileSystemTest, NfsOpenOfANameCachedMissingFailsUntilTheEntryEnds) {
  Simulation sim;
  FileSystem fs(sim, "nfs", mount(MountKind::kNfs));
  std::vector<std::string> seen;  // "client@seconds: result"
  sim.spawn("writer", [&] {
    sim.sleep_for(1_s);
    auto fd = fs.create("/c/idx.npy", 0, 0, OpenMode::kTruncate, 1);
    fs.write(*fd, 1);
    fs.close(*fd);
  });
  sim.spawn("looked early", [&] {
    EXPECT_FALSE(fs.stat("/c/idx.npy", 1).exists);  // at 0 s: cached missing until 30 s
    for (Time t : {2_s, 29_s, 31_s}) {
      sim.sleep_for(t - sim.now());
      const std::uint64_t ops = fs.stats().meta_ops;
      const auto r = fs.read("/c/idx.npy", 1);
      seen.push_back("1@" + std::to_string(t / 1_s) + ": " + (r ? "read" : r.message()) +
                     (fs.stats().meta_ops == ops ? " (cache)" : " (server)"));
    }
  });
  sim.spawn("never looked", [&] {
    sim.sleep_for(2_s);
    seen.push_back(std::string("2@2: ") + (fs.read("/c/idx.npy", 2) ? "read" : "ENOENT"));
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(seen, (std::vector<std::string>{"1@2: ENOENT (cache)", "2@2: read", "1@29: ENOENT (cache)", "1@31: read (server)"}));
}

// ---- faults (sim/storage/faults.h): they bite inside the operations ----

// A seam with one fault of `kind` on rank 0, aimed at mount `aim` ("" for none), whose
// arguments are the given constants.
void arm(kernel::FaultSeam& seam, std::string_view kind, const char* aim,
         std::initializer_list<std::pair<const char*, double>> args) {
  kernel::ActiveFault f("f", kind, 0, kernel::RandomStream(1, "fault/f/0"));
  if (*aim) f.aim(kernel::ResourceKind::kMount, aim);
  for (const auto& [name, v] : args) f.set_arg(name, [v = v](kernel::RandomStream&, int) { return v; });
  seam.add(std::move(f));
}

TEST(FsFaultTest, AFaultAimedAtOneMountLeavesAnotherUntouched) {
  Simulation sim;
  kernel::FaultSeam seam;
  arm(seam, kEio, "shared", {{"rate", 1}});
  FileSystem shared(sim, "shared", mount(MountKind::kLustre, "/s"));
  FileSystem local(sim, "local@node0", mount(MountKind::kLocal, "/l"));
  shared.set_faults(&seam, "shared");
  local.set_faults(&seam, "local");
  std::vector<std::string> got;
  kernel::Process* p = sim.spawn("rank 0", [&] {
    auto a = shared.create("/s/f", 0, 0, OpenMode::kTruncate, kMiB);
    got.push_back(a ? "ok" : a.message());
    auto b = local.create("/l/f", 0, 0, OpenMode::kTruncate, kMiB);
    got.push_back(b ? "ok" : b.message());
    got.push_back(to_string(local.write(*b, kMiB)));
    got.push_back(to_string(shared.mkdir("/s/d", 0)));
    got.push_back(shared.stat("/s", 0).error == FsError::kIo ? "stat EIO" : "stat ok");
    got.push_back(shared.read("/s/f", 0) ? "read ok" : shared.read("/s/f", 0).message());
  });
  seam.bind(p, 0);
  sim.run();
  EXPECT_EQ(got, (std::vector<std::string>{"EIO", "ok", "ok", "EIO", "stat EIO", "EIO"}));
  EXPECT_EQ(shared.stats().eio_errors, 5u);
  EXPECT_EQ(local.stats().eio_errors, 0u);
  EXPECT_EQ(seam.all()[0].hit_count(), 5u);
}

TEST(FsFaultTest, AFaultOfAnotherRankDoesNotBite) {
  Simulation sim;
  kernel::FaultSeam seam;
  arm(seam, kEio, "", {{"rate", 1}});
  FileSystem fs(sim, "shared", mount(MountKind::kLocal));
  fs.set_faults(&seam, "shared");
  bool ok = false;
  kernel::Process* p = sim.spawn("rank 1", [&] { ok = fs.mkdir("/c/d", 0) == FsError::kOk; });
  seam.bind(p, 1);
  sim.run();
  EXPECT_TRUE(ok);
}

TEST(FsFaultTest, AWriterStallPausesTheWriteAfterItsFractionAndEnospcStopsIt) {
  Simulation sim;
  kernel::FaultSeam seam;
  arm(seam, kWriterStall, "shared", {{"at", 0.5}, {"duration", 2e9}});
  FileSystem fs(sim, "shared", mount(MountKind::kLocal));
  fs.set_faults(&seam, "shared");
  std::vector<std::uint64_t> sizes;
  Time done = 0;
  kernel::Process* w = sim.spawn("writer", [&] {
    auto fd = fs.create("/c/f", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    EXPECT_EQ(fs.write(*fd, 10 * kMiB), FsError::kOk);
    done = sim.now();
  });
  seam.bind(w, 0);
  sim.spawn("watcher", [&] {
    sim.sleep_for(1_s);  // 5 MiB written by 51 ms, then 2 s of stall
    sizes.push_back(fs.stat("/c/f", 1).size);
  });
  sim.run();
  // 1 ms open + 10 MiB at 100 MiB/s (100 ms) + 2 s stall.
  EXPECT_EQ(done, 1_ms + 100_ms + 2_s);
  EXPECT_EQ(sizes, std::vector<std::uint64_t>{5 * kMiB});
  EXPECT_EQ(fs.stats().stalls, 1u);

  Simulation sim2;
  kernel::FaultSeam seam2;
  arm(seam2, kEnospc, "", {{"at", 0.3}});
  FileSystem fs2(sim2, "shared", mount(MountKind::kLocal));
  fs2.set_faults(&seam2, "shared");
  std::uint64_t written = 0;
  FsError e = FsError::kOk;
  kernel::Process* w2 = sim2.spawn("writer", [&] {
    auto fd = fs2.create("/c/f", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    e = fs2.write(*fd, 10 * kMiB, &written);
  });
  seam2.bind(w2, 0);
  sim2.run();
  EXPECT_EQ(e, FsError::kNoSpace);
  EXPECT_EQ(written, 3 * kMiB);
  EXPECT_EQ(fs2.stats().enospc_errors, 1u);
}

TEST(FsFaultTest, SlowStorageStretchesMetadataAndTransfersOfItsMountOnly) {
  Simulation sim;
  kernel::FaultSeam seam;
  arm(seam, kSlowStorage, "shared", {{"factor", 4}});
  FileSystem shared(sim, "shared", mount(MountKind::kLocal));
  FileSystem local(sim, "local", mount(MountKind::kLocal));
  shared.set_faults(&seam, "shared");
  local.set_faults(&seam, "local");
  Time t_shared = 0, t_local = 0;
  kernel::Process* p = sim.spawn("rank 0", [&] {
    Time t0 = sim.now();
    auto fd = shared.create("/c/f", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    shared.write(*fd, 10 * kMiB);
    t_shared = sim.now() - t0;
    t0 = sim.now();
    fd = local.create("/c/f", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    local.write(*fd, 10 * kMiB);
    t_local = sim.now() - t0;
  });
  seam.bind(p, 0);
  sim.run();
  EXPECT_EQ(t_local, 1_ms + 100_ms);
  EXPECT_EQ(t_shared, 4 * (1_ms + 100_ms));
}

}  // namespace
}  // namespace racesim::storage

namespace racesim::storage {
namespace {

using namespace kernel::time_literals;

constexpr std::uint64_t kMB = 1ull << 20;

MountConfig small_disk() {
  MountConfig c = testing::local_mount("/l");
  c.capacity = 10 * kMB;
  return c;
}

TEST(FileSystemCapacityTest, AWritePastTheCapacityWritesWhatFitsThenFailsWithEnospc) {
  kernel::Simulation sim;
  FileSystem fs(sim, "local", small_disk());
  FsError first = FsError::kOk, second = FsError::kOk, after_unlink = FsError::kOk;
  std::uint64_t written = 0;
  sim.spawn("w", [&] {
    auto a = fs.create("/l/a", 0, 0, OpenMode::kTruncate, 6 * kMB);
    first = fs.write(*a, 6 * kMB);
    fs.close(*a);
    auto b = fs.create("/l/b", 0, 0, OpenMode::kTruncate, 6 * kMB);
    second = fs.write(*b, 6 * kMB, &written);
    fs.close(*b);
    fs.unlink("/l/a", 0);  // frees 6 MiB
    auto c = fs.create("/l/c", 0, 0, OpenMode::kTruncate, 5 * kMB);
    after_unlink = fs.write(*c, 5 * kMB);
    fs.close(*c);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(first, FsError::kOk);
  EXPECT_EQ(second, FsError::kDiskFull);
  EXPECT_STREQ(to_string(second), "ENOSPC");
  EXPECT_EQ(written, 4 * kMB);  // what fitted
  EXPECT_EQ(after_unlink, FsError::kOk);
  EXPECT_EQ(fs.used(), 9 * kMB);  // b's 4 MiB (torn) and c's 5 MiB
  EXPECT_EQ(fs.stats().disk_full, 1u);
  const FsContents c = fs.contents();
  EXPECT_EQ(c.files, 2u);
  EXPECT_EQ(c.bytes, 9 * kMB);
  EXPECT_EQ(c.torn, 1u);  // b holds 4 of its 6 MiB
}

TEST(FileSystemCapacityTest, TruncatingAFileFreesItsBytes) {
  kernel::Simulation sim;
  FileSystem fs(sim, "local", small_disk());
  FsError e = FsError::kIo;
  sim.spawn("w", [&] {
    for (int i = 0; i < 3; ++i) {  // 8 MiB rewritten three times on a 10 MiB disk
      auto fd = fs.create("/l/a", 0, 0, OpenMode::kTruncate, 8 * kMB);
      e = fs.write(*fd, 8 * kMB);
      fs.close(*fd);
      if (e != FsError::kOk) return;
    }
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(e, FsError::kOk);
  EXPECT_EQ(fs.used(), 8 * kMB);
}

TEST(FileSystemCapacityTest, TwoWritersOfOneFileTakeItsSpaceOnce) {
  kernel::Simulation sim;
  FileSystem fs(sim, "local", small_disk());
  std::vector<FsError> results;
  for (int w = 0; w < 2; ++w) {
    sim.spawn("w", [&fs, &results, w] {
      auto fd = fs.create("/l/a", 0, w, OpenMode::kKeep, 6 * kMB);  // the same 6 MiB, at once
      results.push_back(fs.write(*fd, 6 * kMB));
      fs.close(*fd);
    });
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_THAT(results, ::testing::ElementsAre(FsError::kOk, FsError::kOk));  // 12 MiB written, 6 MiB held
  EXPECT_EQ(fs.used(), 6 * kMB);
}

TEST(FileSystemTest, EachFileReadOrWrittenCostsTheSmallFileOverhead) {
  auto run = [](Time overhead) {
    kernel::Simulation sim;
    MountConfig c = small_disk();
    c.capacity = 0;
    c.read_overhead = c.write_overhead = c.text_read_overhead = c.text_write_overhead = overhead;
    FileSystem fs(sim, "local", c);
    sim.spawn("w", [&] {
      for (int i = 0; i < 10; ++i) {
        const std::string p = "/l/f" + std::to_string(i);
        auto fd = fs.create(p, 0, 0, OpenMode::kTruncate, 4096);
        fs.write(*fd, 4096);
        fs.close(*fd);
        ASSERT_TRUE(fs.read(p, 0));
      }
    });
    return sim.run().end_time;
  };
  // 10 files written and read: 20 overheads of 1 ms.
  EXPECT_EQ(run(1_ms) - run(0), 20 * 1'000'000);
}

// chunk_jitter: each chunk's time times a factor uniform in [1 - J, 1 + J) from the mount's
// stream. 100 chunks of 10 ms with J = 0.5 end after 1 s on average (standard deviation 29 ms), a
// different time per seed, the same for one seed; each factor is a draw on the tape, and a policy
// that takes every draw's high end makes every chunk 15 ms. Without jitter, exactly 1 s.
TEST(FileSystemTest, ChunkJitterVariesEachChunksTimeAroundItsOwn) {
  auto run = [](double jitter, std::uint64_t seed, kernel::PolicySpec policy, std::size_t* draws) {
    Simulation sim({.seed = seed, .policy = std::move(policy), .record_choices = draws != nullptr});
    MountConfig c = testing::local_mount("/l");
    c.chunk_jitter = jitter;
    FileSystem fs(sim, "local", c, sim.stream("fs/local"));
    Time end = 0;
    sim.spawn("w", [&] {
      auto fd = fs.create("/l/f", 0, 0, OpenMode::kTruncate, 100 * kMiB);
      fs.write(*fd, 100 * kMiB);
      end = sim.now();
    });
    EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    if (draws != nullptr) {
      *draws = static_cast<std::size_t>(std::count_if(sim.tape().begin(), sim.tape().end(), [](const kernel::Choice& ch) {
        return ch.kind == kernel::ChoiceKind::kDraw;
      }));
    }
    return end;
  };
  EXPECT_EQ(run(0, 1, kernel::PolicySpec::fifo(), nullptr), 1'000'000'000);
  std::vector<double> ends;
  std::set<Time> distinct;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const Time t = run(0.5, seed, kernel::PolicySpec::fifo(), nullptr);
    EXPECT_EQ(t, run(0.5, seed, kernel::PolicySpec::fifo(), nullptr)) << "one seed, one time";
    EXPECT_GT(t, 500'000'000);
    EXPECT_LT(t, 1'500'000'000);
    ends.push_back(static_cast<double>(t));
    distinct.insert(t);
  }
  EXPECT_EQ(distinct.size(), ends.size());
  const double mean = std::accumulate(ends.begin(), ends.end(), 0.0) / static_cast<double>(ends.size());
  double var = 0;
  for (const double e : ends) var += (e - mean) * (e - mean);
  const double sd = std::sqrt(var / static_cast<double>(ends.size() - 1));
  EXPECT_NEAR(mean, 1e9, 15e6) << "3 standard errors of 50 runs";
  EXPECT_GT(sd, 15e6);
  EXPECT_LT(sd, 45e6);
  std::size_t draws = 0;
  run(0.5, 1, kernel::PolicySpec::fifo(), &draws);
  EXPECT_EQ(draws, 100u) << "a draw per chunk";
  std::vector<kernel::Choice> high(100, kernel::Choice{kernel::ChoiceKind::kDraw, kernel::kDrawOptions, 3});
  EXPECT_EQ(run(0.5, 1, kernel::PolicySpec::prefix(high), nullptr), 1'500'000'000);
}

// Linux frees a file's pages before open(O_TRUNC), unlink or a rename over it returns, and, for a
// file a descriptor still holds, at its last close: the caller's time at truncate_bandwidth.
// The file is empty to everyone at once, while its truncator is still freeing.
TEST(FileSystemTest, FreeingAFilesBytesTakesTheCallersTime) {
  struct Took {
    Time truncate = 0, rename = 0, unlink = 0, unlink_open = 0, close_unlinked = 0;
    std::uint64_t size_while_freeing = 1;
  };
  auto run = [](double truncate_bandwidth) {
    kernel::Simulation sim;
    MountConfig c = mount(MountKind::kLocal);
    c.truncate_bandwidth = truncate_bandwidth;
    FileSystem fs(sim, "local", c);
    Took took;
    const auto write = [&](const std::string& path, std::uint64_t bytes) {
      auto fd = fs.create(path, 0, 0, OpenMode::kTruncate, bytes);
      fs.write(*fd, bytes);
      fs.close(*fd);
    };
    const auto timed = [&](Time& out, auto&& op) {
      const Time t0 = sim.now();
      op();
      out = sim.now() - t0;
    };
    sim.spawn("w", [&] {
      write("/c/a", 100 * kMiB);
      timed(took.truncate, [&] { fs.close(*fs.create("/c/a", 0, 0, OpenMode::kTruncate, 50 * kMiB)); });
      write("/c/a", 50 * kMiB);
      write("/c/b", 20 * kMiB);
      timed(took.rename, [&] { fs.rename("/c/b", "/c/a", 0); });  // frees a's 50 MiB
      timed(took.unlink, [&] { fs.unlink("/c/a", 0); });          // frees b's 20 MiB
      auto fd = fs.create("/c/h", 0, 0, OpenMode::kTruncate, 10 * kMiB);
      fs.write(*fd, 10 * kMiB);
      timed(took.unlink_open, [&] { fs.unlink("/c/h", 0); });  // held open: nothing freed yet
      timed(took.close_unlinked, [&] { fs.close(*fd); });
    });
    sim.spawn("stat", [&] {  // while the truncation frees a's 100 MiB (1 s + 2 ms written, 1 ms open)
      sim.sleep_for(1'004_ms);
      took.size_while_freeing = fs.stat("/c/a", 1).size;
    });
    EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    return took;
  };
  // 1 ms per metadata operation (the open, the close, the rename, the unlink).
  const Took free = run(0);
  EXPECT_EQ(free.truncate, 2_ms);
  EXPECT_EQ(free.rename, 1_ms);
  EXPECT_EQ(free.unlink, 1_ms);
  EXPECT_EQ(free.unlink_open, 1_ms);
  EXPECT_EQ(free.close_unlinked, 1_ms);
  const Took paid = run(1000.0 * kMiB);  // 1 ms per MiB
  EXPECT_EQ(paid.truncate, 102_ms);
  EXPECT_EQ(paid.size_while_freeing, 0u);
  EXPECT_EQ(paid.rename, 51_ms);
  EXPECT_EQ(paid.unlink, 21_ms);
  EXPECT_EQ(paid.unlink_open, 1_ms);
  EXPECT_EQ(paid.close_unlinked, 11_ms);
}

// Linux holds a file's inode lock while a truncation frees its pages (do_truncate), and each
// write(2) and each truncation takes that lock first: a writer of the file starts no chunk
// meanwhile (the chunk it was copying lands), and a second truncation waits for the first.
TEST(FileSystemTest, WritersAndTruncationsOfAFileWaitWhileATruncationFreesIt) {
  struct Took {
    Time first_done = 0, truncation = 0, second_truncation = 0;
  };
  auto run = [](double truncate_bandwidth) {
    Simulation sim;
    MountConfig c = mount(MountKind::kLocal);
    c.truncate_bandwidth = truncate_bandwidth;
    FileSystem fs(sim, "local", c);
    Took took;
    const auto truncate = [&](const std::string& path, int rank, Time& took_ns) {
      const Time t0 = sim.now();
      auto fd = fs.create(path, 0, rank, OpenMode::kTruncate, 100 * kMiB);
      took_ns = sim.now() - t0;
      fs.close(*fd);
    };
    sim.spawn("writer", [&] {
      auto fd = fs.create("/c/m.om", 0, 0, OpenMode::kTruncate, 100 * kMiB);  // 1 ms
      fs.write(*fd, 100 * kMiB);  // 1 MiB chunks of 10 ms
      took.first_done = sim.now();
      fs.close(*fd);
    });
    sim.spawn("truncator", [&] {
      sim.sleep_for(295_ms);  // empties the file at 296 ms: 29 MiB have landed, the 30th is in flight
      truncate("/c/m.om", 1, took.truncation);
    });
    sim.spawn("two truncators", [&] {
      sim.sleep_for(2_s);  // the writer is done: the mount's bandwidth is this one's
      auto fd = fs.create("/c/big", 0, 2, OpenMode::kTruncate, 100 * kMiB);
      fs.write(*fd, 100 * kMiB);
      fs.close(*fd);
      sim.spawn("second", [&] {
        sim.sleep_for(10_ms);
        truncate("/c/big", 3, took.second_truncation);
      });
      Time first = 0;
      truncate("/c/big", 2, first);
    });
    EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    return took;
  };
  const Took free = run(0);
  EXPECT_EQ(free.truncation, 1_ms);
  EXPECT_EQ(free.second_truncation, 1_ms);
  const Took paid = run(1000.0 * kMiB);  // 1 ms per MiB
  EXPECT_EQ(paid.truncation, 30_ms) << "its open, then 29 MiB freed";
  EXPECT_EQ(paid.first_done - free.first_done, 24_ms)
      << "the chunk in flight lands at 301 ms; the next starts when the freeing ends, at 325 ms";
  EXPECT_EQ(paid.second_truncation, 91_ms) << "from 10 ms after the first's open until its 100 MiB are freed";
}

TEST(FileSystemTest, AnArchiveHoldsItsMembersAndTheirBytesPlusHeaders) {
  kernel::Simulation sim;
  MountConfig c = small_disk();
  c.capacity = 0;
  FileSystem fs(sim, "local", c);
  sim.spawn("w", [&] {
    std::vector<ReadResult> members;
    for (int i = 0; i < 3; ++i) {
      const std::string p = "/l/f" + std::to_string(i);
      auto fd = fs.create(p, 0, 0, OpenMode::kTruncate, kMB);
      fs.write(*fd, kMB);
      fs.close(*fd);
      members.push_back(*fs.read(p, 0));
      ASSERT_EQ(fs.unlink(p, 0), FsError::kOk);
    }
    ASSERT_EQ(fs.write_archive("/l/a.tar", 0, 0, members), FsError::kOk);
    const auto a = fs.read("/l/a.tar", 0);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->intact());
    EXPECT_EQ(a->content.files, 3u);
    EXPECT_EQ(a->bytes, 3 * kMB + 3 * 512);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(fs.contents().files, 3u);  // the archive counts as its three members
}

}  // namespace
}  // namespace racesim::storage
