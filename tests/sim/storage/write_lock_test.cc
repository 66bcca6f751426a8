// Writers of one file taking turns at its write lock (sim/storage/write_lock.h), on a local
// mount, against times worked out by hand: a chunk at a time, handed over or kept with the
// mount's odds, the decisions on the tape, a dead writer's turn given back.
#include "sim/storage/write_lock.h"
#include "sim/storage/fs.h"
#include "tests/sim/storage/test_mounts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace racesim::storage {
namespace {

using namespace kernel::time_literals;
using kernel::Simulation;
using kernel::Time;

using testing::kMiB;

// 1 MiB chunks at 100 MiB/s a client (10 ms each), the writers on one client (one node): without
// a lock two copies share its rate.
MountConfig locked(bool lock, double keep = 0) {
  MountConfig c = testing::local_mount("/c");
  c.bandwidth = 1000.0 * kMiB;
  c.write_lock = lock;
  c.write_lock_keep = keep;
  return c;
}

struct Finish {
  Time first = -1, second = -1;
};

// Two writers of /c/m, 10 MiB each from offset 0, both starting at 0 s (the first creates it).
Finish two_writers(const MountConfig& c, kernel::SimulationOptions options = {}) {
  Simulation sim(options);
  FileSystem fs(sim, "local", c);
  Finish f;
  sim.spawn("first", [&] {
    auto fd = fs.create("/c/m", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    EXPECT_EQ(fs.write(*fd, 10 * kMiB), FsError::kOk);
    f.first = sim.now();
    fs.close(*fd);
  });
  sim.spawn("second", [&] {
    auto fd = fs.create("/c/m", 0, 1, OpenMode::kKeep, 10 * kMiB);
    EXPECT_EQ(fs.write(*fd, 10 * kMiB), FsError::kOk);
    f.second = sim.now();
    fs.close(*fd);
  });
  EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  return f;
}

TEST(WriteLockTest, WithoutTheLockWritersOfOneFileCopyAtOnce) {
  const Finish f = two_writers(locked(false));
  // Two copies at once, about 50 MiB/s each (the rate is set as each chunk starts, so the first
  // chunk of the first writer, begun alone, takes 10 ms).
  EXPECT_GE(f.first, 190_ms);
  EXPECT_EQ(f.second, 200_ms);
}

// Handed over after every chunk: the first writes chunks 0-10, 20-30, ... ms, the second
// 10-20, 30-40, ...: 190 ms and 200 ms, the time of one writer of 20 MiB.
TEST(WriteLockTest, HandedOverAfterEveryChunkTheWritersAlternate) {
  const Finish f = two_writers(locked(true, 0));
  EXPECT_EQ(f.first, 190_ms);
  EXPECT_EQ(f.second, 200_ms);
}

// Always kept: the first writes its 10 chunks while the second waits, then the second its own.
TEST(WriteLockTest, AlwaysKeptTheFirstWriterWritesAllItsChunksFirst) {
  const Finish f = two_writers(locked(true, 1));
  EXPECT_EQ(f.first, 100_ms);
  EXPECT_EQ(f.second, 200_ms);
}

// Each decision is a model choice on the tape, made only while the other writer waits: with the
// odds at one half, the writers' turns differ between seeds, the total is always 200 ms, and
// the tape holds one two-option choice per chunk boundary that found a waiter.
TEST(WriteLockTest, KeptOrHandedOverIsAModelChoiceOnTheTape) {
  std::set<Time> firsts;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Simulation sim({.seed = seed, .record_choices = true});
    FileSystem fs(sim, "local", locked(true, 0.5));
    Time end[2] = {-1, -1};
    for (int w = 0; w < 2; ++w) {
      sim.spawn("w" + std::to_string(w), [&, w] {
        auto fd = fs.create("/c/m", 0, w, w == 0 ? OpenMode::kTruncate : OpenMode::kKeep, 10 * kMiB);
        fs.write(*fd, 10 * kMiB);
        end[w] = sim.now();
        fs.close(*fd);
      });
    }
    ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(std::max(end[0], end[1]), 200_ms) << "one chunk at a time, never idle";
    firsts.insert(std::min(end[0], end[1]));
    std::size_t model = 0;
    for (const kernel::Choice& c : sim.tape()) {
      if (c.kind != kernel::ChoiceKind::kModel) continue;
      EXPECT_EQ(c.options, 2u);
      ++model;
    }
    // Every boundary of the writer that finished first found the other waiting; after it
    // finished, the other's boundaries found no one. So at least 9 and at most 18 choices.
    EXPECT_GE(model, 9u) << "seed " << seed;
    EXPECT_LE(model, 18u) << "seed " << seed;
  }
  EXPECT_GT(firsts.size(), 3u) << "the turns differ between seeds";
}

// The mechanism of the cache race's permanent mixtures: an older O_TRUNC writer one chunk
// ahead of a newer one. Handed over after every chunk it stays ahead, and the newer one
// rewrites each of its late bytes; kept at random, the newer one overtakes in some seeds and
// the older one's last bytes land after it: the file stays a mixture.
TEST(WriteLockTest, ANewerWriterThatOvertakesLeavesTheOlderOnesLateBytes) {
  auto torn_runs = [](double keep) {
    int torn = 0;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      Simulation sim({.seed = seed});
      FileSystem fs(sim, "local", locked(true, keep));
      sim.spawn("older", [&] {
        auto fd = fs.create("/c/m", 0, 0, OpenMode::kTruncate, 40 * kMiB);
        fs.write(*fd, 40 * kMiB);
        fs.close(*fd);
      });
      sim.spawn("newer", [&] {
        sim.sleep_for(5_ms);  // part way through the older one's first chunk
        auto fd = fs.create("/c/m", 0, 1, OpenMode::kTruncate, 40 * kMiB);
        fs.write(*fd, 40 * kMiB);
        fs.close(*fd);
      });
      EXPECT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
      torn += static_cast<int>(fs.contents().torn);
    }
    return torn;
  };
  EXPECT_EQ(torn_runs(0), 0) << "alternating, the older writer stays a chunk ahead";
  const int random = torn_runs(0.5);
  EXPECT_GT(random, 0);
  EXPECT_LT(random, 40);
}

// A writer killed while it holds the lock gives it back, and one killed while it waits leaves
// the queue: the other finishes its write.
TEST(WriteLockTest, AWriterKilledInItsTurnGivesTheLockBack) {
  Simulation sim;
  FileSystem fs(sim, "local", locked(true, 1));
  kernel::Process* doomed = sim.spawn("doomed", [&] {
    auto fd = fs.create("/c/m", 0, 0, OpenMode::kTruncate, 10 * kMiB);
    fs.write(*fd, 10 * kMiB);
    ADD_FAILURE() << "killed at 35 ms";
  });
  kernel::Process* waiting = sim.spawn("waiting", [&] {
    auto fd = fs.create("/c/m", 0, 2, OpenMode::kKeep, 10 * kMiB);
    fs.write(*fd, 10 * kMiB);
    ADD_FAILURE() << "killed at 20 ms";
  });
  Time done = -1;
  sim.spawn("other", [&] {
    auto fd = fs.create("/c/m", 0, 1, OpenMode::kKeep, 10 * kMiB);
    EXPECT_EQ(fs.write(*fd, 10 * kMiB), FsError::kOk);
    done = sim.now();
    fs.close(*fd);
  });
  sim.schedule_at(20_ms, [&] {
    sim.kill(waiting);
    fs.release(waiting);
  });
  sim.schedule_at(35_ms, [&] {
    sim.kill(doomed);
    fs.release(doomed);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(done, 135_ms) << "its turn began when the dead writer's ended";
}

}  // namespace
}  // namespace racesim::storage
