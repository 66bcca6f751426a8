// The collective engine: rendezvous by (communicator, sequence number), mismatch modes, the
// exec timeout, deadlock reports, and alpha-beta costs against their formulas.
#include "sim/collective/engine.h"
#include "sim/collective/comm_queue.h"
#include "sim/collective/faults.h"

#include <array>
#include <cmath>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::collective {
namespace {

using namespace kernel::time_literals;
using kernel::Simulation;
using kernel::Time;
using ::testing::HasSubstr;

constexpr std::uint64_t kMiB = 1ull << 20;

// Round links: intra 1 GB/s and 1 ms, inter 100 MB/s and 10 ms, 4 ranks per node.
Config config() {
  Config c;
  c.ranks_per_node = 4;
  c.intra = {1e9, 1_ms};
  c.inter = {1e8, 10_ms};
  return c;
}

// Spawns one process per rank running body(rank), registered with the engine.
template <typename Body>
void spawn_ranks(Simulation& sim, Engine& e, int n, Body body) {
  for (int r = 0; r < n; ++r) {
    e.set_process(r, sim.spawn("rank " + std::to_string(r), [r, body] { body(r); }));
  }
}

TEST(CollectiveTest, CompletesWhenTheLastMemberArrivesThenTakesItsCost) {
  Simulation sim;
  Engine e(sim, config());
  Communicator& world = e.communicator("world", {0, 1, 2, 3});
  std::vector<Time> done(4);
  spawn_ranks(sim, e, 4, [&](int r) {
    sim.sleep_for(r * 1_s);  // rank 3 arrives last, at 3 s
    EXPECT_TRUE(e.run(world, r, {Op::kBroadcast, 100'000'000, 0}).is_ok());
    done[static_cast<std::size_t>(r)] = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  // Broadcast S/B + a = 0.1 s + 1 ms, after the last arrival.
  for (Time t : done) EXPECT_EQ(t, 3_s + 101_ms);
  EXPECT_EQ(e.stats().collectives, 1u);
  EXPECT_DOUBLE_EQ(e.stats().bytes_moved, 3 * 1e8);
  ASSERT_EQ(e.stats().wait_s.size(), 4u);
  EXPECT_DOUBLE_EQ(e.stats().wait_s[0], 3.0);
  EXPECT_DOUBLE_EQ(e.stats().wait_s[3], 0.0);
}

TEST(CollectiveTest, RankListsAndWaitsAreCompact) {
  EXPECT_EQ(rank_list({0, 1, 2, 3}), "0,1,2,3");
  EXPECT_EQ(rank_list({0, 1, 2, 3, 4, 5, 6, 7}), "0-7");
  EXPECT_EQ(rank_list({0, 8}), "0,8");
  EXPECT_EQ(rank_list({0, 1, 2, 3, 4, 9, 10}), "0-4,9,10");
  Simulation sim;
  Engine e(sim, config());
  std::vector<int> all(8);
  for (int r = 0; r < 8; ++r) all[static_cast<std::size_t>(r)] = r;
  Communicator& world = e.communicator("world", all);
  Communicator& fsdp = e.communicator("fsdp", all);
  EXPECT_EQ(fsdp.name(), "fsdp{0-7}");
  spawn_ranks(sim, e, 8, [&](int r) {
    if (r == 7) {
      (void)e.run(world, r, {Op::kBroadcast, kMiB, 0});
    } else {
      (void)e.run(fsdp, r, {Op::kScatter, kMiB, 0});
    }
  });
  const auto res = sim.run();
  ASSERT_EQ(res.outcome, kernel::RunOutcome::kDeadlock);
  EXPECT_EQ(e.describe_wait(7), "broadcast #1 on world: waiting for ranks 0-6 (blocked in scatter #1 on fsdp{0-7}); arrived: rank 7");
}

TEST(CollectiveTest, AlphaBetaCostsMatchTheFormulas) {
  Simulation sim;
  Engine e(sim, config());
  const double s = 64.0 * kMiB;
  auto expect = [&](const Communicator& c, Op op, double seconds) {
    // Costs are rounded up to the next nanosecond (kernel::duration_of_seconds): never below
    // the formula, at most 1 ns above it (plus the double's noise).
    const double cost_s = kernel::to_seconds(e.cost(c, {op, 64 * kMiB, 0}));
    EXPECT_GE(cost_s, seconds - 1e-12) << to_string(op) << " on " << c.name();
    EXPECT_NEAR(cost_s, seconds, 1.5e-9)
        << to_string(op) << " on " << c.name();
  };
  for (bool inter : {false, true}) {
    const Communicator& c = inter ? e.communicator("g", {0, 2, 4, 6}) : e.communicator("g", {0, 1, 2, 3});
    const double b = inter ? 1e8 : 1e9, a = inter ? 0.010 : 0.001, n = 4;
    expect(c, Op::kAllReduce, 2 * (n - 1) / n * s / b + 2 * (n - 1) * a);
    expect(c, Op::kAllGather, (n - 1) / n * s / b + (n - 1) * a);
    expect(c, Op::kReduceScatter, (n - 1) / n * s / b + (n - 1) * a);
    expect(c, Op::kAllToAll, (n - 1) / n * s / b + (n - 1) * a);
    expect(c, Op::kBroadcast, s / b + a);
    expect(c, Op::kScatter, (n - 1) / n * s / b + a);
    expect(c, Op::kBarrier, 2 * a);
  }
  EXPECT_EQ(e.cost(e.communicator("solo", {5}), {Op::kAllReduce, kMiB, 0}), 0);
}

TEST(CollectiveTest, ASubsetSkippingACollectiveHangsEveryoneAndTheReportSaysWhere) {
  // As in the DTensor load: every rank broadcasts on world, then the fsdp group scatters, but
  // rank 3 skips the scatter and goes on to the next broadcast.
  Simulation sim;
  Engine e(sim, config());
  Communicator& world = e.communicator("world", {0, 1, 2, 3});
  Communicator& fsdp = e.communicator("fsdp", {0, 1, 2, 3});
  spawn_ranks(sim, e, 4, [&](int r) {
    (void)e.run(world, r, {Op::kBroadcast, kMiB, 0});
    if (r != 3) (void)e.run(fsdp, r, {Op::kScatter, kMiB, 0});
    (void)e.run(world, r, {Op::kBroadcast, kMiB, 0});
  });
  const auto res = sim.run();
  ASSERT_EQ(res.outcome, kernel::RunOutcome::kDeadlock);
  const std::string report = res.deadlock.to_string();
  EXPECT_THAT(report, HasSubstr("rank 1: scatter #1 on fsdp{0,1,2,3}: waiting for rank 3 (blocked in broadcast #2 on world)"));
  EXPECT_THAT(report, HasSubstr("rank 3: broadcast #2 on world: waiting for rank 0 (blocked in scatter #1 on fsdp{0,1,2,3})"));
  EXPECT_THAT(e.describe_wait(0), HasSubstr("scatter #1 on fsdp{0,1,2,3}: waiting for rank 3 (blocked in broadcast #2 on world)"));
}

TEST(CollectiveTest, TheThreeCommunicatorCycleIsADeadlockNamingAllThree) {
  // The MPI standard's example: A = {0,1}, B = {1,2}, C = {0,2}; rank 0 issues on A then C,
  // rank 1 on B then A, rank 2 on C then B. Each waits for a partner busy elsewhere.
  Simulation sim;
  Engine e(sim, config());
  Communicator& a = e.communicator("A", {0, 1});
  Communicator& b = e.communicator("B", {1, 2});
  Communicator& c = e.communicator("C", {0, 2});
  const Call ar{Op::kAllReduce, kMiB, 0};
  spawn_ranks(sim, e, 3, [&](int r) {
    if (r == 0) { (void)e.run(a, 0, ar); (void)e.run(c, 0, ar); }
    if (r == 1) { (void)e.run(b, 1, ar); (void)e.run(a, 1, ar); }
    if (r == 2) { (void)e.run(c, 2, ar); (void)e.run(b, 2, ar); }
  });
  const auto res = sim.run();
  ASSERT_EQ(res.outcome, kernel::RunOutcome::kDeadlock);
  const std::string report = res.deadlock.to_string();
  EXPECT_THAT(report, HasSubstr("rank 0: all_reduce #1 on A{0,1}: waiting for rank 1 (blocked in all_reduce #1 on B{1,2})"));
  EXPECT_THAT(report, HasSubstr("rank 1: all_reduce #1 on B{1,2}: waiting for rank 2 (blocked in all_reduce #1 on C{0,2})"));
  EXPECT_THAT(report, HasSubstr("rank 2: all_reduce #1 on C{0,2}: waiting for rank 0 (blocked in all_reduce #1 on A{0,1})"));
  ASSERT_EQ(res.deadlock.cycles.size(), 1u);
  EXPECT_EQ(res.deadlock.cycles[0].size(), 3u);
}

TEST(CollectiveTest, MismatchHangsOrFailsAsConfigured) {
  for (bool hangs : {true, false}) {
    Simulation sim;
    Config c = config();
    c.mismatch_hangs = hangs;
    Engine e(sim, c);
    Communicator& g = e.communicator("g", {0, 1});
    std::vector<std::string> errors(2);
    spawn_ranks(sim, e, 2, [&](int r) {
      sim.sleep_for(r * 1_ms);
      const auto st = e.run(g, r, {Op::kAllGather, r == 0 ? 4 * kMiB : 8 * kMiB, 0});
      if (!st.is_ok()) errors[static_cast<std::size_t>(r)] = st.message();
    });
    const auto res = sim.run();
    if (hangs) {
      ASSERT_EQ(res.outcome, kernel::RunOutcome::kDeadlock);
      EXPECT_THAT(res.deadlock.to_string(),
                  HasSubstr("all_gather #1 on g{0,1} (mismatch: rank 0 issued all_gather 4 MiB, rank 1 all_gather 8 MiB)"));
    } else {
      ASSERT_EQ(res.outcome, kernel::RunOutcome::kCompleted);
      for (const auto& m : errors) {
        EXPECT_EQ(m, "mismatch at all_gather #1 on g{0,1}: rank 0 issued all_gather 4 MiB, rank 1 all_gather 8 MiB");
      }
    }
  }
}

TEST(CollectiveTest, TheExecTimeoutFailsTheWaitWithItsDescription) {
  Simulation sim;
  Config c = config();
  c.exec_timeout = 1836_s;
  Engine e(sim, c);
  Communicator& g = e.communicator("world", {0, 1});
  std::string error;
  Time failed_at = -1;
  spawn_ranks(sim, e, 2, [&](int r) {
    if (r == 1) return;  // never arrives
    const auto st = e.run(g, 0, {Op::kAllReduce, kMiB, 0});
    error = st.is_ok() ? "" : st.message();
    failed_at = sim.now();
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(failed_at, 1836_s);
  EXPECT_EQ(error, "exec timeout after 1836s in all_reduce #1 on world: waiting for rank 1 (finished at 0s); arrived: rank 0");
}

TEST(CollectiveTest, SequenceNumbersArePerCommunicatorAndNonMembersAreRejected) {
  Simulation sim;
  Engine e(sim, config());
  Communicator& a = e.communicator("a", {0, 1});
  Communicator& b = e.communicator("b", {0, 1});
  std::string error;
  spawn_ranks(sim, e, 3, [&](int r) {
    if (r == 2) {
      error = e.run(a, 2, {Op::kBarrier, 0, 0}).message();
      return;
    }
    // Both issue a then b, so #1 on a, #1 on b: no hang, whatever the interleaving.
    sim.sleep_for(r * 5_ms);
    EXPECT_TRUE(e.run(a, r, {Op::kAllReduce, kMiB, 0}).is_ok());
    EXPECT_TRUE(e.run(b, r, {Op::kAllReduce, kMiB, 0}).is_ok());
    EXPECT_TRUE(e.run(a, r, {Op::kBarrier, 0, 0}).is_ok());
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(error, "rank 2 is not a member of a{0,1}");
  EXPECT_EQ(e.stats().collectives, 3u);
}


// Two ranks load two parameters: broadcast #k on world, then a scatter on a second
// communicator whose input is ready `prep[r]` after it is enqueued; the host goes straight on.
// The queues must outlive the simulation's unwinding, so the caller owns them (declared
// before the simulation).
using Queues = std::vector<std::unique_ptr<CommQueue>>;
kernel::RunResult load_two(Queues& queues, Simulation& sim, Engine& e, bool sub_communicator,
                           std::array<Time, 2> prep, std::array<std::string, 2>* errors = nullptr,
                           Time timeout = kernel::kTimeMax, Time gap = 10_us) {
  Communicator& world = e.communicator("world", {0, 1});
  Communicator& sub = sub_communicator ? e.communicator("efsdp", {0, 1}) : world;
  for (int r = 0; r < 2; ++r) queues.push_back(std::make_unique<CommQueue>(sim, e, r));
  for (int r = 0; r < 2; ++r) {
    sim.spawn("rank " + std::to_string(r), [&, r] {
      CommQueue& q = *queues[static_cast<std::size_t>(r)];
      for (int k = 0; k < 2; ++k) {
        q.enqueue(world, {Op::kBroadcast, 1 << 20, 0});
        q.enqueue(sub, {Op::kScatter, 1 << 20, 0}, prep[static_cast<std::size_t>(r)]);
        sim.sleep_for(gap);  // host work between parameters
      }
      const auto st = q.sync(nullptr, timeout);
      if (errors) (*errors)[static_cast<std::size_t>(r)] = st.is_ok() ? "" : st.message();
    });
  }
  return sim.run();
}

TEST(CommQueueTest, AScatterReadyAfterTheNextBroadcastInvertsTheOrderAndHangs) {
  Config c;
  c.intra = {1e12, 1_us};
  // Rank 1's scatter input takes 50 us: its device starts broadcast #2 first.
  {
    Queues q;
    Simulation sim;
    Engine e(sim, c);
    const auto res = load_two(q, sim, e, true, {0, 50_us});
    ASSERT_EQ(res.outcome, kernel::RunOutcome::kDeadlock);
    const std::string report = res.deadlock.to_string();
    // The hosts wait for each other through their devices' collectives.
    EXPECT_THAT(report, HasSubstr("rank 0: sync on comm queue 'rank 0/comm' (running scatter #1 on efsdp{0,1}): "
                                  "waiting for rank 1 (blocked in sync on comm queue 'rank 1/comm' (running "
                                  "broadcast #2 on world))"));
    EXPECT_THAT(report, HasSubstr("rank 1: sync on comm queue 'rank 1/comm' (running broadcast #2 on world): "
                                  "waiting for rank 0 (blocked in sync"));
    EXPECT_THAT(report, HasSubstr("cycle: rank 0 -> rank 1 -> rank 0"));
  }
  // The same timing with every collective on one communicator: in order, no hang.
  {
    Queues q;
    Simulation sim;
    Engine e(sim, c);
    EXPECT_EQ(load_two(q, sim, e, false, {0, 50_us}).outcome, kernel::RunOutcome::kCompleted);
    EXPECT_EQ(e.stats().collectives, 4u);
  }
  // Inputs ready before the host moves on: in order, no hang.
  {
    Queues q;
    Simulation sim;
    Engine e(sim, c);
    EXPECT_EQ(load_two(q, sim, e, true, {1_us, 2_us}).outcome, kernel::RunOutcome::kCompleted);
  }
}

// With no host work between parameters, when broadcast #1 ends both scatter #1 and broadcast #2
// are ready: which the device starts is a model choice. Fifo starts the scatter (enqueued first)
// on both ranks; a search that starts the broadcast on one rank only finds the hang, and its tape
// replays it.
TEST(CommQueueTest, WhichReadyCollectiveStartsIsAChoiceThatCanInvertTheOrder) {
  Config c;
  c.intra = {1e12, 1_us};
  {
    Queues q;
    Simulation sim({.record_choices = true});
    Engine e(sim, c);
    EXPECT_EQ(load_two(q, sim, e, true, {0, 0}, nullptr, kernel::kTimeMax, 0).outcome, kernel::RunOutcome::kCompleted);
    int model = 0;
    for (const kernel::Choice& ch : sim.tape()) model += ch.kind == kernel::ChoiceKind::kModel;
    EXPECT_GT(model, 0);
  }
  int hangs = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::vector<kernel::Choice> tape;
    std::uint64_t hash = 0;
    {
      Queues q;
      Simulation sim({.seed = seed, .policy = kernel::PolicySpec::random(), .record_choices = true});
      Engine e(sim, c);
      const auto res = load_two(q, sim, e, true, {0, 0}, nullptr, kernel::kTimeMax, 0);
      if (res.outcome != kernel::RunOutcome::kDeadlock) continue;
      ++hangs;
      tape = sim.tape();
      hash = res.trace_hash;
    }
    Queues q;
    Simulation sim({.seed = seed + 1, .policy = kernel::PolicySpec::replay(tape)});
    Engine e(sim, c);
    const auto again = load_two(q, sim, e, true, {0, 0}, nullptr, kernel::kTimeMax, 0);
    EXPECT_EQ(again.outcome, kernel::RunOutcome::kDeadlock);
    EXPECT_EQ(again.trace_hash, hash);
    EXPECT_FALSE(sim.replay_diverged()) << sim.replay_divergence();
  }
  EXPECT_GT(hangs, 0);
  EXPECT_LT(hangs, 40);
}

TEST(CommQueueTest, TheHostSyncTimesOutNamingTheCollective) {
  Config c;
  c.exec_timeout = kernel::kTimeMax;
  Queues q;
  Simulation sim;
  Engine e(sim, c);
  std::array<std::string, 2> errors;
  const auto res = load_two(q, sim, e, true, {0, 50_us}, &errors, 1836_s);
  ASSERT_EQ(res.outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(errors[0], "exec timeout after 1836s in scatter #1 on efsdp{0,1}: waiting for rank 1 (blocked in broadcast #2 on world); arrived: rank 0");
  EXPECT_EQ(errors[1], "exec timeout after 1836s in broadcast #2 on world: waiting for rank 0 (blocked in scatter #1 on efsdp{0,1}); arrived: rank 1");
}

// `ranks` ranks on one node with 1 us, 1 TB/s links, a queue each (members in destruction
// order: the engine, then the simulation, then the queues).
struct QueueRig {
  Queues queues;
  Simulation sim;
  Engine e;
  explicit QueueRig(int ranks) : e(sim, fast_links()) {
    for (int r = 0; r < ranks; ++r) queues.push_back(std::make_unique<CommQueue>(sim, e, r));
  }
  static Config fast_links() {
    Config c;
    c.ranks_per_node = 0;
    c.intra = {1e12, 1_us};
    return c;
  }
};

// Rank 0 sends to 20 peers, one point-to-point communicator each (more lanes than the queue
// scans: the index finds them), with inputs ready in the reverse of the enqueue order. Its
// device starts each send when its input is ready, so the peers finish in the reverse order;
// a sync on one lane returns when that lane is done, a sync on every lane when all are, and a
// sync on a communicator never used returns at once.
TEST(CommQueueTest, AFanOutOverManyCommunicatorsRunsInReadyOrderAndSyncsPerLane) {
  constexpr int kPeers = 20;
  QueueRig rig(kPeers + 1);
  // Plain references: lambdas capture them (clang 14 cannot capture structured bindings).
  Queues& queues = rig.queues;
  Simulation& sim = rig.sim;
  Engine& e = rig.e;
  std::array<Time, kPeers + 1> done{};
  Time first_lane = -1, every_lane = -1, unused = -1;
  sim.spawn("rank 0", [&] {
    CommQueue& q = *queues[0];
    for (int r = 1; r <= kPeers; ++r) {
      q.enqueue(e.communicator("p2p", {0, r}), {Op::kSend, 1000, 0}, (kPeers + 1 - r) * 10_us);
    }
    EXPECT_TRUE(q.sync(&e.communicator("unused", {0, 1})).is_ok());
    unused = sim.now();
    EXPECT_TRUE(q.sync(&e.communicator("p2p", {0, kPeers})).is_ok());
    first_lane = sim.now();
    EXPECT_TRUE(q.sync(nullptr).is_ok());
    every_lane = sim.now();
  });
  for (int r = 1; r <= kPeers; ++r) {
    sim.spawn("rank " + std::to_string(r), [&, r] {
      CommQueue& q = *queues[static_cast<std::size_t>(r)];
      q.enqueue(e.communicator("p2p", {0, r}), {Op::kSend, 1000, 0});
      EXPECT_TRUE(q.sync(nullptr).is_ok());
      done[static_cast<std::size_t>(r)] = sim.now();
    });
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  // A send costs 1 us plus 1 ns (1,000 bytes at 1e12 B/s); peer r's input is ready at (21 - r) * 10 us.
  const Time send = 1_us + 1;
  for (int r = 1; r <= kPeers; ++r) {
    EXPECT_EQ(done[static_cast<std::size_t>(r)], (kPeers + 1 - r) * 10_us + send) << "peer " << r;
  }
  EXPECT_EQ(unused, 0);
  EXPECT_EQ(first_lane, 10_us + send);
  EXPECT_EQ(every_lane, kPeers * 10_us + send);
  EXPECT_EQ(e.stats().collectives, static_cast<std::uint64_t>(kPeers));
}

// A sync waits for what was enqueued before it, not for what another process of the rank
// enqueues on another communicator while it waits.
TEST(CommQueueTest, ASyncOnEveryLaneWaitsOnlyForWhatWasEnqueuedBeforeIt) {
  QueueRig rig(3);
  // Plain references: lambdas capture them (clang 14 cannot capture structured bindings).
  Queues& queues = rig.queues;
  Simulation& sim = rig.sim;
  Engine& e = rig.e;
  Time synced = -1;
  sim.spawn("rank 0 host", [&] {
    queues[0]->enqueue(e.communicator("a", {0, 1}), {Op::kBarrier, 0, 0});
    EXPECT_TRUE(queues[0]->sync(nullptr).is_ok());
    synced = sim.now();
  });
  sim.spawn("rank 0 side", [&] {
    sim.sleep_for(1_us);  // while the device waits in barrier a; rank 2 issues b only at 50 us
    queues[0]->enqueue(e.communicator("b", {0, 2}), {Op::kBarrier, 0, 0});
  });
  sim.spawn("rank 1", [&] {
    sim.sleep_for(10_us);
    queues[1]->enqueue(e.communicator("a", {0, 1}), {Op::kBarrier, 0, 0});
  });
  sim.spawn("rank 2", [&] {
    sim.sleep_for(50_us);
    queues[2]->enqueue(e.communicator("b", {0, 2}), {Op::kBarrier, 0, 0});
    EXPECT_TRUE(queues[2]->sync(nullptr).is_ok());
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  // Barrier a: complete when rank 1 arrives at 10 us, then ceil(log2 2) * 1 us.
  EXPECT_EQ(synced, 11_us);
  EXPECT_EQ(e.stats().collectives, 2u);
}

// One communicator whose queue on rank 0 fills in bursts and never quite drains while rank 1
// issues the same collectives slowly: they must run in enqueue order on both (each carries its
// own size, so any reordering is a mismatch) and every one completes.
TEST(CommQueueTest, ALaneThatNeverDrainsRunsItsCollectivesInEnqueueOrder) {
  constexpr int kCollectives = 60;
  QueueRig rig(2);
  Queues& queues = rig.queues;
  Simulation& sim = rig.sim;
  Engine& e = rig.e;
  Communicator& world = e.communicator("world", {0, 1});
  std::array<std::string, 2> errors;
  std::array<std::uint64_t, 2> most_pending{};
  for (int r = 0; r < 2; ++r) {
    sim.spawn("rank " + std::to_string(r), [&, r] {
      CommQueue& q = *queues[static_cast<std::size_t>(r)];
      for (int k = 0; k < kCollectives; ++k) {
        q.enqueue(world, {Op::kAllReduce, static_cast<std::uint64_t>(k + 1) << 10, 0});
        most_pending[static_cast<std::size_t>(r)] = std::max(most_pending[static_cast<std::size_t>(r)], q.pending());
        // Rank 0: bursts of five; rank 1: one every 3 us.
        if (r == 1 || k % 5 == 4) sim.sleep_for(r == 1 ? 3_us : 10_us);
      }
      const auto st = q.sync(nullptr);
      errors[static_cast<std::size_t>(r)] = st.is_ok() ? "" : st.message();
    });
  }
  // Bounded: a queue that repeated a collective would run forever.
  ASSERT_EQ(sim.run({.event_limit = 100'000}).outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(e.stats().collectives, static_cast<std::uint64_t>(kCollectives));
  // Rank 0 runs ahead: its lane held many collectives at once (the FIFO grew and shrank).
  EXPECT_GE(most_pending[0], 10u);
  EXPECT_LE(most_pending[1], 2u);
}

// The device has no process: a rank costs its host's fiber only, and a collective one event
// for all its members (its end) plus each host's wake from sync.
TEST(CommQueueTest, ACollectiveCostsOneEventPlusAWakePerHost) {
  constexpr int kRanks = 4;
  QueueRig rig(kRanks);
  Queues& queues = rig.queues;
  Simulation& sim = rig.sim;
  Engine& e = rig.e;
  std::vector<int> all{0, 1, 2, 3};
  Communicator& world = e.communicator("world", all);
  std::array<Time, kRanks> done{};
  for (int r = 0; r < kRanks; ++r) {
    sim.spawn("rank " + std::to_string(r), [&, r] {
      CommQueue& q = *queues[static_cast<std::size_t>(r)];
      q.enqueue(world, {Op::kAllReduce, 1000, 0});
      EXPECT_TRUE(q.sync(&world).is_ok());
      done[static_cast<std::size_t>(r)] = sim.now();
    });
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(sim.processes().size(), static_cast<std::size_t>(kRanks));
  // Four starts, the all-reduce's end, four wakes.
  EXPECT_EQ(sim.events_dispatched(), 2u * kRanks + 1);
  // 2 (n-1)/n S/B + 2 (n-1) a: 1.5 ns rounds to 2 ns, plus 6 us.
  for (Time t : done) EXPECT_EQ(t, 6_us + 2);
}

// With an exec timeout in the engine (not only the host's sync), a device that waits in a
// collective whose member never comes fails at the deadline; the host's sync returns that
// error, and what the device had queued behind it completes without running.
TEST(CommQueueTest, TheEnginesExecTimeoutFailsTheDeviceAndTheRestCompletesUnrun) {
  Config c = config();
  c.exec_timeout = 1836_s;
  Queues queues;
  Simulation sim;
  Engine e(sim, c);
  for (int r = 0; r < 2; ++r) queues.push_back(std::make_unique<CommQueue>(sim, e, r));
  Communicator& world = e.communicator("world", {0, 1});
  std::string error;
  Time failed_at = -1;
  sim.spawn("rank 0", [&] {
    queues[0]->enqueue(world, {Op::kAllReduce, kMiB, 0});
    queues[0]->enqueue(world, {Op::kBarrier, 0, 0});
    const auto st = queues[0]->sync(nullptr);
    error = st.is_ok() ? "" : st.message();
    failed_at = sim.now();
    EXPECT_EQ(queues[0]->pending(), 0u);
  });
  sim.spawn("rank 1", [] {});  // never issues it
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(failed_at, 1836_s);
  EXPECT_EQ(error, "exec timeout after 1836s in all_reduce #1 on world: waiting for rank 1 (not in a collective); "
                   "arrived: rank 0");
  EXPECT_EQ(e.stats().collectives, 0u);
  EXPECT_EQ(world.last_seq(0), 1u);  // the barrier never started
}

// In error mode a mismatch fails every member's device: the one that waited (told from a
// callback) and the one whose arrival found it.
TEST(CommQueueTest, AMismatchInErrorModeFailsEveryMembersDevice) {
  Config c = config();
  c.mismatch_hangs = false;
  Queues queues;
  Simulation sim;
  Engine e(sim, c);
  for (int r = 0; r < 2; ++r) queues.push_back(std::make_unique<CommQueue>(sim, e, r));
  Communicator& world = e.communicator("world", {0, 1});
  std::array<std::string, 2> errors;
  for (int r = 0; r < 2; ++r) {
    sim.spawn("rank " + std::to_string(r), [&, r] {
      sim.sleep_for(r * 1_ms);
      CommQueue& q = *queues[static_cast<std::size_t>(r)];
      q.enqueue(world, {Op::kAllGather, (r + 1) * 4 * kMiB, 0});
      const auto st = q.sync(&world);
      errors[static_cast<std::size_t>(r)] = st.is_ok() ? "" : st.message();
    });
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  for (const auto& m : errors) {
    EXPECT_EQ(m, "mismatch at all_gather #1 on world: rank 0 issued all_gather 4 MiB, rank 1 all_gather 8 MiB");
  }
  EXPECT_EQ(e.stats().collectives, 0u);
}

// ---- faults (sim/collective/faults.h) ----

TEST(CollectiveFaultTest, ASlowLinkAimedAtACommunicatorSlowsOnlyIt) {
  Simulation sim;
  Engine e(sim, config());
  kernel::FaultSeam seam;
  e.set_faults(&seam);
  kernel::ActiveFault f("slow", kSlowLink, 1, kernel::RandomStream(1, "fault/slow/1"));
  f.aim(kernel::ResourceKind::kComm, "fsdp");
  f.set_arg("factor", [](kernel::RandomStream&, int) { return 4.0; });
  seam.add(std::move(f));
  Communicator& world = e.communicator("world", {0, 1});
  Communicator& fsdp = e.communicator("fsdp", {0, 1});
  std::vector<Time> took(2);
  spawn_ranks(sim, e, 2, [&](int r) {
    Time t0 = sim.now();
    EXPECT_TRUE(e.run(world, r, {Op::kBroadcast, 100'000'000, 0}).is_ok());
    if (r == 0) took[0] = sim.now() - t0;
    t0 = sim.now();
    EXPECT_TRUE(e.run(fsdp, r, {Op::kBroadcast, 100'000'000, 0}).is_ok());
    if (r == 0) took[1] = sim.now() - t0;
  });
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  // Broadcast S/B + a = 0.1 s + 1 ms on one node; rank 1's fault makes fsdp's 4 times that.
  EXPECT_EQ(took[0], 101_ms);
  EXPECT_EQ(took[1], 4 * 101_ms);
}

TEST(CollectiveFaultTest, ASlowLinkAimedAtTheInterNodeLinkSlowsCollectivesThatCrossNodes) {
  Simulation sim;
  Engine e(sim, config());  // 4 ranks per node
  kernel::FaultSeam seam;
  e.set_faults(&seam);
  kernel::ActiveFault f("slow", kSlowLink, 0, kernel::RandomStream(1, "fault/slow/0"));
  f.aim(kernel::ResourceKind::kLink, "inter");
  f.set_arg("factor", [](kernel::RandomStream&, int) { return 2.0; });
  seam.add(std::move(f));
  Communicator& node = e.communicator("node", {0, 1});
  Communicator& cross = e.communicator("cross", {0, 4});
  Time t_node = 0, t_cross = 0;
  for (int r : {0, 1, 4}) {
    e.set_process(r, sim.spawn("rank " + std::to_string(r), [&, r] {
      if (r != 4) {
        const Time t0 = sim.now();
        EXPECT_TRUE(e.run(node, r, {Op::kBarrier, 0, 0}).is_ok());
        if (r == 0) t_node = sim.now() - t0;
      }
      if (r != 1) {
        const Time t0 = sim.now();
        EXPECT_TRUE(e.run(cross, r, {Op::kBarrier, 0, 0}).is_ok());
        if (r == 0) t_cross = sim.now() - t0;
      }
    }));
  }
  ASSERT_EQ(sim.run().outcome, kernel::RunOutcome::kCompleted);
  EXPECT_EQ(t_node, 1_ms);        // ceil(log2 2) * intra latency, untouched
  EXPECT_EQ(t_cross, 2 * 10_ms);  // inter latency, doubled
}

}  // namespace
}  // namespace racesim::collective
