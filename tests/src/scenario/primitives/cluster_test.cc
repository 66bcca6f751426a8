// The device, collective and weights primitives, through whole runs of small scenarios, and the
// cluster runtime's communicators per mesh group (the engine, comm queues, devices and DTensor
// tables are tested in tests/sim/).
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/runtime/dtensor.h"
#include "src/scenario/language/loader.h"
#include "src/scenario/primitives/cluster.h"
#include "src/scenario/execute/run_state.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

// The first call for a group fills every member's slot (ClusterRuntime::comm): each rank, asked
// in an order where a member other than the first builds each group, gets its own group's
// communicator, the engine's one for that group.
TEST(ClusterRuntimeTest, EachRankGetsItsMeshGroupsCommunicator) {
  for (int ep : {1, 2, 4}) {
    SCOPED_TRACE("ep " + std::to_string(ep));
    kernel::Simulation sim;
    Platform platform;
    platform.mesh.ep = ep;
    RunState run(sim, &platform, 8);
    ClusterRuntime& c = run.model<ClusterRuntime>();
    const runtime::DeviceMesh mesh({{"ep", ep}, {"fsdp", 8 / ep}});
    for (int r : {5, 0, 3, 6, 1, 2, 7, 4}) {
      for (int dim : {0, 1}) {
        const std::string name = dim == 0 ? "ep" : "fsdp";
        const std::vector<int> group = mesh.group(r, dim);
        collective::Communicator& got = c.comm(name, r);
        EXPECT_EQ(got.ranks(), group) << name << " of rank " << r;
        // A group of every rank is world itself; any other is the engine's for its members.
        collective::Communicator& want =
            group.size() == 8 ? c.comm("world", r) : c.engine().communicator(name, group);
        EXPECT_EQ(&got, &want) << name << " of rank " << r;
      }
    }
  }
}

// A small MoE on 4 ranks: 2 layers, 4 experts (2 per ep group), mesh ep x fsdp.
std::string cluster(int ep, const std::string& collective = "{exec_timeout: none}") {
  return "platform:\n  ranks_per_node: 4\n  mesh: {ep: " + std::to_string(ep) +
         "}\n  model: {layers: 2, hidden: 64, intermediate: 32, experts: 4, vocab: 128, heads: 4, kv_heads: 2}\n"
         "  collective: " + collective + "\n";
}

// rank0_load_and_broadcast_weights composed from the weights primitives, with the dispatch of
// one of the scenario's strategies. Rank 0 reads the checkpoint at 1 MB/s (8 KiB tensors: ~8 ms
// each), so its next broadcast comes late and its device always runs the expert scatter first.
std::string load(const std::string& strategy, const std::string& slice = "100us", const std::string& gap = "10us") {
  const std::map<std::string, std::string> dispatch = {
      {"implicit_redistribute", "distribute_tensor: {src_data_rank: 0}"},
      {"coordinated_redistribute", "distribute_tensor: {src_data_rank: 0, wait: true}"},
      {"local_split", "distribute_tensor: {src_data_rank: none}"},
      {"physical_bypass", "to_local_chunk: {on: device}"},
      {"physical_bypass_host_chunk", "to_local_chunk: {on: host}"},
      {"p2p_interleaved", "distribute_tensor: {src_data_rank: 0}"},
      {"no_dispatch", "sleep: 0s"}};
  const std::string send = strategy == "p2p_interleaved" ? "p2p_param: {}" : "broadcast_param: {}";
  return "  - to_empty: {}\n"
         "  - for_each_param:\n"
         "      do:\n"
         "        - read_param: {bandwidth: 1MB/s}\n"
         "        - broadcast_metadata: {}\n"
         "        - " + send + "\n"
         "        - slice_experts: {per_expert: " + slice + "}\n"
         "        - " + dispatch.at(strategy) + "\n"
         "        - copy_param: {}\n"
         "        - sleep: " + gap + "\n"
         "  - sync_comm: all\n"
         "  - mark: {name: loaded, metric: true}\n";
}

TEST(ClusterTest, ImplicitRedistributeHangsWithExpertParallelismAndNotWithout) {
  // The slicing of 2 local experts (200 us) outlasts the host's 10 us: every device but rank
  // 0's (whose host is still reading the next tensor) starts the next WORLD broadcast before
  // the expert scatter.
  auto hang = make(4, load("implicit_redistribute"), cluster(2));
  auto r = run(hang);
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock) << r.diagnosis;
  EXPECT_THAT(r.diagnosis, HasSubstr("scatter #1 on fsdp{0,1}"));
  EXPECT_THAT(r.diagnosis, HasSubstr("broadcast #"));
  auto flat = make(4, load("implicit_redistribute"), cluster(1));
  auto f = run(flat);
  EXPECT_EQ(f.outcome, run::Outcome::kPass) << f.diagnosis;
  // Slicing faster than the host: the scatter is ready first everywhere, no inversion.
  auto fast = make(4, load("implicit_redistribute", "1us", "1ms"), cluster(2));
  EXPECT_EQ(run(fast).outcome, run::Outcome::kPass);
}

TEST(ClusterTest, TheExecTimeoutTurnsTheHangIntoAFailureWithTheWait) {
  auto f = make(4, load("implicit_redistribute"), cluster(2, "{exec_timeout: 1836s}"));
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "no_deadlock");
  EXPECT_THAT(r.diagnosis, HasSubstr("exec timeout after 1836s in "));
  EXPECT_THAT(r.diagnosis, HasSubstr("waiting for rank"));
  EXPECT_GE(r.makespan, 1836 * kernel::kSecond);
}

TEST(ClusterTest, CoordinatedAndLocalSplitNeverHang) {
  for (const char* d : {"coordinated_redistribute", "local_split"}) {
    auto f = make(4, load(d), cluster(2));
    for (std::uint64_t seed : {1, 2, 3}) {
      auto r = run(f, seed);
      EXPECT_EQ(r.outcome, run::Outcome::kPass) << d << ": " << r.diagnosis;
      EXPECT_GT(r.metrics.at("loaded_s"), 0);
    }
  }
  // Coordinated waits for each scatter: slower than local_split, which issues none.
  auto c = run(make(4, load("coordinated_redistribute"), cluster(2)));
  auto l = run(make(4, load("local_split"), cluster(2)));
  EXPECT_GT(c.metrics.at("loaded_s"), l.metrics.at("loaded_s"));
  EXPECT_DOUBLE_EQ(l.metrics.at("hidden_collectives"), 0);
  EXPECT_GT(c.metrics.at("hidden_collectives"), 0);
}

TEST(ClusterTest, PhysicalBypassIndexErrorsWhereTorchChunkGivesFewerChunks) {
  // 4 experts over an fsdp group of 4 (ep 1): fine; 2 rows of q_norm? The router gate [4, 64]
  // over 4 ranks is fine too; with 6 experts it is 3 chunks of 2: rank 3 fails.
  std::string six = cluster(1);
  six.replace(six.find("experts: 4"), 10, "experts: 6");
  auto f = make(4, load("physical_bypass"), six);
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "shards_correct");
  EXPECT_THAT(r.diagnosis, HasSubstr("rank 3: IndexError in model.layers.0.mlp.gate.weight [6, 64]: torch.chunk(6, 4) gives 3 chunks, mesh coordinate 3"));
  auto ok = run(make(4, load("physical_bypass"), cluster(1)));
  EXPECT_EQ(ok.outcome, run::Outcome::kPass) << ok.diagnosis;
}

TEST(ClusterTest, HostChunkingLowersPeakDeviceMemory) {
  auto dev = run(make(4, load("physical_bypass"), cluster(1)));
  auto host = run(make(4, load("physical_bypass_host_chunk"), cluster(1)));
  ASSERT_EQ(dev.outcome, run::Outcome::kPass) << dev.diagnosis;
  ASSERT_EQ(host.outcome, run::Outcome::kPass) << host.diagnosis;
  // The stacked experts [4, 64, 64] are converted to fp32 whole on the device (64 KiB) before
  // chunking; chunked on the host, only the 16 KiB chunk reaches the device, as in both cases.
  EXPECT_DOUBLE_EQ(dev.metrics.at("device.peak_bytes") - host.metrics.at("device.peak_bytes"), 64 * 1024);
}

TEST(ClusterTest, ParameterDtypeSetsTheMemoryOfShards) {
  std::string bf16 = cluster(1);
  bf16.replace(bf16.find("kv_heads: 2}"), 12, "kv_heads: 2, param_dtype: bf16}");
  auto fp32 = run(make(4, load("local_split"), cluster(1)));
  auto half = run(make(4, load("local_split"), bf16));
  ASSERT_EQ(half.outcome, run::Outcome::kPass) << half.diagnosis;
  // local_split holds only the broadcast buffer (bf16 in both) and the shards (half as large).
  EXPECT_LT(half.metrics.at("device.peak_bytes"), fp32.metrics.at("device.peak_bytes"));
}

TEST(ClusterTest, TooLittleDeviceMemoryIsAnOom) {
  auto f = make(4, load("physical_bypass"), cluster(1) + "  device: {memory: 40KiB}\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "no_oom");
  EXPECT_THAT(r.diagnosis, HasSubstr("out of device memory on rank 0:"));
}

TEST(ClusterTest, PointToPointSendsKeepTheHiddenScatterAndItsHang) {
  // PR 688's variant: the tensor arrives by sends from rank 0, the scatter stays hidden.
  auto hang = run(make(4, load("p2p_interleaved"), cluster(2)));
  EXPECT_EQ(hang.outcome, run::Outcome::kDeadlock) << hang.diagnosis;
  EXPECT_THAT(hang.diagnosis, HasSubstr("scatter #1 on fsdp{0,1}"));
  auto flat = run(make(4, load("p2p_interleaved"), cluster(1)));
  ASSERT_EQ(flat.outcome, run::Outcome::kPass) << flat.diagnosis;
  // The same bytes cross links as with one broadcast (3 receivers of each tensor), but as three
  // sends that rank 0's device runs one after another.
  auto bcast = run(make(4, load("implicit_redistribute"), cluster(1)));
  EXPECT_DOUBLE_EQ(flat.metrics.at("collective.bytes_moved"), bcast.metrics.at("collective.bytes_moved"));
  EXPECT_GT(flat.metrics.at("collective.count"), bcast.metrics.at("collective.count"));
}

TEST(ClusterTest, CopyingAWholeTensorIntoAShardIsAShapeError) {
  // Without a dispatch the working tensor keeps every row: copy_ into the shard fails.
  auto r = run(make(4, load("no_dispatch"), cluster(1)));
  EXPECT_EQ(r.outcome, run::Outcome::kFail);
  EXPECT_EQ(r.check, "shards_correct");
  // Every rank fails at the same instant; the run names the first in event order.
  EXPECT_THAT(r.diagnosis, ContainsRegex("^rank [0-3]: model\\.embed_tokens\\.weight: local shard has 128 rows, "
                                         "DTensor's has 32"));
}

TEST(ClusterTest, RecordAppendsADeviceReadingToASeries) {
  auto r = run(make(4, load("local_split") + "  - record: {series: peak_gib, value: device.peak_gib}\n", cluster(1)));
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("peak_gib"), r.metrics.at("device.peak_bytes") / (1ull << 30));
}

TEST(ClusterTest, CollectivePrimitiveRunsOnTheRanksGroup) {
  auto f = make(4, "  - collective: {op: all_reduce, comm: fsdp, bytes: 1MiB}\n  - collective: {op: barrier}\n  - mark: done\n",
                cluster(2));
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_DOUBLE_EQ(r.metrics.at("collective.count"), 3);  // two fsdp groups, then world
  // A rank that skips a collective leaves the others waiting: a deadlock naming it.
  auto skip = make(4, "  - {collective: {op: barrier, comm: world}, on: [0, 1, 2]}\n", cluster(2));
  auto s = run(skip);
  EXPECT_EQ(s.outcome, run::Outcome::kDeadlock);
  EXPECT_THAT(s.diagnosis, HasSubstr("rank 0: sync on comm queue 'rank 0/comm' (running barrier #1 on world): "
                                     "waiting for rank 3 (finished at 0s)"));
  // An explicit communicator; a rank outside it is refused.
  auto explicit_comm = make(4, "  - {collective: {op: all_reduce, comm: {name: pair, ranks: [1, 3]}, bytes: 1MiB}, on: [1, 3]}\n"
                               "  - mark: done\n", cluster(2));
  auto ex = run(explicit_comm);
  EXPECT_EQ(ex.outcome, run::Outcome::kPass) << ex.diagnosis;
  EXPECT_DOUBLE_EQ(ex.metrics.at("collective.count"), 1);
  auto outsider = run(make(4, "  - {collective: {op: barrier, comm: {name: pair, ranks: [1, 3]}}, on: [0]}\n", cluster(2)));
  EXPECT_THAT(outsider.diagnosis, HasSubstr("rank 0 is not a member of pair{1,3}"));
  // Sizes that disagree at one sequence number: an error in the error mode.
  auto mismatch = make(2, "  - if: {rank: rank0, then: [{collective: {op: all_gather, bytes: 1MiB}}], else: [{collective: {op: all_gather, bytes: 2MiB}}]}\n",
                       cluster(1, "{mismatch: error}"));
  auto m = run(mismatch);
  EXPECT_EQ(m.outcome, run::Outcome::kFail);
  EXPECT_THAT(m.diagnosis, HasSubstr("mismatch at all_gather #1 on world: rank 0 issued all_gather 1 MiB, rank 1 all_gather 2 MiB"));
}

// Under `mismatch: hang` with no exec timeout, the hang's one-line diagnosis names the collectives
// whose members disagree (what a user reads first), not one blocked host's wait with "no known
// releaser"; the kernel's lines per blocked process stay in the full report.
TEST(ClusterTest, AHangOnMismatchedCollectivesIsHeadlinedByTheMismatch) {
  const std::string program =
      "  - collective: {op: all_reduce, bytes: 1KiB}\n"
      "  - if: {rank: rank0, then: [{collective: {op: broadcast, bytes: 1KiB, root: 0}}], else: [{collective: {op: all_reduce, bytes: 1KiB}}]}\n";
  const run::RunRecord r = run(make(2, program, cluster(1, "{mismatch: hang, exec_timeout: none}")));
  EXPECT_EQ(r.outcome, run::Outcome::kDeadlock);
  EXPECT_EQ(r.diagnosis, "mismatch at broadcast #2 on world: rank 0 issued broadcast 1 KiB from 0, rank 1 all_reduce 1 KiB "
                         "(2 blocked at 10.021us)");
  // Two at once: the first by communicator, and how many more.
  const run::RunRecord two = run(make(4,
      "  - {collective: {op: barrier, comm: {name: pair, ranks: [2, 3]}}, on: [2]}\n"
      "  - {collective: {op: all_gather, comm: {name: pair, ranks: [2, 3]}, bytes: 1KiB}, on: [3]}\n"
      "  - {collective: {op: all_gather, comm: {name: duo, ranks: [0, 1]}, bytes: 1KiB}, on: [0]}\n"
      "  - {collective: {op: all_reduce, comm: {name: duo, ranks: [0, 1]}, bytes: 1KiB}, on: [1]}\n",
      cluster(1, "{mismatch: hang, exec_timeout: none}")));
  EXPECT_THAT(two.diagnosis, ::testing::StartsWith("mismatch at all_gather #1 on duo{0,1}: rank 0 issued all_gather 1 KiB, "
                                                   "rank 1 all_reduce 1 KiB (and 1 more mismatched collectives) (4 blocked at "));
  // Without a mismatch the kernel's line stays the headline.
  const run::RunRecord fine = run(make(2, "  - {collective: {op: barrier}, on: [0]}\n", cluster(1, "{mismatch: hang, exec_timeout: none}")));
  EXPECT_THAT(fine.diagnosis, HasSubstr("rank 0: sync on comm queue 'rank 0/comm' (running barrier #1 on world): waiting for rank 1"));
}

TEST(ClusterTest, PlatformAndArgumentErrorsAreLocated) {
  Diagnostics d;
  auto sc = load_scenario_text(
      "name: t\nranks: 4\n"
      "platform:\n"
      "  mesh: {ep: 3}\n"
      "  collective: {mismatch: sometimes, exec_timeout: 5GiB}\n"
      "  model: {layers: 0, experts: many, param_dtype: fp64}\n"
      "program:\n"
      "  - distribute_tensor: {src_data_rank: 1}\n"
      "  - collective: {op: allreduce, comm: tp}\n"
      "strategies: {only: }\n",
      "c.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  Diagnostics cd;
  EXPECT_FALSE(compile_program(*sc, sc->strategies[0], cd));
  const std::string e = cd.to_string();
  EXPECT_THAT(e, HasSubstr("c.yaml:4:14: error: platform.mesh.ep: expected a divisor of ranks (4), got 3"));
  EXPECT_THAT(e, HasSubstr("c.yaml:5:26: error: platform.collective.mismatch: expected one of hang, error, got 'sometimes'"));
  EXPECT_THAT(e, HasSubstr("c.yaml:5:51: error: platform.collective.exec_timeout:"));
  EXPECT_THAT(e, HasSubstr("c.yaml:6:19: error: platform.model.layers: expected 1 to 100000, got 0"));
  EXPECT_THAT(e, HasSubstr("c.yaml:6:31: error: platform.model.experts:"));
  EXPECT_THAT(e, HasSubstr("c.yaml:6:50: error: platform.model.param_dtype: expected one of bf16, fp16, fp32, got 'fp64'"));
  EXPECT_THAT(e, HasSubstr("c.yaml:8:40: error: distribute_tensor src_data_rank: expected 0 (rank 0 scatters) or none"));
  EXPECT_THAT(e, HasSubstr("c.yaml:9:22: error: collective op: expected broadcast, all_reduce"));
}

TEST(ClusterTest, AnExecTimeoutNamesARankThatCrashed) {
  auto f = make(4, "  - sleep: 10s\n  - collective: {op: all_reduce, comm: world, bytes: 1MiB}\n",
                "platform: {collective: {exec_timeout: 100s}}\nfaults: [{kind: crash, on: 2, at: 4s}]\n");
  auto r = run(f);
  EXPECT_EQ(r.outcome, run::Outcome::kFail) << r.diagnosis;
  EXPECT_THAT(r.diagnosis, HasSubstr("exec timeout after 100s in all_reduce #1 on world: waiting for rank 2 "
                                     "(killed at 4s by crash fault 'crash'); arrived: ranks 0,1,3"));
}

TEST(ClusterTest, TheChromeTraceGivesEachCollectiveItsCommunicatorAndSequenceNumber) {
  auto f = make(2, "  - collective: {op: all_reduce, comm: world, bytes: 1MiB}\n"
                   "  - collective: {op: barrier, comm: world}\n");
  std::ostringstream trace;
  run::run_one(*f.study->programs[0], 1, {}, &trace);
  const auto j = nlohmann::json::parse(trace.str());
  std::vector<std::string> ends;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("cat", "") == "step" && e.value("ph", "") == "E" && e["tid"] == 1) {
      ends.push_back(e.value("name", "") + " " + e["args"].dump());
    }
  }
  EXPECT_THAT(ends, ::testing::ElementsAre("collective all_reduce on world (1MiB) {\"communicator\":\"world\",\"seq\":1}",
                                           "collective barrier on world {\"communicator\":\"world\",\"seq\":2}"));
}

}  // namespace
}  // namespace racesim::scenario
