// File-tree operations over a mount (tree_ops.h): shutil.move across mounts and on one, tar with
// and without removing the source, shutil.rmtree, and the first failure each reports.
#include "sim/storage/tree_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/storage/fs.h"
#include "tests/sim/storage/test_mounts.h"

namespace racesim::storage {
namespace {

using kernel::Simulation;
using testing::local_mount;
using testing::kMiB;

// Writes a whole file of `bytes` as rank 0.
void put(FileSystem& fs, const std::string& path, std::uint64_t bytes) {
  auto fd = fs.create(path, 0, 0, OpenMode::kTruncate, bytes);
  ASSERT_TRUE(fd) << path;
  ASSERT_EQ(fs.write(*fd, bytes), FsError::kOk) << path;
  ASSERT_EQ(fs.close(*fd), FsError::kOk) << path;
}

// /a/d holding x (2 MiB) and e/y (1 MiB).
void make_tree(FileSystem& fs) {
  ASSERT_EQ(fs.mkdir("/a/d", 0), FsError::kOk);
  ASSERT_EQ(fs.mkdir("/a/d/e", 0), FsError::kOk);
  put(fs, "/a/d/x", 2 * kMiB);
  put(fs, "/a/d/e/y", kMiB);
}

TEST(TreeOpsTest, MoveAcrossMountsCopiesTheTreeThenRemovesTheSource) {
  Simulation sim;
  FileSystem a(sim, "a", local_mount("/a")), b(sim, "b", local_mount("/b"));
  TreeResult r;
  sim.spawn("mover", [&] {
    make_tree(a);
    r = move(sim, {a, 0}, {b, 0}, "/a/d", "/b/d", 3);
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_FALSE(r) << r->op << " " << r->path;
  EXPECT_EQ(a.contents().files, 0u) << "the source is gone";
  EXPECT_EQ(b.contents().files, 2u);
  EXPECT_EQ(b.contents().bytes, 3 * kMiB);
  EXPECT_EQ(b.contents().torn, 0u);
  // 3 MiB read at 100 MiB/s and written at 100 MiB/s after the tree's 3 MiB were first written.
  EXPECT_EQ(sim.now(), 3 * kernel::transfer_time(3.0 * kMiB, 100.0 * kMiB));
}

TEST(TreeOpsTest, MoveOnOneMountIsOneRename) {
  Simulation sim;
  FileSystem a(sim, "a", local_mount("/a"));
  TreeResult r;
  std::uint64_t meta_before = 0, meta_after = 0;
  bool old_name = true, new_name = false;
  sim.spawn("mover", [&] {
    make_tree(a);
    meta_before = a.stats().meta_ops;
    r = move(sim, {a, 0}, {a, 0}, "/a/d", "/a/f", 0);
    meta_after = a.stats().meta_ops;
    old_name = a.stat("/a/d", 0).exists;
    new_name = a.stat("/a/f/e/y", 0).exists;
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_FALSE(r);
  EXPECT_EQ(meta_after - meta_before, 1u);
  EXPECT_EQ(a.contents().files, 2u);
  EXPECT_FALSE(old_name);
  EXPECT_TRUE(new_name);
}

TEST(TreeOpsTest, MoveSaysWhichOperationFailed) {
  Simulation sim;
  FileSystem a(sim, "a", local_mount("/a")), b(sim, "b", local_mount("/b"));
  TreeResult missing, taken, renamed;
  bool source_kept = false;
  sim.spawn("mover", [&] {
    missing = move(sim, {a, 0}, {b, 0}, "/a/none", "/b/none", 0);
    put(a, "/a/m", kMiB);
    put(b, "/b/m", kMiB);
    taken = move(sim, {a, 0}, {b, 0}, "/a/m", "/b/m", 0);
    renamed = move(sim, {a, 0}, {a, 0}, "/a/none", "/a/other", 0);
    source_kept = a.stat("/a/m", 0).exists;
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  ASSERT_TRUE(missing && taken && renamed);
  EXPECT_EQ(missing->op, "move");
  EXPECT_EQ(missing->message, "ENOENT");
  EXPECT_EQ(taken->path, "/a/m -> /b/m");
  EXPECT_EQ(taken->message, "EEXIST (the target exists)");
  EXPECT_EQ(renamed->op, "rename");
  EXPECT_EQ(renamed->error, FsError::kNotFound);
  EXPECT_TRUE(source_kept) << "a refused move removes nothing";
}

TEST(TreeOpsTest, PackWritesOneArchiveOfEveryMemberAndCanRemoveTheSource) {
  Simulation sim;
  FileSystem a(sim, "a", local_mount("/a")), b(sim, "b", local_mount("/b"));
  TreeResult kept, removed;
  std::uint64_t archive_bytes = 0;
  bool source_left = true;
  sim.spawn("packer", [&] {
    make_tree(a);
    kept = pack({a, 0}, {b, 0}, "/a/d", "/b/one.tar", 0, false);
    removed = pack({a, 0}, {b, 0}, "/a/d", "/b/two.tar", 0, true);
    archive_bytes = b.stat("/b/one.tar", 0).size;
    source_left = a.stat("/a/d", 0).exists;
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_FALSE(kept);
  EXPECT_FALSE(removed);
  EXPECT_EQ(b.contents().files, 4u) << "each archive counts its two members";
  EXPECT_EQ(archive_bytes, 3 * kMiB + 2 * 512) << "a 512-byte header per member";
  EXPECT_EQ(a.contents().files, 0u);
  EXPECT_FALSE(source_left);
}

TEST(TreeOpsTest, RemoveTreeRemovesEverythingAndAMissingTreeFailsItsListing) {
  Simulation sim;
  FileSystem a(sim, "a", local_mount("/a"));
  TreeResult done, missing;
  bool left = true;
  sim.spawn("rm", [&] {
    make_tree(a);
    done = remove_tree({a, 0}, "/a/d");
    left = a.stat("/a/d", 0).exists;
    missing = remove_tree({a, 0}, "/a/d");
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_FALSE(done);
  EXPECT_EQ(a.contents().files, 0u);
  EXPECT_FALSE(left);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->op, "list");
  EXPECT_EQ(missing->error, FsError::kNotFound);
}

}  // namespace
}  // namespace racesim::storage
