// The host family through whole runs of small scenarios: buffers on each node's host memory,
// pinned and pageable copies, the node's peak and its OOM (the model: tests/sim/device).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Eight ranks on two nodes of four, each node 20 GiB; copies over a 20 GB/s link.
std::string platform() {
  return "platform:\n  ranks_per_node: 4\n  host: {memory: 20GiB, pin_bandwidth: 10GB/s, pageable_bandwidth: 5GB/s}\n"
         "  device: {d2h_bandwidth: 20GB/s, h2d_bandwidth: 20GB/s}\n";
}

// A local mount /c with free metadata, 1 MiB chunks, one stream's rate 100 MiB/s and the mount's
// `bandwidth` in all.
std::string local_storage(const char* bandwidth) {
  return std::string("  storage:\n    c: {kind: local, mount: /c, meta_latency: 0s, bandwidth: ") + bandwidth +
         ", client_bandwidth: 100MiB/s, chunk: 1MiB}\n";
}

TEST(HostTest, AStagedCopyCostsPinningThenTheLinkAndPageableCopiesThePageableRate) {
  // 4 GB: pinned, 0.4 s to pin + 0.2 s over the link; pageable, 0.8 s at 5 GB/s.
  auto pinned = run(make(8, "  - host_alloc: {name: s, bytes: 4GB, pinned: true}\n  - d2h: {bytes: 4GB, into: s}\n"
                            "  - h2d: {bytes: 1GB, from: s}\n", platform()));
  EXPECT_EQ(pinned.outcome, run::Outcome::kPass) << pinned.diagnosis;
  EXPECT_NEAR(pinned.metrics.at("makespan_s"), 0.4 + 0.2 + 0.05, 1e-6);
  EXPECT_DOUBLE_EQ(pinned.metrics.at("host.peak_bytes"), 16e9) << "four ranks' buffers on a node";
  EXPECT_DOUBLE_EQ(pinned.metrics.at("host.pinned_peak_bytes"), 16e9);
  EXPECT_DOUBLE_EQ(pinned.metrics.at("host.bytes_copied"), 8 * 5e9);
  auto pageable = run(make(8, "  - host_alloc: {name: s, bytes: 4GB}\n  - d2h: {bytes: 4GB, into: s}\n", platform()));
  EXPECT_NEAR(pageable.metrics.at("makespan_s"), 0.8, 1e-6);
  EXPECT_DOUBLE_EQ(pageable.metrics.at("host.pinned_peak_bytes"), 0);
}

TEST(HostTest, ANodeThatRunsOutOfHostMemoryFailsNoOomNamingItAndFreedMemoryIsReused) {
  // Two 3 GB buffers a rank: 24 GB on a node of 20 GiB (21.5 GB). One at a time: 12 GB.
  auto oom = run(make(8, "  - host_alloc: {name: a, bytes: 3GB, pinned: true}\n  - host_alloc: {name: b, bytes: 3GB}\n",
                      platform()));
  EXPECT_EQ(oom.outcome, run::Outcome::kFail);
  EXPECT_EQ(oom.check, "no_oom");
  EXPECT_THAT(oom.diagnosis, HasSubstr("out of host memory on node 0: b needs 2.8 GiB, 19.6 GiB of 20 GiB in use"));
  EXPECT_THAT(oom.diagnosis, HasSubstr("(t.yaml:"));
  auto freed = run(make(8, "  - host_alloc: {name: a, bytes: 3GB, pinned: true}\n  - host_free: a\n"
                           "  - host_alloc: {name: b, bytes: 3GB}\n", platform()));
  EXPECT_EQ(freed.outcome, run::Outcome::kPass) << freed.diagnosis;
  EXPECT_DOUBLE_EQ(freed.metrics.at("host.peak_bytes"), 12e9);
}

TEST(HostTest, MisusedBuffersAreErrorsNamingTheBufferAndPlatformValuesAreChecked) {
  auto twice = run(make(1, "  - host_alloc: {name: a, bytes: 1GB}\n  - host_alloc: {name: a, bytes: 1GB}\n", platform()));
  EXPECT_THAT(twice.diagnosis, HasSubstr("host_alloc a: already allocated on this rank"));
  auto unknown = run(make(1, "  - d2h: {bytes: 1GB, into: nope}\n", platform()));
  EXPECT_THAT(unknown.diagnosis, HasSubstr("d2h nope: no such buffer on this rank"));
  auto big = run(make(1, "  - host_alloc: {name: a, bytes: 1GB}\n  - h2d: {bytes: 2GB, from: a}\n", platform()));
  EXPECT_THAT(big.diagnosis, HasSubstr("h2d a: 1.9 GiB do not fit its 953.7 MiB"));
  auto unfreed = run(make(1, "  - host_free: a\n", platform()));
  EXPECT_THAT(unfreed.diagnosis, HasSubstr("host_free a: no such buffer on this rank"));
  EXPECT_THAT(compile_errors(1, "  - host_alloc: {name: a, bytes: 1GB}\n", "platform:\n  host: {memory: 0B}\n"),
              HasSubstr("platform.host.memory"));
  EXPECT_THAT(compile_errors(1, "  - host_alloc: {name: a, bytes: 1GB}\n", "platform:\n  host: {swap: 1GB}\n"),
              HasSubstr("swap"));
  EXPECT_THAT(compile_errors(1, "  - host_alloc: {name: a, bytes: 1s}\n"), HasSubstr("host_alloc bytes"));
}

// A flag may come from a use's argument (`pinned: "${pinned}"`), decided when compiled.
TEST(HostTest, AFlagMayBeAUsesArgument) {
  const std::string define =
      "define:\n  stage: {args: [p], do: [{host_alloc: {name: s, bytes: 1GB, pinned: \"${p}\"}}]}\n";
  auto pinned = run(make(1, "  - use: {name: stage, p: true}\n", platform() + define));
  EXPECT_DOUBLE_EQ(pinned.metrics.at("host.pinned_peak_bytes"), 1e9);
  auto pageable = run(make(1, "  - use: {name: stage, p: false}\n", platform() + define));
  EXPECT_DOUBLE_EQ(pageable.metrics.at("host.pinned_peak_bytes"), 0);
  EXPECT_THAT(compile_errors(1, "  - use: {name: stage, p: maybe}\n", platform() + define),
              HasSubstr("host_alloc pinned: expected true or false (or ${NAME} of a use's argument that is one)"));
}

// Compute steps on a node's cores (platform.host.cores): 8 ranks of 2 s on 4 cores share them
// as processor sharing says (all done at 4 s); without cores each has its own (2 s).
TEST(HostCpuTest, ComputeStepsShareTheNodesCores) {
  auto shared = run(make(8, "  - compute: 2s\n", "platform:\n  host: {cores: 4}\n"));
  ASSERT_EQ(shared.outcome, run::Outcome::kPass) << shared.diagnosis;
  EXPECT_NEAR(shared.metrics.at("makespan_s"), 4.0, 0.05 * 4.0);
  EXPECT_DOUBLE_EQ(shared.metrics.at("host.cpu_busy_s"), 16);
  EXPECT_GT(shared.metrics.at("host.cpu_wait_s"), 0);
  EXPECT_EQ(shared.metrics.at("host.cpu_runnable_max"), 8);
  EXPECT_EQ(shared.metrics.at("host.cpu_migrations"), 0) << "one queue for the node: no work changes core";
  // A queue per core: of three ranks on two cores, the two that share one are done at 4 s unless
  // the balancing or the other core's new-idle pull moves one of them (at 2 s, when the lone
  // rank is done), which it does: done at 3 s.
  auto per_core = run(make(3, "  - compute: 2s\n", "platform:\n  host: {cores: 2, run_queues: per_core}\n"));
  ASSERT_EQ(per_core.outcome, run::Outcome::kPass) << per_core.diagnosis;
  EXPECT_GE(per_core.metrics.at("host.cpu_migrations"), 1);
  EXPECT_LT(per_core.metrics.at("makespan_s"), 3.5);
  // Two nodes of 4 ranks, 4 cores each: no sharing.
  auto spread = run(make(8, "  - compute: 2s\n", "platform:\n  ranks_per_node: 4\n  host: {cores: 4}\n"));
  EXPECT_DOUBLE_EQ(spread.metrics.at("makespan_s"), 2);
  auto off = run(make(8, "  - compute: 2s\n"));
  EXPECT_DOUBLE_EQ(off.metrics.at("makespan_s"), 2);
  EXPECT_EQ(off.metrics.count("host.cpu_busy_s"), 0u) << "no CPU model, no CPU metrics";
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 0.5}\n"), HasSubstr("platform.host.cores"));
}

// A writer on a node whose one core a compute step shares: its write(2) chunks (memcpys into a
// local file system) get half the core, so its bytes land late: 100 MiB at 100 MiB/s take 2 s,
// not 1 s.
TEST(HostCpuTest, ADescheduledWriterLandsItsBytesLate) {
  const std::string storage = local_storage("100MiB/s");
  const std::string program =
      "  - if: {rank: 0, then: [{write_file: {path: /c/f, size: 100MiB}}, {mark: {name: written, metric: true}}],"
      " else: [{compute: 10s}]}\n";
  auto alone = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 2}\n" + storage));
  ASSERT_EQ(alone.outcome, run::Outcome::kPass) << alone.diagnosis;
  EXPECT_NEAR(alone.metrics.at("written_s"), 1.0, 1e-3);
  auto shared = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n" + storage));
  ASSERT_EQ(shared.outcome, run::Outcome::kPass) << shared.diagnosis;
  EXPECT_NEAR(shared.metrics.at("written_s"), 2.0, 0.05 * 2.0);
  EXPECT_GT(shared.metrics.at("host.cpu_preemptions"), 50) << "descheduled between and inside its chunks";
}

// Rewriting a file frees its old pages first (truncate_bandwidth): the kernel's work on the
// writer's core. 100 MiB written, then 1 MiB over it: the truncation frees 100 MiB at 100 MiB/s,
// 1 s on a core of its own, 2 s on a core a compute step shares; a nfs mount has no such setting.
TEST(HostCpuTest, FreeingARewrittenFilesPagesIsTheWritersCpuTime) {
  const std::string program =
      "  - if: {rank: 0, then: [{write_file: {path: /c/f, size: 100MiB}}, {write_file: {path: /c/f, size: 1MiB}},"
      " {mark: {name: written, metric: true}}], else: [{compute: 10s}]}\n";
  const auto storage = [](const char* truncate) {
    return std::string("  storage:\n    c: {kind: local, mount: /c, meta_latency: 0s, bandwidth: 100MiB/s, "
                       "client_bandwidth: 100MiB/s, chunk: 1MiB") + truncate + "}\n";
  };
  const std::string freeing = storage(", truncate_bandwidth: 100MiB/s");
  auto alone = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 2}\n" + freeing));
  ASSERT_EQ(alone.outcome, run::Outcome::kPass) << alone.diagnosis;
  EXPECT_NEAR(alone.metrics.at("written_s"), 1 + 1 + 0.01, 1e-3);
  auto shared = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n" + freeing));
  ASSERT_EQ(shared.outcome, run::Outcome::kPass) << shared.diagnosis;
  EXPECT_NEAR(shared.metrics.at("written_s"), 2 * (1 + 1 + 0.01), 0.05 * 4);
  auto free = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n" + storage("")));
  EXPECT_NEAR(free.metrics.at("written_s"), 2 * (1 + 0.01), 0.05 * 2) << "no truncate_bandwidth: freeing costs nothing";
  EXPECT_THAT(compile_errors(1, "  - mark: x\n",
                             "platform:\n  storage:\n    c: {kind: nfs, mount: /c, truncate_bandwidth: 1GB/s}\n"),
              HasSubstr("truncate_bandwidth is the freeing of a file's pages on one node, a setting of local mounts"));
  EXPECT_THAT(compile_errors(1, "  - mark: x\n", "platform:\n" + storage(", truncate_bandwidth: 0B/s")),
              HasSubstr("platform.storage.c.truncate_bandwidth"));
}

// A local file system's metadata operation is a system call that runs in the kernel on the
// caller's core: a mkdir of 100 ms beside a 10 s compute step on one core takes 0.2 s (half the
// core) and delays the step by 0.1 s. A network file system's waits on the network: 0.1 s, and
// the step ends at 10 s.
TEST(HostCpuTest, ALocalMountsMetadataOperationsAreTheCallersCpuTime) {
  const std::string program =
      "  - if: {rank: 0, then: [{mkdir: {path: /c/d}}, {mark: {name: made, metric: true}}],"
      " else: [{compute: 10s}, {mark: {name: computed, metric: true}}]}\n";
  const auto on = [&](const char* kind) {
    return run(make(2, program, std::string("platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n  storage:\n    c: {kind: ") +
                                    kind + ", mount: /c, meta_latency: 100ms}\n"));
  };
  const auto local = on("local"), nfs = on("nfs");
  ASSERT_EQ(local.outcome, run::Outcome::kPass) << local.diagnosis;
  EXPECT_NEAR(local.metrics.at("made_s"), 0.2, 0.01) << "100 ms of kernel time at half a core";
  EXPECT_NEAR(local.metrics.at("computed_s"), 10.1, 0.01) << "the mkdir's 100 ms were taken from the step's core";
  ASSERT_EQ(nfs.outcome, run::Outcome::kPass) << nfs.diagnosis;
  EXPECT_NEAR(nfs.metrics.at("made_s"), 0.1, 1e-6);
  EXPECT_NEAR(nfs.metrics.at("computed_s"), 10, 1e-6);
}

// A file's fixed cost on a local mount is the caller's work, on its core: beside a 10 s compute
// step on one core each cost takes twice its time, and the step ends later by their sum. A small
// text has its own costs. On nfs they are waits on the network: their own time, and the step ends
// at 10 s. Costs: a write 200 ms, a read 100 ms, a text's write 40 ms, its read 30 ms.
TEST(HostCpuTest, AFilesFixedCostOnALocalMountIsTheCallersCpuTime) {
  const std::string program =
      "  - if: {rank: 0, then: [{write_file: {path: /c/f, size: 1MiB}}, {mark: {name: wrote, metric: true}},"
      " {load_model: /c/f}, {mark: {name: loaded, metric: true}},"
      " {write_text: {path: /c/t, text: x}}, {mark: {name: texted, metric: true}},"
      " {if: {text: {path: /c/t, equals: x}, then: [{mark: {name: read, metric: true}}]}}],"
      " else: [{compute: 10s}, {mark: {name: computed, metric: true}}]}\n";
  const auto on = [&](const char* kind) {
    return run(make(2, program, std::string("platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n  storage:\n    c: {kind: ") +
                                    kind + ", mount: /c, meta_latency: 0s, bandwidth: 100GiB/s, client_bandwidth: 100GiB/s,"
                                    " file_overhead: {read: 100ms, write: 200ms, text_read: 30ms, text_write: 40ms}}\n"));
  };
  const auto local = on("local"), nfs = on("nfs");
  ASSERT_EQ(local.outcome, run::Outcome::kPass) << local.diagnosis;
  EXPECT_NEAR(local.metrics.at("wrote_s"), 0.4, 0.01) << "200 ms of the writer's work at half a core";
  EXPECT_NEAR(local.metrics.at("loaded_s"), 0.6, 0.01);
  EXPECT_NEAR(local.metrics.at("texted_s"), 0.68, 0.01) << "a text's write costs its own 40 ms";
  EXPECT_NEAR(local.metrics.at("read_s"), 0.74, 0.01);
  EXPECT_NEAR(local.metrics.at("computed_s"), 10.37, 0.01) << "the costs were taken from the step's core";
  ASSERT_EQ(nfs.outcome, run::Outcome::kPass) << nfs.diagnosis;
  EXPECT_NEAR(nfs.metrics.at("wrote_s"), 0.2, 0.01);
  EXPECT_NEAR(nfs.metrics.at("read_s"), 0.37, 0.01);
  EXPECT_NEAR(nfs.metrics.at("computed_s"), 10, 1e-6);
  // One duration is every cost; a map's texts cost what its files do unless set.
  const auto one = run(make(1, "  - write_text: {path: /c/t, text: x}\n  - mark: {name: t, metric: true}\n",
                            "platform:\n  storage:\n    c: {kind: local, mount: /c, meta_latency: 0s, file_overhead: 50ms}\n"));
  EXPECT_NEAR(one.metrics.at("t_s"), 0.05, 1e-3);
  const auto map = run(make(1, "  - write_text: {path: /c/t, text: x}\n  - mark: {name: t, metric: true}\n",
                            "platform:\n  storage:\n    c: {kind: local, mount: /c, meta_latency: 0s, file_overhead: {write: 70ms}}\n"));
  EXPECT_NEAR(map.metrics.at("t_s"), 0.07, 1e-3);
  EXPECT_THAT(compile_errors(1, "  - mark: x\n", "platform:\n  storage:\n    c: {kind: local, mount: /c, file_overhead: {reads: 1ms}}\n"),
              HasSubstr("unknown key 'reads' in platform.storage.c.file_overhead (expected one of: read, write, text_read, text_write)"));
  EXPECT_THAT(compile_errors(1, "  - mark: x\n", "platform:\n  storage:\n    c: {kind: local, mount: /c, file_overhead: {read: fast}}\n"),
              HasSubstr("platform.storage.c.file_overhead.read"));
  EXPECT_THAT(compile_errors(1, "  - mark: x\n", "platform:\n  storage:\n    c: {kind: local, mount: /c, chunk_jitter: 1.5}\n"),
              HasSubstr("platform.storage.c.chunk_jitter"));
}

// fsync waits while the disk writes the file's dirty pages: its core runs other work meanwhile.
// 100 MiB copied into the page cache at 1000 MiB/s (0.1 s of CPU, at half of the one core beside
// a compute step), then 1 s of the disk at 100 MiB/s: saved at 1.2 s, and the 2 s step ends at
// 2.1 s (had the fsync held the core: 2.2 s and 3.1 s).
TEST(HostCpuTest, AnFsyncWaitsForTheDiskOffTheCores) {
  const std::string program =
      "  - if: {rank: 0, then: [{write_file: {path: /c/f, size: 100MiB, fsync: true}}, {mark: {name: saved, metric: true}}],"
      " else: [{compute: 2s}, {mark: {name: computed, metric: true}}]}\n";
  auto r = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n  storage:\n"
                                "    c: {kind: local, mount: /c, meta_latency: 0s, bandwidth: 100MiB/s, client_bandwidth: 100MiB/s,"
                                " chunk: 1MiB, page_cache_bandwidth: 1000MiB/s, dirty_limit: 1GiB}\n"));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_NEAR(r.metrics.at("saved_s"), 1.2, 0.02);
  EXPECT_NEAR(r.metrics.at("computed_s"), 2.1, 0.02);
}

// A pageable copy goes through the driver's bounce buffer, the host's CPU: beside a compute step
// on a node of one core it takes twice as long; a pinned copy is the device's DMA and does not.
TEST(HostCpuTest, PageableCopiesShareTheCoresAndPinnedOnesDoNot) {
  const std::string plat = "platform:\n  ranks_per_node: 2\n  host: {memory: 20GiB, pin_bandwidth: 1000GB/s, "
                           "pageable_bandwidth: 5GB/s, cores: 1}\n  device: {d2h_bandwidth: 5GB/s}\n";
  auto copy = [&](const char* pinned) {
    return run(make(2, std::string("  - if: {rank: 0, then: [{host_alloc: {name: s, bytes: 5GB, pinned: ") + pinned +
                           "}}, {d2h: {bytes: 5GB, into: s}}, {mark: {name: copied, metric: true}}], else: [{compute: 10s}]}\n",
                       plat));
  };
  const auto pageable = copy("false"), pinned = copy("true");
  ASSERT_EQ(pageable.outcome, run::Outcome::kPass) << pageable.diagnosis;
  EXPECT_NEAR(pageable.metrics.at("copied_s"), 2.0, 0.05 * 2.0) << "1 s of copying at half a core";
  EXPECT_NEAR(pinned.metrics.at("copied_s"), 1.0, 0.05) << "pinning 5 ms at half a core, then 1 s of DMA";
}

// A compile is host work: two ranks of a node of one core compiling 10 s each finish their
// compiles together at 20 s; with a core each, at 10 s.
TEST(HostCpuTest, CompilesOfRanksOfANodeShareItsCores) {
  const std::string program =
      "  - import: torch\n"
      "  - compiled_call: {fn: f, file: m.py, eager: 1ms, compile: 10s}\n";
  auto one = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 1}\n"));
  ASSERT_EQ(one.outcome, run::Outcome::kPass) << one.diagnosis;
  EXPECT_NEAR(one.metrics.at("last_compile_s"), 20, 0.05);
  auto two = run(make(2, program, "platform:\n  ranks_per_node: 2\n  host: {cores: 2}\n"));
  EXPECT_NEAR(two.metrics.at("last_compile_s"), 10, 1e-6);
}

// platform.host.compute: sleep keeps compute steps off the cores (a live run sleeps through
// them, scaled): 4 ranks of 2 s on one core all end at 2 s, while their writes' copies still
// run on it.
TEST(HostCpuTest, ComputeThatSleepsLeavesTheCoresToTheCopies) {
  auto sleeps = run(make(4, "  - compute: 2s\n", "platform:\n  host: {cores: 1, compute: sleep}\n"));
  ASSERT_EQ(sleeps.outcome, run::Outcome::kPass) << sleeps.diagnosis;
  EXPECT_DOUBLE_EQ(sleeps.metrics.at("makespan_s"), 2);
  auto cores = run(make(4, "  - compute: 2s\n", "platform:\n  host: {cores: 1, compute: cores}\n"));
  EXPECT_NEAR(cores.metrics.at("makespan_s"), 8, 0.05 * 8);
  const std::string storage = local_storage("1000MiB/s");
  auto copies = run(make(4, "  - compute: 1s\n  - write_file: {path: \"/c/f${rank}\", size: 100MiB}\n",
                         "platform:\n  host: {cores: 1, compute: sleep}\n" + storage));
  ASSERT_EQ(copies.outcome, run::Outcome::kPass) << copies.diagnosis;
  EXPECT_NEAR(copies.metrics.at("makespan_s"), 1 + 4, 0.05 * 5) << "four writers' memcpys on one core";
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 1, compute: nap}\n"),
              HasSubstr("platform.host.compute"));
}

// A copy on the cores runs at one stream's rate (a local mount's client_bandwidth) while it has
// a core: the cores, not a division of the node's rate, share it among the copies. Four writers
// of 100 MiB at 100 MiB/s a stream on four cores take 1 s; on two, 2 s; the mount's bandwidth
// still caps the copies that run at once (200 MiB/s: 2 s on four cores). Without cores the
// node's client_bandwidth is shared by its four writers (4 s).
TEST(HostCpuTest, CopiesOnTheCoresRunAtAStreamsRateUpToTheMountsBandwidth) {
  const std::string program = "  - write_file: {path: \"/c/f${rank}\", size: 100MiB}\n";
  auto four = run(make(4, program, "platform:\n  host: {cores: 4}\n" + local_storage("1000MiB/s")));
  ASSERT_EQ(four.outcome, run::Outcome::kPass) << four.diagnosis;
  EXPECT_NEAR(four.metrics.at("makespan_s"), 1, 0.02);
  auto two = run(make(4, program, "platform:\n  host: {cores: 2}\n" + local_storage("1000MiB/s")));
  EXPECT_NEAR(two.metrics.at("makespan_s"), 2, 0.05 * 2);
  auto capped = run(make(4, program, "platform:\n  host: {cores: 4}\n" + local_storage("200MiB/s")));
  EXPECT_NEAR(capped.metrics.at("makespan_s"), 2, 0.05 * 2);
  auto off = run(make(4, program, "platform:\n" + local_storage("200MiB/s")));
  EXPECT_NEAR(off.metrics.at("makespan_s"), 4, 0.02) << "without cores: the node's rate shared, as before";
}

// run_queues: per_core gives each core its own queue, as Linux does: two writers of one file
// (the second opens it with O_TRUNC 0.3 s after the first) beside a rank that computes, on two
// cores. One shared queue gives the three 2/3 of a core each, so the later writer never catches
// up with the earlier one and the file ends whole. With a queue per core one of the three has a
// core to itself until the balancing moves another in: in some seeds it is the later writer,
// which overtakes the earlier, whose last chunks then land on its bytes (a mixture at the end).
TEST(HostCpuTest, AWriterWithACoreToItselfOvertakesAnEarlierOne) {
  const std::string program =
      "  - if: {rank: 0, then: [{compute: 100s}], else: [{sleep: \"${max(rank - 1, 0) * 300ms}\"},"
      " {write_file: {path: /c/f, size: 100MiB}}]}\n";
  const std::string storage = local_storage("1000MiB/s");
  const auto torn = [&](const std::string& queues) {
    const Fixture f = make(3, program, "platform:\n  host: {cores: 2, " + queues + "}\n" + storage);
    int n = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      const run::RunRecord r = run(f, seed);
      EXPECT_NE(r.outcome, run::Outcome::kError) << r.diagnosis;
      n += r.metrics.at("fs.c.torn_at_end") > 0;
    }
    return n;
  };
  EXPECT_EQ(torn("run_queues: shared"), 0);
  const int apart = torn("run_queues: per_core, sched_balance_interval: 500ms");
  EXPECT_GT(apart, 0);
  EXPECT_LT(apart, 40);
}

// A read runs at read_bandwidth and shares read_shared_bandwidth with the reads alone: live, a
// read beside writes on the other cores keeps its rate (the writes' rate in all measures the
// writes). Two cores, writes of 100 MiB/s a stream and 100 MiB/s in all (two at once: 50 each),
// reads of 100 MiB/s. Rank 1 writes 50 MiB beside rank 0's long write (1 s), then reads it
// beside that write: sharing the writes' rate, at 50 MiB/s (done at 2 s); with a rate of its
// own for the reads, at 100 (1.5 s). Two ranks reading at once share it: at 200 MiB/s in all
// each reads at 100; at 100 in all, at 50.
// Two cores and mount c: writes of 100 MiB/s a stream and 100 MiB/s in all, reads of 100 MiB/s,
// and the keys `reads` adds (", read_shared_bandwidth: ...").
std::string two_cores_reading(const std::string& reads) {
  return "platform:\n  host: {cores: 2}\n  storage:\n    c: {kind: local, mount: /c, meta_latency: 0s, "
         "bandwidth: 100MiB/s, client_bandwidth: 100MiB/s, read_bandwidth: 100MiB/s, chunk: 1MiB" + reads + "}\n";
}

// Rank 1 writes 50 MiB beside rank 0's long write, then loads it beside that write (mark read).
constexpr const char* kReadBesideAWrite =
    "  - if: {rank: 0, then: [{write_file: {path: /c/w, size: 400MiB}}], else: [{write_file: {path: /c/r, size: 50MiB}},"
    " {load_model: /c/r}, {mark: {name: read, metric: true}}]}\n";

// Each rank writes 50 MiB, then loads it (mark read).
constexpr const char* kWriteThenRead =
    "  - write_file: {path: \"/c/f${rank}\", size: 50MiB}\n  - load_model: \"/c/f${rank}\"\n"
    "  - mark: {name: read, metric: true}\n";

TEST(HostCpuTest, ReadsShareTheirOwnRateNotTheWrites) {
  const auto storage = two_cores_reading;
  const std::string beside = kReadBesideAWrite;
  auto shared = run(make(2, beside, storage("")));
  ASSERT_EQ(shared.outcome, run::Outcome::kPass) << shared.diagnosis;
  EXPECT_NEAR(shared.metrics.at("read_s"), 2.0, 0.02) << "the read shares the writes' 100 MiB/s";
  auto own = run(make(2, beside, storage(", read_shared_bandwidth: 200MiB/s")));
  ASSERT_EQ(own.outcome, run::Outcome::kPass) << own.diagnosis;
  EXPECT_NEAR(own.metrics.at("read_s"), 1.5, 0.02) << "the read at its own rate beside the write";
  const std::string together = kWriteThenRead;
  auto wide = run(make(2, together, storage(", read_shared_bandwidth: 200MiB/s")));
  ASSERT_EQ(wide.outcome, run::Outcome::kPass) << wide.diagnosis;
  EXPECT_NEAR(wide.metrics.at("read_s"), 1.0 + 0.5, 0.02) << "two writes at 50 each, then two reads at 100 each";
  auto narrow = run(make(2, together, storage(", read_shared_bandwidth: 100MiB/s")));
  EXPECT_NEAR(narrow.metrics.at("read_s"), 1.0 + 1.0, 0.02) << "two reads at once share 100 MiB/s";
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n",
                             "platform:\n  storage:\n    c: {kind: local, mount: /c, read_shared_bandwidth: 1GB/s}\n"),
              AllOf(HasSubstr("platform.storage.c.read_shared_bandwidth"), HasSubstr("set read_bandwidth too")));
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n",
                             "platform:\n  storage:\n    c: {kind: local, mount: /c, read_bandwidth: 1GB/s, "
                             "read_shared_bandwidth: 0B/s}\n"),
              HasSubstr("platform.storage.c.read_shared_bandwidth"));
}

// A read beside writes takes read_amid_writes_bandwidth in place of read_bandwidth, for each
// chunk that starts while a write copies: live, copies at once on the cores contend for the
// node's memory, and a read amid writes costs more CPU than one alone. As above, rank 1 writes 50
// MiB beside rank 0's long write (1 s) and reads it beside that write: at 50 MiB/s amid writes,
// done at 2 s (1.5 s at its own 100). Reads with no write beside them keep their rate.
TEST(HostCpuTest, AReadAmidWritesTakesItsRateAmidWrites) {
  const auto storage = [](const std::string& reads) {
    return two_cores_reading(", read_shared_bandwidth: 200MiB/s" + reads);
  };
  const std::string beside = kReadBesideAWrite;
  auto amid = run(make(2, beside, storage(", read_amid_writes_bandwidth: 50MiB/s")));
  ASSERT_EQ(amid.outcome, run::Outcome::kPass) << amid.diagnosis;
  EXPECT_NEAR(amid.metrics.at("read_s"), 2.0, 0.02) << "50 MiB at 50 MiB/s beside the write";
  auto own = run(make(2, beside, storage("")));
  EXPECT_NEAR(own.metrics.at("read_s"), 1.5, 0.02) << "without the key, the read's own rate";
  // Amid a write for part of the read: rank 1 writes 100 MiB alone (1 s), then reads it while
  // rank 0 writes 25 MiB from 1 s (at 50 MiB/s beside the read, 0.5 s): 25 MiB amid it at 50
  // MiB/s, then 75 MiB at 100 (0.75 s).
  const std::string part =
      "  - if: {rank: 0, then: [{sleep: 1s}, {write_file: {path: /c/w, size: 25MiB}}], else: [{write_file: {path: "
      "/c/r, size: 100MiB}}, {load_model: /c/r}, {mark: {name: read, metric: true}}]}\n";
  auto partly = run(make(2, part, storage(", read_amid_writes_bandwidth: 50MiB/s")));
  ASSERT_EQ(partly.outcome, run::Outcome::kPass) << partly.diagnosis;
  EXPECT_NEAR(partly.metrics.at("read_s"), 1.0 + 0.5 + 0.75, 0.03);
  // Reads with no write beside them: two writes at 50 each, then two reads at 100 each.
  auto after = run(make(2, kWriteThenRead, storage(", read_amid_writes_bandwidth: 50MiB/s")));
  ASSERT_EQ(after.outcome, run::Outcome::kPass) << after.diagnosis;
  EXPECT_NEAR(after.metrics.at("read_s"), 1.0 + 0.5, 0.02) << "two writes at 50 each, then two reads at 100 each";
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n",
                             "platform:\n  storage:\n    c: {kind: local, mount: /c, read_amid_writes_bandwidth: 1GB/s}\n"),
              AllOf(HasSubstr("platform.storage.c.read_amid_writes_bandwidth"), HasSubstr("set read_bandwidth too")));
}

// Under host CPUs a mount accounts the CPU it charges to reads and writes (fs.MOUNT.read_cpu_s,
// write_cpu_s): a write of 100 MiB at 100 MiB/s with a fixed cost of 10 ms, 1.01 s; its read at
// 200 MiB/s with 5 ms, 0.505 s, and 2 ms for its open. Without cores nothing is charged to a
// core, and the two are not recorded.
TEST(HostCpuTest, AMountAccountsTheCpuOfItsReadsAndWrites) {
  const std::string storage =
      "  storage:\n    c: {kind: local, mount: /c, meta_latency: 2ms, client_bandwidth: 100MiB/s, bandwidth: 1GiB/s, "
      "read_bandwidth: 200MiB/s, chunk: 1MiB, file_overhead: {read: 5ms, write: 10ms}}\n";
  const std::string program = "  - write_file: {path: /c/f, size: 100MiB}\n  - load_model: /c/f\n";
  auto on = run(make(1, program, "platform:\n  host: {cores: 1}\n" + storage));
  ASSERT_EQ(on.outcome, run::Outcome::kPass) << on.diagnosis;
  EXPECT_NEAR(on.metrics.at("fs.c.write_cpu_s"), 1.01, 1e-9);
  EXPECT_NEAR(on.metrics.at("fs.c.read_cpu_s"), 0.002 + 0.005 + 0.5, 1e-9);
  auto off = run(make(1, program, "platform:\n" + storage));
  ASSERT_EQ(off.outcome, run::Outcome::kPass) << off.diagnosis;
  EXPECT_FALSE(off.metrics.count("fs.c.read_cpu_s"));
  EXPECT_FALSE(off.metrics.count("fs.c.write_cpu_s"));
}

TEST(HostCpuTest, RunQueueSettingsAreChecked) {
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, run_queues: each}\n"),
              HasSubstr("platform.host.run_queues"));
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, sched_balance_interval: 1s}\n"),
              HasSubstr("set run_queues: per_core too"));
  EXPECT_THAT(
      compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, run_queues: per_core, sched_balance_interval: 1ns}\n"),
      HasSubstr("platform.host.sched_balance_interval"));
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, sched_load_half_life: 32ms}\n"),
              AllOf(HasSubstr("platform.host.sched_load_half_life"), HasSubstr("set run_queues: per_core too")));
  EXPECT_THAT(
      compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, run_queues: per_core, sched_load_half_life: 0s}\n"),
      HasSubstr("platform.host.sched_load_half_life"));
  EXPECT_EQ(compile_errors(1, "  - compute: 1s\n",
                           "platform:\n  host: {cores: 2, run_queues: per_core, sched_load_half_life: 3.2s}\n"),
            "");
}

// scheduler: eevdf takes EEVDF's slice and tick, and each scheduler's settings are errors with
// the other. Under EEVDF on one core, two compute steps of 100 ms from 0 take turns at each
// tick of 4 ms (a slice of 1.4 ms ends at the tick after it): the first is done at 196 ms.
TEST(HostCpuTest, TheSchedulerIsCfsOrEevdfWithItsOwnSettings) {
  const std::string eevdf = "platform:\n  host: {cores: 1, scheduler: eevdf, sched_base_slice: 1.4ms, sched_tick: 4ms}\n";
  auto turns = run(make(2, "  - compute: 100ms\n  - mark: done\n", eevdf));
  ASSERT_EQ(turns.outcome, run::Outcome::kPass) << turns.diagnosis;
  EXPECT_DOUBLE_EQ(turns.metrics.at("makespan_s"), 0.2);
  EXPECT_DOUBLE_EQ(turns.metrics.at("host.cpu_preemptions"), 48);
  auto cfs = run(make(2, "  - compute: 100ms\n  - mark: done\n", "platform:\n  host: {cores: 1}\n"));
  EXPECT_NE(cfs.metrics.at("host.cpu_preemptions"), 48) << "CFS's 3 ms slices on one core, not the ticks";
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, scheduler: bfs}\n"),
              AllOf(HasSubstr("platform.host.scheduler"), HasSubstr("cfs"), HasSubstr("eevdf")));
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, scheduler: eevdf, sched_latency: 6ms}\n"),
              AllOf(HasSubstr("platform.host.sched_latency"), HasSubstr("CFS's setting")));
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, sched_tick: 4ms}\n"),
              AllOf(HasSubstr("platform.host.sched_tick"), HasSubstr("set scheduler: eevdf too")));
  EXPECT_THAT(compile_errors(1, "  - compute: 1s\n", "platform:\n  host: {cores: 2, scheduler: eevdf, sched_base_slice: 0s}\n"),
              HasSubstr("platform.host.sched_base_slice"));
}

}  // namespace
}  // namespace racesim::scenario
