// The model loader (model_loader.h): whole, torn and never-whole reads, validation's retries and
// timeout, read errors, and what a diagnosis says a torn read held.
#include "sim/runtime/model_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "sim/storage/fs.h"
#include "tests/sim/storage/test_mounts.h"

namespace racesim::runtime {
namespace {

using namespace kernel::time_literals;
using ::testing::HasSubstr;
using kernel::Simulation;
using storage::FileSystem;
constexpr std::uint64_t kMiB = 1ull << 20;

// Rank 0 writes a 50 MiB model in 500 ms (100 MiB/s, 1 MiB chunks), starting at `start`, and
// closes it; with `stall` it stops half way and never finishes.
void writer(Simulation& sim, FileSystem& fs, kernel::Time start, bool stall = false) {
  sim.spawn("writer", [&sim, &fs, start, stall] {
    sim.sleep_for(start);
    auto fd = fs.create("/m/model.om", 0, 0, storage::OpenMode::kTruncate, 50 * kMiB);
    ASSERT_TRUE(fd);
    fs.write(*fd, 25 * kMiB);
    if (stall) sim.sleep_for(1_h);
    fs.write(*fd, 25 * kMiB);
    fs.close(*fd);
  });
}

// Loads the model as rank 1 at `at` and keeps what the loader said and counted.
struct Loader {
  ModelLoad load;
  std::map<std::string, int> counts;
  kernel::Time done_at = 0;
  void start(Simulation& sim, FileSystem& fs, kernel::Time at, ModelLoadOptions o) {
    o.count = [this](const char* c) { ++counts[c]; };
    sim.spawn("loader", [this, &sim, &fs, at, o] {
      sim.sleep_for(at);
      load = load_model(sim, fs, 1, "/m/model.om", o);
      done_at = sim.now();
    });
  }
};

TEST(ModelLoaderTest, AWholeModelLoadsWithOneRead) {
  Simulation sim;
  FileSystem fs(sim, "m", storage::testing::local_mount("/m"));
  writer(sim, fs, 0);
  Loader l;
  l.start(sim, fs, 1_s, {});
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(l.load.outcome, ModelLoad::Outcome::kLoaded);
  EXPECT_EQ(l.counts["loads"], 1);
  EXPECT_EQ(l.counts["torn_reads"], 0);
  EXPECT_EQ(l.done_at, 1_s + 500_ms) << "the read takes the file's 50 MiB at 100 MiB/s";
}

TEST(ModelLoaderTest, WithoutValidationATornReadIsTakenAndDescribed) {
  Simulation sim;
  FileSystem fs(sim, "m", storage::testing::local_mount("/m"));
  writer(sim, fs, 0);
  Loader l;
  l.start(sim, fs, 205_ms, {});  // 20 of 50 MiB landed
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(l.load.outcome, ModelLoad::Outcome::kTorn);
  EXPECT_EQ(l.load.read_at, 205_ms);
  EXPECT_EQ(l.counts["torn_reads"], 1);
  EXPECT_EQ(l.counts["load_retries"], 0);
  EXPECT_EQ(describe_torn_read(l.load.last), "20 MiB of 50 MiB written by rank 0");
}

TEST(ModelLoaderTest, ValidationRetriesUntilTheModelIsWhole) {
  Simulation sim;
  FileSystem fs(sim, "m", storage::testing::local_mount("/m"));
  writer(sim, fs, 0);
  Loader l;
  ModelLoadOptions o;
  o.validate = true;
  o.retry_delay = [] { return 100_ms; };
  l.start(sim, fs, 100_ms, o);
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(l.load.outcome, ModelLoad::Outcome::kLoaded);
  // Torn reads while the writer writes (they share the mount's bandwidth with it), each followed
  // by a retry; the read that finds the model whole starts after the writer closed it.
  EXPECT_GE(l.counts["torn_reads"], 1);
  EXPECT_EQ(l.counts["loads"], l.counts["torn_reads"] + 1);
  EXPECT_EQ(l.counts["load_retries"], l.counts["torn_reads"]);
  EXPECT_GT(l.load.read_at, 500_ms);
  EXPECT_TRUE(l.load.last.intact());
}

TEST(ModelLoaderTest, ValidationGivesUpAtItsTimeoutWithTheLastRead) {
  Simulation sim;
  FileSystem fs(sim, "m", storage::testing::local_mount("/m"));
  writer(sim, fs, 0, /*stall=*/true);
  Loader l;
  ModelLoadOptions o;
  o.validate = true;
  o.timeout = 2_s;
  o.retry_delay = [] { return 0_ns; };  // taken as 1 ns: the loop stays bounded
  l.start(sim, fs, 1_s, o);
  ASSERT_EQ(sim.run({.time_limit = 10_h}).outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(l.load.outcome, ModelLoad::Outcome::kStillTorn);
  EXPECT_GE(l.done_at, 3_s);
  EXPECT_LT(l.done_at, 3_s + 1_s) << "the last read starts before the timeout and takes 250 ms";
  EXPECT_EQ(l.counts["loads"], l.counts["torn_reads"]);
  EXPECT_EQ(l.counts["load_retries"], l.counts["loads"] - 1);
  EXPECT_THAT(describe_torn_read(l.load.last), HasSubstr("25 MiB of 50 MiB written by rank 0"));
}

TEST(ModelLoaderTest, AMissingFileIsAReadErrorAndAFileOfNoWriterIsNoModel) {
  Simulation sim;
  FileSystem fs(sim, "m", storage::testing::local_mount("/m"));
  Loader l;
  l.start(sim, fs, 0, {});
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(l.load.outcome, ModelLoad::Outcome::kReadError);
  EXPECT_EQ(l.load.error, "ENOENT");
  EXPECT_EQ(l.counts["loads"], 0);
  storage::ReadResult nobody;
  EXPECT_EQ(describe_torn_read(nobody), "0 B holding no model (no content identity)");
  storage::ReadResult mixed;
  mixed.content.writer = 2;
  mixed.bytes = kMiB;
  mixed.changed = true;
  EXPECT_EQ(describe_torn_read(mixed), "read 1 MiB while the file was truncated or rewritten");
}

}  // namespace
}  // namespace racesim::runtime
