// The storage primitives, the platform section and the storage fault kinds, through whole runs
// of small scenarios (the file-system model itself is tested in tests/sim/storage).
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "src/scenario/language/platform.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/language/assignment.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;
using kernel::kSecond;

// One local mount at /c: 1 ms per metadata op, 100 MiB/s, 1 MiB chunks.
std::string platform(const std::string& kind = "local", const std::string& more = "") {
  return "platform:\n  storage:\n    c: {kind: " + kind +
         ", mount: /c, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, "
         "chunk: 1MiB" + more + "}\n";
}

// Rank 0 writes /c/m.om (50 MiB: 500 ms) at 1 s; rank 1 loads it at `load_at`.
std::string writer_and_loader(const std::string& load_at, const std::string& load = "{load_model: /c/m.om}") {
  return "  - if:\n      rank: rank0\n      then: [{sleep: 1s}, {write_file: {path: /c/m.om, size: 50MiB}}]\n"
         "      else: [{sleep: " + load_at + "}, " + load + ", {mark: {name: loaded, metric: true}}]\n";
}

TEST(StorageTest, ALoadOfAFileBeingWrittenFailsWithTheDiagnosis) {
  auto f = make(2, writer_and_loader("1200ms"), platform());
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "model_loads_intact");
  // Created at 1.001 s; 20 chunks of 10 ms landed by 1.201 s, when the reader's open returns.
  EXPECT_THAT(r.diagnosis, HasSubstr("rank 1 loaded /c/m.om at 1.2 s: 20 MiB of 50 MiB written by rank 0 (t.yaml:"));
  auto late = make(2, writer_and_loader("3s"), platform());
  auto ok = run(late);
  EXPECT_EQ(ok.outcome, run::Outcome::kPass) << ok.diagnosis;
  EXPECT_DOUBLE_EQ(ok.metrics.at("loads"), 1);
  EXPECT_DOUBLE_EQ(ok.metrics.at("fs.c.bytes_written"), 50.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(ok.metrics.at("fs.c.bytes_read"), 50.0 * (1 << 20));
  EXPECT_GE(ok.metrics.at("fs.c.meta_ops"), 3);  // create, close, open for read
}

TEST(StorageTest, WithoutTheCheckATornLoadIsCountedAndTheRunGoesOn) {
  auto f = make(2, writer_and_loader("1200ms"), platform() + "checks: [no_deadlock]\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("torn_reads"), 1);
  EXPECT_DOUBLE_EQ(r.metrics.at("ignored.model_loads_intact"), 1);
  EXPECT_TRUE(r.metrics.count("loaded_s"));
}

TEST(StorageTest, ValidateRetriesUntilTheFileIsWhole) {
  auto f = make(2, writer_and_loader("1200ms", "{load_model: {path: /c/m.om, validate: true, retry: 100ms}}"),
                platform());
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_GE(r.metrics.at("load_retries"), 1);
  EXPECT_GE(r.metrics.at("loaded_s"), 1.5);
  // A file that never completes: the retries give up at the timeout.
  auto never = make(1, "  - create: {path: /c/m.om, size: 10MiB}\n  - write: {path: /c/m.om, bytes: 1MiB}\n"
                       "  - load_model: {path: /c/m.om, validate: true, retry: 1s, timeout: 5s}\n", platform());
  auto n = run(never);
  EXPECT_EQ(n.outcome, run::Outcome::kFail);
  EXPECT_THAT(n.diagnosis, HasSubstr("still fails validation after 5s (last: 1 MiB of 10 MiB written by rank 0)"));
}

TEST(StorageTest, RenameMakesThePublishAtomicAndGlobAndExistsSeeIt) {
  auto f = make(3,
                "  - if:\n      rank: rank0\n      then:\n"
                "        - sleep: 1s\n"
                "        - write_file: {path: /c/m.om.tmp, size: 50MiB, fsync: true}\n"
                "        - rename: {from: /c/m.om.tmp, to: /c/m.om}\n"
                "      else:\n"
                "        - poll_until: {glob: \"/c/*.om\", interval: 10ms, timeout: 10s}\n"
                "        - if: {exists: /c/m.om, then: [{load_model: /c/m.om}], else: [{fail: gone}]}\n"
                "        - mark: {name: loaded, metric: true}\n",
                platform());
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_GE(r.metrics.at("loaded_s"), 1.5);
}

TEST(StorageTest, TryCatchesALockTheMountDoesNotSupport) {
  const std::string steps =
      "  - create: {path: /c/f, size: 1MiB}\n"
      "  - try: {do: [{lock: {path: /c/f, mode: exclusive}}, {mark: {name: locked, metric: true}}], catch: [{count: lock_errors}]}\n"
      "  - write: /c/f\n  - close: /c/f\n  - lock: {path: /c/f, mode: shared}\n";
  auto f = make(1, steps, platform("lustre", ", flock: noflock"));
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "no_io_errors");
  EXPECT_THAT(r.diagnosis, HasSubstr("rank 0: flock(LOCK_SH) /c/f: ENOSYS at"));
  EXPECT_THAT(r.diagnosis, HasSubstr("(t.yaml:12:5)"));
  EXPECT_DOUBLE_EQ(r.metrics.at("lock_errors"), 1);
  EXPECT_DOUBLE_EQ(r.metrics.at("caught_errors"), 1);
  EXPECT_FALSE(r.metrics.count("locked_s"));
  auto ok = make(1, steps, platform("lustre", ", flock: flock"));
  auto o = run(ok);
  EXPECT_EQ(o.outcome, run::Outcome::kPass) << o.diagnosis;
  EXPECT_TRUE(o.metrics.count("locked_s"));
}

TEST(StorageTest, FlockExcludesAcrossRanksAndBarrierReleasesAll) {
  auto f = make(3,
                "  - if: {rank: rank0, then: [{create: {path: /c/f, size: 0B}}, {close: /c/f}]}\n"
                "  - barrier: created\n"
                "  - lock: {path: /c/f, mode: exclusive}\n"
                "  - sleep: 1s\n"
                "  - unlock: /c/f\n"
                "  - mark: {name: done, metric: true}\n",
                platform());
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  // Three holders in turn, one second each.
  EXPECT_GE(r.metrics.at("done_s"), 3.0);
  EXPECT_LT(r.metrics.at("done_s"), 3.1);
}

TEST(StorageTest, WaitSizeStableWaitsOutTheWriteUnlessTheWriterStalls) {
  const std::string program =
      "  - if:\n      rank: rank0\n      then: [{write_file: {path: /c/m.om, size: 50MiB}}]\n"
      "      else:\n        - sleep: 100ms\n"
      "        - wait_size_stable: {path: /c/m.om, polls: 3, interval: 50ms}\n"
      "        - load_model: /c/m.om\n";
  auto f = make(2, program, platform());
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  // With a 1 s pause halfway (longer than 3 polls of 50 ms), the size looks stable too early.
  auto stalled = make(2, program, platform() +
                      "faults: [{kind: writer_stall, on: rank0, at: 0.5, duration: 1s}]\n");
  auto s = run(stalled);
  EXPECT_EQ(s.outcome, run::Outcome::kFail);
  EXPECT_THAT(s.diagnosis, HasSubstr("25 MiB of 50 MiB written by rank 0"));
}

// A write-back mount (a local disk): a write is a copy into the page cache, so a reader at 1.2 s
// finds the whole file; fsync is what waits for the disk.
TEST(StorageTest, AWriteBackMountWritesAtMemorySpeedAndFsyncWaitsForTheDisk) {
  const std::string cache = ", page_cache_bandwidth: 1000MiB/s, dirty_limit: 1GiB";
  auto r = run(make(2, writer_and_loader("1200ms"), platform("local", cache)));
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  const std::string synced =
      "  - write_file: {path: /c/f, size: 50MiB, fsync: true}\n  - mark: {name: written, metric: true}\n";
  auto with = run(make(1, synced, platform("local", cache)));
  auto without = run(make(1, synced, platform("local")));
  ASSERT_EQ(with.outcome, run::Outcome::kPass) << with.diagnosis;
  ASSERT_EQ(without.outcome, run::Outcome::kPass) << without.diagnosis;
  // Create, 50 ms of copying, fsync's 500 ms at the disk's rate, its metadata operation; close.
  EXPECT_NEAR(with.metrics.at("written_s"), 0.553, 0.001);
  EXPECT_NEAR(without.metrics.at("written_s"), 0.503, 0.001);  // written at the disk's rate
}

TEST(StorageTest, MountSettingsAreCheckedAgainstTheirKindAndEachOther) {
  const std::string program = "program: [{sleep: 1s}]\nstrategies: {only: }\n";
  auto errors = [&](const std::string& mount) {
    Diagnostics d;
    auto sc = load_scenario_text("name: t\nranks: 1\nplatform:\n  storage:\n    c: {" + mount + "}\n" + program,
                                 "p.yaml", d);
    if (!sc) return d.to_string();
    Diagnostics cd;
    EXPECT_FALSE(compile_program(*sc, sc->strategies[0], cd)) << mount;
    return cd.to_string();
  };
  EXPECT_THAT(errors("kind: nfs, mount: /c, page_cache_bandwidth: 1GiB/s, dirty_limit: 1GiB"),
              HasSubstr("p.yaml:5:53: error: platform.storage.c.page_cache_bandwidth: a page cache is modelled on "
                        "local mounts only"));
  EXPECT_THAT(errors("kind: local, mount: /c, page_cache_bandwidth: 1GiB/s"),
              HasSubstr("p.yaml:5:55: error: platform.storage.c.page_cache_bandwidth: a page cache needs dirty_limit"));
  EXPECT_THAT(errors("kind: local, mount: /c, dirty_expire: 5s"),
              HasSubstr("p.yaml:5:47: error: platform.storage.c.dirty_expire: set page_cache_bandwidth too"));
  EXPECT_THAT(errors("kind: local, mount: /c, disk_stream_bandwidth: 1GiB/s"),
              HasSubstr("p.yaml:5:56: error: platform.storage.c.disk_stream_bandwidth: set page_cache_bandwidth too"));
  EXPECT_THAT(errors("kind: local, mount: /c, truncate_disk_bandwidth: 4GiB/s"),
              HasSubstr("p.yaml:5:58: error: platform.storage.c.truncate_disk_bandwidth: set page_cache_bandwidth too"));
  EXPECT_THAT(errors("kind: local, mount: /c, page_cache_bandwidth: 1GiB/s, dirty_limit: 1GiB, disk_stream_bandwidth: 0B/s"),
              HasSubstr("platform.storage.c.disk_stream_bandwidth: bandwidth '0B/s' must be positive"));
  EXPECT_THAT(errors("kind: local, mount: /c, page_cache_bandwidth: 1GiB/s, dirty_limit: 1GiB, dirty_background: 2GiB"),
              HasSubstr("p.yaml:5:100: error: platform.storage.c.dirty_background: dirty_background (2GiB) is above "
                        "dirty_limit (1GiB)"));
  EXPECT_THAT(errors("kind: local, mount: /c, page_cache_bandwidth: 1GiB/s, dirty_limit: 0B"),
              HasSubstr("platform.storage.c.dirty_limit: expected 1B to"));
  // A setting of another kind of mount is an error naming the kinds that take it, never a
  // setting the model silently ignores.
  EXPECT_THAT(errors("kind: lustre, mount: /c, acdirmin: 30s"),
              HasSubstr("p.yaml:5:44: error: platform.storage.c.acdirmin: acdirmin is the nfs client's directory and "
                        "negative-lookup cache, a setting of nfs mounts; a lustre mount has none"));
  EXPECT_THAT(errors("kind: local, mount: /c, acregmin: 1s"), HasSubstr("a setting of nfs mounts; a local mount has none"));
  EXPECT_THAT(errors("kind: local, mount: /c, flock: noflock"),
              HasSubstr("platform.storage.c.flock: flock is the flock mount option, a setting of lustre (and nfs as "
                        "flock: flock) mounts; a local mount has none"));
  EXPECT_THAT(errors("kind: nfs, mount: /c, flock: localflock"),
              HasSubstr("an nfs mount's flock is coherent across clients (flock: flock"));
  EXPECT_THAT(errors("kind: lustre, mount: /c, flock: noflock, metadata: {}, page_cache_bandwidth: 1GiB/s, dirty_limit: 1GiB"),
              Not(HasSubstr("flock is the flock mount option")));
  // A file's write lock: one node's inode lock, with odds that are a probability.
  EXPECT_THAT(errors("kind: nfs, mount: /c, write_lock: true"),
              HasSubstr("p.yaml:5:43: error: platform.storage.c.write_lock: write_lock is one node's inode lock on a "
                        "file's writes, a setting of local mounts; a nfs mount has none"));
  EXPECT_THAT(errors("kind: local, mount: /c, write_lock: yes"),
              HasSubstr("p.yaml:5:45: error: platform.storage.c.write_lock: expected one of true, false, got 'yes'"));
  EXPECT_THAT(errors("kind: local, mount: /c, write_lock_keep: 0.5"),
              HasSubstr("p.yaml:5:50: error: platform.storage.c.write_lock_keep: set write_lock: true too"));
  EXPECT_THAT(errors("kind: local, mount: /c, write_lock: false, write_lock_keep: 0.5"),
              HasSubstr("platform.storage.c.write_lock_keep: set write_lock: true too"));
  EXPECT_THAT(errors("kind: local, mount: /c, write_lock: true, write_lock_keep: 1.5"),
              HasSubstr("platform.storage.c.write_lock_keep: expected 0 to 1, got 1.5"));
  EXPECT_THAT(errors("kind: local, mount: /c, write_lock: true, write_lock_keep: nan"),
              HasSubstr("platform.storage.c.write_lock_keep: "));
}

TEST(StorageTest, FaultsFailOrDelayOperations) {
  const std::string write = "  - write_file: {path: /c/f, size: 10MiB}\n  - mark: {name: written, metric: true}\n";
  auto nospace = make(1, write, platform() + "faults: [{kind: enospc, at: 0.3}]\n");
  auto n = run(nospace);
  EXPECT_EQ(n.outcome, run::Outcome::kFail);
  EXPECT_THAT(n.diagnosis, HasSubstr("rank 0: write /c/f: ENOSPC after 3 MiB (injected fault)"));
  auto eio = make(1, write, platform() + "faults: [{kind: eio}]\n");
  auto e = run(eio);
  EXPECT_THAT(e.diagnosis, HasSubstr("rank 0: open /c/f: EIO (injected fault)"));
  // A spike from 0 s for 1 s adds 2 s to the operations it catches: the open only.
  auto spike = make(1, write, platform() + "faults: [{kind: latency_spike, duration: 1s, extra: 2s}]\n");
  auto s = run(spike);
  EXPECT_EQ(s.outcome, run::Outcome::kPass) << s.diagnosis;
  EXPECT_NEAR(s.metrics.at("written_s"), 2.0 + 0.1 + 0.002, 0.001);
  auto stall = make(1, write, platform() + "faults: [{kind: writer_stall, duration: 5s}]\n");
  EXPECT_NEAR(run(stall).metrics.at("written_s"), 5.0 + 0.1 + 0.002, 0.001);
}

// Two mounts: /c (shared, nfs) and /l (node-local), 100 MiB/s each.
std::string two_mounts() {
  return "platform:\n  storage:\n"
         "    shared: {kind: nfs, mount: /c, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n"
         "    scratch: {kind: local, mount: /l, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n";
}

TEST(StorageTest, AFaultAimedAtAMountSlowsThatMountAndNotTheNodeLocalOne) {
  const std::string program =
      "  - write_file: {path: /l/f, size: 10MiB}\n  - mark: {name: local_done, metric: true}\n"
      "  - write_file: {path: /c/f, size: 10MiB}\n  - mark: {name: shared_done, metric: true}\n";
  auto f = make(1, program, two_mounts() + "faults: [{kind: slow_storage, on: {mount: shared}, factor: 10}]\n");
  auto r = run(f);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  // Local: open, 10 MiB at 100 MiB/s, close: 0.102 s, untouched. Shared: ten times that.
  EXPECT_NEAR(r.metrics.at("local_done_s"), 0.102, 1e-6);
  EXPECT_NEAR(r.metrics.at("shared_done_s") - r.metrics.at("local_done_s"), 1.02, 1e-6);
  EXPECT_GT(r.metrics.at("faults.slow_storage.hits"), 0);
  // Aimed at ranks only, the same fault slows both.
  auto both = make(1, program, two_mounts() + "faults: [{kind: slow_storage, on: {ranks: [0]}, factor: 10}]\n");
  EXPECT_NEAR(run(both).metrics.at("local_done_s"), 1.02, 1e-6);
}

TEST(StorageTest, AFaultsTargetIsCheckedWhenCompiled) {
  Diagnostics d;
  auto sc = load_scenario_text(
      "name: t\nranks: 2\n" + two_mounts() +
          "faults:\n"
          "  - {kind: eio, name: a, on: {mount: share}}\n"
          "  - {kind: straggler, name: b, on: {mount: shared}}\n"
          "  - {kind: slow_link, name: c, on: {comm: fsdq}}\n"
          "  - {kind: eio, name: e, on: {ranks: [5], mount: shared, disk: 1}}\n"
          "program: [{sleep: 1s}]\nstrategies: {only: }\n",
      "t.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  EXPECT_FALSE(compile_program(*sc, sc->strategies[0], d));
  const std::string e = d.to_string();
  EXPECT_THAT(e, HasSubstr("t.yaml:8:38: error: fault 'a' (eio) on: unknown mount 'share' (expected one of: shared, scratch)"));
  EXPECT_THAT(e, HasSubstr("t.yaml:9:44: error: fault 'b' (straggler) on: a straggler fault cannot be aimed at a mount (it can be aimed at ranks)"));
  EXPECT_THAT(e, HasSubstr("fault 'c' (slow_link) on: unknown comm 'fsdq' (expected one of: world, ep, fsdp)"));
  EXPECT_THAT(e, HasSubstr("fault 'e' (eio) on: rank 5 is out of range (ranks are 0 to 1)"));
  EXPECT_THAT(e, HasSubstr("t.yaml:11:58: error: fault 'e' (eio) on: unknown key 'disk' in a fault's on (expected one of: ranks, mount, comm, link)"));
}

TEST(StorageTest, ACrashMidWriteLeavesATornFileAndFreesTheLock) {
  auto f = make(2,
                "  - if:\n      rank: rank0\n      then:\n"
                "        - create: {path: /c/m.om, size: 100MiB}\n"
                "        - lock: {path: /c/m.om, mode: exclusive}\n"
                "        - write: /c/m.om\n"
                "        - unlock: /c/m.om\n"
                "        - close: /c/m.om\n"
                "      else:\n"
                "        - sleep: 100ms\n"
                "        - lock: {path: /c/m.om, mode: shared}\n"
                "        - mark: {name: got_lock, metric: true}\n"
                "        - load_model: /c/m.om\n",
                platform() + "faults: [{kind: crash, on: rank0, at: 500ms}]\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_NEAR(r.metrics.at("got_lock_s"), 0.5, 0.01);
  EXPECT_THAT(r.diagnosis, HasSubstr("of 100 MiB written by rank 0 (closed at that size)"));
  EXPECT_DOUBLE_EQ(r.metrics.at("crashed_ranks"), 1);
}

TEST(StorageTest, LocalMountsArePerNodeAndSharedMountsAreNot) {
  const std::string program =
      "  - if: {rank: rank0, then: [{write_file: {path: /c/f, size: 1MiB}}]}\n"
      "  - barrier: written\n"
      "  - if: {exists: /c/f, then: [{count: saw}]}\n";
  auto one_node = make(4, program, platform("local") + "  ranks_per_node: 4\n");
  EXPECT_DOUBLE_EQ(run(one_node).metrics.at("saw"), 4);
  auto two_nodes = make(4, program, platform("local") + "  ranks_per_node: 2\n");
  EXPECT_DOUBLE_EQ(run(two_nodes).metrics.at("saw"), 2);
  auto lustre = make(4, program, platform("lustre") + "  ranks_per_node: 1\n");
  EXPECT_DOUBLE_EQ(run(lustre).metrics.at("saw"), 4);
}

TEST(StorageTest, APathOnNoMountIsALocatedErrorNamingTheMounts) {
  // Found when the program is compiled, not in every seed.
  EXPECT_THAT(compile_errors(1, "  - write_file: {path: /elsewhere/f, size: 1MiB}\n", platform()),
              HasSubstr("t.yaml:8:24: error: write_file path: '/elsewhere/f' is on no mount (platform.storage "
                        "mounts: /c)"));
  // Each rank's path is checked, as that rank resolves it.
  EXPECT_THAT(compile_errors(2, "  - rename: {from: /c/a, to: \"/c${rank}/b\"}\n", platform()),
              HasSubstr("rename to: '/c0/b' is on no mount"));
  EXPECT_EQ(compile_errors(2, "  - rename: {from: /c/a, to: \"/c/${rank}/b\"}\n", platform()), "");
  EXPECT_THAT(compile_errors(1, "  - read: relative/f\n", platform()), HasSubstr("'relative/f' is not an absolute path"));
}

TEST(StorageTest, WriteFileNeedsItsDirectoryAndMkdirCanMakeItAsMakedirsDoes) {
  auto missing = run(make(1, "  - write_file: {path: /c/ckpt/step1/model.pt, size: 1MiB}\n", platform()));
  EXPECT_THAT(missing.diagnosis, HasSubstr("open /c/ckpt/step1/model.pt: ENOENT"));
  auto twice = run(make(1, "  - mkdir: /c/ckpt\n  - mkdir: /c/ckpt\n", platform()));
  EXPECT_THAT(twice.diagnosis, HasSubstr("mkdir /c/ckpt: EEXIST"));
  auto r = run(make(1,
                    "  - mkdir: {path: /c/ckpt/step1, parents: true}\n"
                    "  - mkdir: {path: /c/ckpt/step1, exist_ok: true}\n"
                    "  - write_file: {path: /c/ckpt/step1/model.pt, size: 1MiB}\n"
                    "  - write_file: {path: /c/ckpt/f, size: 1B}\n"
                    "  - try: {do: [{mkdir: {path: /c/ckpt/f, exist_ok: true}}], catch: [{count: not_a_dir}]}\n",
                    platform()));
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("not_a_dir"), 1.0) << "exist_ok accepts an existing directory, not a file";
  // mkdir /c/ckpt/step1 (ENOENT), /c/ckpt, /c/ckpt/step1; mkdir (EEXIST) + stat; two files
  // (open and close each); mkdir (EEXIST) + stat.
  EXPECT_EQ(r.metrics.at("fs.c.meta_ops"), 3.0 + 2.0 + 4.0 + 2.0);
}

TEST(StorageTest, ATextFileIsReadAsItsVisiblePrefix) {
  // A `latest` pointer written at 1 s; rank 1 branches on it before and after.
  auto f = make(2,
                "  - if:\n      rank: rank0\n"
                "      then: [{sleep: 1s}, {write_text: {path: /c/latest, text: \"step${world * 100}\"}}]\n"
                "      else:\n"
                "        - if: {text: {path: /c/latest, equals: step200}, then: [{count: early}]}\n"
                "        - sleep: 2s\n"
                "        - if: {text: {path: /c/latest, equals: step200}, then: [{count: late}], else: [{count: other}]}\n",
                platform());
  ASSERT_TRUE(f.study);
  const auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("early"), 0.0) << "a file that does not exist holds no text";
  EXPECT_EQ(r.metrics.at("late"), 1.0);
  EXPECT_EQ(r.metrics.at("other"), 0.0);
}

// Two mounts: local /l (per node) and shared /s.
std::string local_and_lustre() {
  return "platform:\n  storage:\n"
         "    l: {kind: local, mount: /l, meta_latency: 1ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n"
         "    s: {kind: lustre, mount: /s, meta_latency: 10ms, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, chunk: 1MiB}\n";
}

TEST(StorageTest, MoveIsARenameOnOneMountAndCopyThenUnlinkAcrossMounts) {
  auto f = make(1,
                "  - mkdir: /l/prof\n  - mkdir: /l/prof/raw\n"
                "  - write_file: {path: /l/prof/raw/a.bin, size: 10MiB}\n"
                "  - write_file: {path: /l/prof/trace.json, size: 20MiB}\n"
                "  - mark: {name: written, metric: true}\n"
                "  - move: {from: /l/prof, to: /s/prof}\n"
                "  - mark: {name: moved, metric: true}\n"
                "  - move: {from: /s/prof/trace.json, to: /s/trace.json}\n"
                "  - if: {exists: /l/prof, then: [{fail: the source is still there}]}\n"
                "  - load_model: /s/prof/raw/a.bin\n"
                "  - load_model: /s/trace.json\n",
                local_and_lustre());
  ASSERT_TRUE(f.study);
  const auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  // Across mounts: every byte read from /l and written to /s (30 MiB each way at 100 MiB/s).
  EXPECT_EQ(r.metrics.at("fs.l.bytes_read"), 30.0 * (1 << 20));
  EXPECT_EQ(r.metrics.at("fs.s.bytes_written"), 30.0 * (1 << 20));
  EXPECT_GT(r.metrics.at("moved_s") - r.metrics.at("written_s"), 0.6) << "two 300 ms copies and the metadata";
  // On /s: the exists check, two mkdirs, an open and a close per file; then a rename on /s
  // alone, and the two loads (an open each).
  EXPECT_EQ(r.metrics.at("fs.s.meta_ops"), 1.0 + 2.0 + 2.0 * 2.0 + 1.0 + 2.0);
}

// `copy` is cp: across two mounts the file is read on one and written whole to the other (its
// content identity kept: a copy of a whole model loads, a copy taken mid-write is torn), while a
// rename across mounts is EXDEV, as rename(2) is.
TEST(StorageTest, CopyCrossesMountsAsCpDoesAndRenameDoesNot) {
  auto f = make(2,
                "  - if:\n"
                "      rank: 0\n"
                "      then:\n"
                "        - write_file: {path: /l/m.om, size: 10MiB}\n"
                "        - copy: {from: /l/m.om, to: /s/whole.om}\n"
                "        - load_model: /s/whole.om\n"
                "        - write_file: {path: /l/slow.om, size: 100MiB}\n"
                "      else:\n"
                "        - sleep: 0.6s\n"
                "        - copy: {from: /l/slow.om, to: /s/torn.om}\n"
                "        - load_model: {path: /s/torn.om}\n",
                local_and_lustre() + "checks: [no_deadlock, no_timeout]\n");
  ASSERT_TRUE(f.study);
  const auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  // Every byte read on /l is written to /s: the whole model and the part of the other written.
  EXPECT_EQ(r.metrics.at("fs.s.bytes_written"), r.metrics.at("fs.l.bytes_read"));
  EXPECT_GT(r.metrics.at("fs.s.bytes_written"), 10.0 * (1 << 20));
  EXPECT_LT(r.metrics.at("fs.s.bytes_written"), 110.0 * (1 << 20));
  EXPECT_EQ(r.metrics.at("loads"), 2.0);
  EXPECT_EQ(r.metrics.at("torn_reads"), 1.0) << "the copy of a file being written is torn; the whole one is not";
  EXPECT_EQ(r.metrics.at("fs.s.torn_at_end"), 1.0);
  auto renamed = make(1, "  - write_file: {path: /l/m.om, size: 1MiB}\n  - rename: {from: /l/m.om, to: /s/m.om}\n",
                      local_and_lustre());
  ASSERT_TRUE(renamed.study);
  const auto e = run(renamed);
  EXPECT_TRUE(run::failed(e.outcome));
  EXPECT_THAT(e.diagnosis, HasSubstr("EXDEV (not on the same mount)"));
}

TEST(StorageTest, ACrashDuringAMoveLeavesBothSidesPartial) {
  auto f = make(1,
                "  - mkdir: /l/prof\n"
                "  - for_each: {var: i, range: 4, do: [{write_file: {path: \"/l/prof/f${i}\", size: 10MiB}}]}\n"
                "  - move: {from: /l/prof, to: /s/prof}\n",
                local_and_lustre() + "faults: [{kind: crash, on: rank0, at: 0.55s}]\n");
  ASSERT_TRUE(f.study);
  const auto r = run(f);
  EXPECT_EQ(r.metrics.at("crashed_ranks"), 1.0);
  // 4 files of 100 ms each written by 0.45 s; the copies take 200 ms each from about 0.5 s.
  EXPECT_LT(r.metrics.at("fs.s.bytes_written"), 40.0 * (1 << 20));
  EXPECT_EQ(r.metrics.at("fs.l.bytes_written"), 40.0 * (1 << 20));
}

TEST(StorageTest, TheChromeTraceNamesEachStepAndClosesAKilledRanksSliceAtItsDeath) {
  // Rank 0 writes 100 MiB (1 s) and is killed half way; rank 1 waits at a barrier for it.
  auto f = make(2, "  - if: {rank: rank0, then: [{write_file: {path: /c/ckpt.pt, size: 100MiB}}]}\n  - barrier: done\n",
                platform() + "faults: [{kind: crash, on: rank0, at: 0.5s}]\n");
  ASSERT_TRUE(f.study);
  std::ostringstream trace;
  const auto r = run::run_one(*f.study->programs[0], 1, {}, &trace);
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock);
  const auto j = nlohmann::json::parse(trace.str());
  std::vector<std::string> slices;
  double killed_end = -1;
  bool failure = false;
  for (const auto& e : j["traceEvents"]) {
    const std::string cat = e.value("cat", ""), name = e.value("name", ""), ph = e.value("ph", "");
    if (cat == "step" && ph == "B") slices.push_back(name);
    if (cat == "step" && ph == "E" && name == "write_file /c/ckpt.pt (100MiB)") killed_end = e["ts"].get<double>();
    if (cat == "failure") failure = name.find("no_deadlock: rank 1: arrive on barrier 'done'") == 0;
  }
  EXPECT_THAT(slices, ::testing::Contains("write_file /c/ckpt.pt (100MiB)"));
  EXPECT_THAT(slices, ::testing::Contains("barrier done"));
  EXPECT_THAT(slices, ::testing::Not(::testing::Contains("if"))) << "a container step has no slice of its own";
  EXPECT_DOUBLE_EQ(killed_end, 500000.0) << "closed at the crash, 0.5 s (in microseconds)";
  EXPECT_TRUE(failure) << "the deadlock is marked";
  // A trace does not change the run: the same hash as without one.
  EXPECT_EQ(r.trace_hash, run(f, 1).trace_hash);
}

// A condition is a slice of its own with where it is written and its result, and on nfs whether
// the client's cache answered; every slice has arguments; a slice still open when the run ends (a
// rank blocked in a deadlock) is closed at the end, saying so.
TEST(StorageTest, TheChromeTraceShowsConditionsAndTheirCacheAndClosesSlicesOpenAtTheEnd) {
  // Rank 0 looks /c/f up twice (nfs: a miss at the server, then a negative-lookup hit), computes,
  // loads nothing; rank 1 waits for a mark nobody sets.
  auto f = make(2,
                "  - if: {rank: rank0, then: [{if: {exists: /c/f, then: []}}, {if: {exists: /c/f, then: []}}, {compute: 5ms}],\n"
                "         else: [{wait: never}]}\n",
                platform("nfs"));
  ASSERT_TRUE(f.study);
  std::ostringstream trace;
  const auto r = run::run_one(*f.study->programs[0], 1, {}, &trace);
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock);
  const auto j = nlohmann::json::parse(trace.str());
  std::vector<std::string> conditions;  // "NAME at PLACE: RESULT (cache)", in the order they ended
  std::map<int, std::string> open_condition;  // by lane: the latest condition begun there
  int begins = 0, without_args = 0, closed_at_end = 0;
  std::string compute_duration;
  for (const auto& e : j["traceEvents"]) {
    const std::string cat = e.value("cat", ""), name = e.value("name", ""), ph = e.value("ph", "");
    if (ph == "B") {
      ++begins;
      if (!e.contains("args")) ++without_args;
      if (cat == "condition") open_condition[e["tid"].get<int>()] = name + " at " + e["args"].value("at", "?");
      if (cat == "compute") compute_duration = e["args"].value("duration", "");
    }
    if (ph == "E" && cat == "condition") {
      conditions.push_back(open_condition[e["tid"].get<int>()] + ": " + e["args"]["result"].dump() + " (" +
                           e["args"].value("cache", "no cache") + ")");
    }
    if (ph == "E" && e.contains("args") && e["args"].value("open_at_end", false)) {
      ++closed_at_end;
      EXPECT_EQ(e["ts"].get<double>(), static_cast<double>(r.makespan) / 1000.0);
      EXPECT_EQ(e["tid"], 2) << "rank 1's lane: " << e.dump();
    }
  }
  EXPECT_EQ(conditions, (std::vector<std::string>{
                            "if rank: rank0 at t.yaml:8:9: true (no cache)",
                            "if rank: rank0 at t.yaml:8:9: false (no cache)",
                            "if exists /c/f at t.yaml:8:35: false (miss)",
                            "if exists /c/f at t.yaml:8:67: false (hit)",
                        }));
  EXPECT_EQ(compute_duration, "5ms");
  EXPECT_GT(begins, 4);
  EXPECT_EQ(without_args, 0);
  EXPECT_EQ(closed_at_end, 2) << "rank 1's wait step and the kernel's wait inside it";
  // On a local mount the lookups have no cache to tell of.
  auto local = make(1, "  - if: {exists: /c/f, then: []}\n", platform());
  std::ostringstream local_trace;
  run::run_one(*local.study->programs[0], 1, {}, &local_trace);
  EXPECT_THAT(local_trace.str(), HasSubstr(R"("args":{"result":false}})"));
}

TEST(StorageTest, OperationsOnFilesNotOpenAreErrors) {
  auto r = run(make(1, "  - write: /c/f\n", platform()));
  EXPECT_THAT(r.diagnosis, HasSubstr("write /c/f: not open on this rank (create it first)"));
  auto twice = run(make(1, "  - create: {path: /c/f}\n  - create: {path: /c/f}\n", platform()));
  EXPECT_THAT(twice.diagnosis, HasSubstr("open /c/f: already open on this rank"));
  auto excl = run(make(1, "  - write_file: {path: /c/f, size: 1B}\n  - write_file: {path: /c/f, size: 1B, mode: exclusive}\n", platform()));
  EXPECT_THAT(excl.diagnosis, HasSubstr("open /c/f: EEXIST"));
}

TEST(StorageTest, PlatformErrorsAreLocated) {
  Diagnostics d;
  auto sc = load_scenario_text(
      "name: t\nranks: 1\n"
      "platform:\n"
      "  ranks_per_node: 0\n"
      "  storage:\n"
      "    c: {kind: nfz, mount: /c, bandwidth: 5ms, flock: maybe, colour: red}\n"
      "    d: {kind: local, mount: c}\n"
      "    e: {kind: local, mount: /c/}\n"
      "    f: {kind: local}\n"
      "program: [{sleep: 1s}]\nstrategies: {only: }\n",
      "p.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  Diagnostics cd;
  EXPECT_FALSE(compile_program(*sc, sc->strategies[0], cd));
  const std::string e = cd.to_string();
  EXPECT_THAT(e, HasSubstr("p.yaml:4:19: error: platform.ranks_per_node: expected 1 to 1048576, got 0"));
  EXPECT_THAT(e, HasSubstr("p.yaml:6:61: error: unknown key 'colour' in platform.storage.c"));
  EXPECT_THAT(e, HasSubstr("p.yaml:6:15: error: platform.storage.c.kind: expected one of local, nfs, lustre, got 'nfz'"));
  EXPECT_THAT(e, HasSubstr("p.yaml:6:42: error: platform.storage.c.bandwidth:"));
  EXPECT_THAT(e, HasSubstr("p.yaml:6:54: error: platform.storage.c.flock: expected one of flock, localflock, noflock, got 'maybe'"));
  EXPECT_THAT(e, HasSubstr("p.yaml:7:29: error: platform.storage.d.mount: expected an absolute path like /cache"));
  EXPECT_THAT(e, HasSubstr("p.yaml:9:8: error: platform.storage.f: a mount needs 'kind'"));
  // An override is named as such.
  Diagnostics od;
  auto good = load_scenario_text("name: t\nranks: 1\n" + platform() + "program: [{sleep: 1s}]\nstrategies: {only: }\n",
                                 "g.yaml", od);
  ASSERT_TRUE(good) << od.to_string();
  ASSERT_TRUE(apply_override(*good, "platform.storage.c.kind=ntfs", od));
  EXPECT_FALSE(compile_program(*good, good->strategies[0], od));
  EXPECT_THAT(od.to_string(), HasSubstr("--set platform.storage.c.kind: error: platform.storage.c.kind: expected one of local, nfs, lustre, got 'ntfs'"));
}

TEST(StorageTest, StepArgumentErrorsAreLocated) {
  Diagnostics d;
  auto sc = load_scenario_text(
      "name: t\nranks: 1\n" + platform() +
          "program:\n"
          "  - lock: {path: /c/f, mode: sometimes}\n"
          "  - write_file: {path: /c/f, size: 5s}\n"
          "  - create: {path: /c/f, mode: overwrite}\n"
          "  - wait_size_stable: {path: /c/f, interval: 1s, polls: 0}\n"
          "strategies: {only: }\n",
      "a.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  EXPECT_FALSE(compile_program(*sc, sc->strategies[0], d));
  const std::string e = d.to_string();
  EXPECT_THAT(e, HasSubstr("a.yaml:7:30: error: lock mode: expected shared (LOCK_SH) or exclusive (LOCK_EX)"));
  EXPECT_THAT(e, HasSubstr("a.yaml:8:36: error: write_file size:"));
  EXPECT_THAT(e, HasSubstr("a.yaml:9:32: error: mode: expected truncate"));
  EXPECT_THAT(e, HasSubstr("a.yaml:10:57: error: wait_size_stable polls: expected a whole number from 1"));
}

TEST(StorageTest, RunsAreDeterministicWithJitter) {
  auto f = make(4, writer_and_loader("{uniform: {min: 1s, max: 2s}}"), platform("nfs", ", meta_jitter: 5ms"));
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto a = run(f, seed), b = run(f, seed);
    EXPECT_EQ(a.trace_hash, b.trace_hash);
    EXPECT_EQ(a.makespan, b.makespan);
    EXPECT_EQ(a.diagnosis, b.diagnosis);
  }
}

}  // namespace
}  // namespace racesim::scenario
