// Scenario benchmarks: whole runs of a shipped scenario through the harness (load once, compile
// once per strategy, then run seeds), reporting runs per second (one run = one seed of one
// strategy) and simulation events per second.
//
//   BM_OmReadWhileWrite/R  scenarios/om_read_while_write.yaml at R ranks (all on one node), its
//                          first sweep point (no fault), every strategy in turn, seed after seed.
//   BM_OmReadWhileWriteLocal/R  the same on a `local` mount: the work of the SimPy anchor
//                          bench/anchors/simpy_om_cache.py.
//   BM_OmReadWhileWriteLocalTaped/R  the same with every choice recorded on the tape (the cost of
//                          recording: explore and replay --record run this way).
//   BM_DTensorImplicitRedistribute/R  scenarios/dtensor_implicit_redistribute.yaml at R ranks,
//                          its first point (ep 2), its five original strategies in turn.
//   BM_DeviceGuardRecompile/R  scenarios/device_guard_recompile.yaml at its sweep point of R
//                          ranks, every strategy in turn.
//   BM_ProfilerFlushStorm/R  scenarios/profiler_flush_storm.yaml at its sweep point of R ranks,
//                          the `direct` strategy (seeds per second is items_per_second).
//   BM_OmReadWhileWriteCores/Q  om_read_while_write.yaml at 8 ranks on a local mount and a node
//                          of 2 cores as live --calibrate sets them for the project's VM: Q 0
//                          one shared run queue, Q 1 a queue per core, both CFS; Q 2 a queue
//                          per core under EEVDF (the cross-validation's).
//   BM_CollectiveEngine/R  the engine alone: collectives completed per second at R ranks.
//   BM_CpuScheduler/Q      the host CPU model alone: 64 processes on 8 cores, each 200 pieces of
//                          work of 1 ms with a 10 ms sleep every 20; items are pieces run. Q as
//                          above.
#include <benchmark/benchmark.h>

#include "sim/collective/engine.h"
#include "sim/host/cpu_scheduler.h"
#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::bench {
namespace {

// Runs `file` at its first sweep point with the overrides, one seed of every strategy per
// iteration.
// `point_ranks` > 0: the sweep point whose `ranks` is that (for a file that sweeps ranks).
// `options`: how each run is made (the default: fifo, the tape off).
void run_scenario(benchmark::State& state, const char* file, const std::vector<std::string>& overrides,
                  const std::vector<std::string>& strategies = {}, int point_ranks = 0,
                  const run::RunOptions& options = {}) {
  scenario::Diagnostics d;
  auto study = scenario::compile_study({.path = std::string(RACESIM_SOURCE "/scenarios/") + file,
                                        .overrides = overrides, .strategies = strategies,
                                        .points = point_ranks > 0 ? std::vector<std::string>{"ranks=" + std::to_string(point_ranks)}
                                                                  : std::vector<std::string>{},
                                        .first_point_only = point_ranks == 0}, d);
  if (!study) {
    state.SkipWithError(d.to_string().c_str());
    return;
  }
  std::uint64_t seed = 0, runs = 0, events = 0;
  for (auto _ : state) {
    for (const auto& p : study->programs) {
      const run::RunRecord r = run::run_one(*p, seed, options);
      events += r.events;
      ++runs;
      benchmark::DoNotOptimize(r.trace_hash);
    }
    ++seed;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(runs));
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] = static_cast<double>(events) / static_cast<double>(runs);
}

void BM_OmReadWhileWrite(benchmark::State& state) {
  const std::string ranks = std::to_string(state.range(0));
  run_scenario(state, "om_read_while_write.yaml", {"ranks=" + ranks, "platform.ranks_per_node=" + ranks});
}

void BM_OmReadWhileWriteLocal(benchmark::State& state) {
  const std::string ranks = std::to_string(state.range(0));
  run_scenario(state, "om_read_while_write.yaml",
               {"ranks=" + ranks, "platform.ranks_per_node=" + ranks, "platform.storage.cache.kind=local"});
}

// The same with the tape recorded (every choice kept, as explore and replay --record run): what
// recording costs.
void BM_OmReadWhileWriteLocalTaped(benchmark::State& state) {
  const std::string ranks = std::to_string(state.range(0));
  run::RunOptions taped;
  taped.record_choices = true;
  run_scenario(state, "om_read_while_write.yaml",
               {"ranks=" + ranks, "platform.ranks_per_node=" + ranks, "platform.storage.cache.kind=local"}, {}, 0, taped);
}

// At 256 ranks the mesh is ep 2 x fsdp 128 (and ep 1 at its second point, not run here). The
// five strategies the benchmark has always run, so figures compare across versions.
void BM_DTensorImplicitRedistribute(benchmark::State& state) {
  run_scenario(state, "dtensor_implicit_redistribute.yaml", {"ranks=" + std::to_string(state.range(0))},
               {"implicit_redistribute", "physical_bypass", "physical_bypass_host_chunk", "local_split",
                "coordinated_redistribute"});
}

// Its sweep point of R ranks (8 or 64), every strategy in turn.
void BM_DeviceGuardRecompile(benchmark::State& state) {
  run_scenario(state, "device_guard_recompile.yaml", {}, {}, static_cast<int>(state.range(0)));
}

// scenarios/profiler_flush_storm.yaml at its sweep point of R ranks (64 or 4,096), one strategy
// (the `direct` storm: every file on the shared mount's metadata server; its other strategies
// cost about as much per file).
void BM_ProfilerFlushStorm(benchmark::State& state) {
  run_scenario(state, "profiler_flush_storm.yaml", {}, {"direct"}, static_cast<int>(state.range(0)));
}

// The cross-validation's model of the cache race: the tmpfs calibration's mount and cores.
void BM_OmReadWhileWriteCores(benchmark::State& state) {
  std::vector<std::string> overrides = {
      "platform.storage.cache.kind=local", "platform.storage.cache.meta_latency=193400ns",
      "platform.storage.cache.meta_jitter=847600ns", "platform.storage.cache.client_bandwidth=9364720B/s",
      "platform.storage.cache.bandwidth=17658785B/s", "platform.storage.cache.read_bandwidth=13182563B/s",
      "platform.host.cores=2", "platform.host.compute=sleep"};
  if (state.range(0) == 2) {
    for (const char* o : {"platform.host.scheduler=eevdf", "platform.host.sched_base_slice=140000000ns",
                          "platform.host.sched_tick=400000000ns"}) {
      overrides.push_back(o);
    }
  } else {
    for (const char* o : {"platform.host.sched_latency=641952400ns", "platform.host.sched_min_granularity=320976200ns",
                          "platform.host.sched_wakeup_granularity=320976200ns"}) {
      overrides.push_back(o);
    }
  }
  if (state.range(0) >= 1) {
    overrides.push_back("platform.host.run_queues=per_core");
    overrides.push_back("platform.host.sched_balance_interval=15200000000ns");
  }
  run_scenario(state, "om_read_while_write.yaml", overrides);
}

BENCHMARK(BM_OmReadWhileWrite)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OmReadWhileWriteLocal)->Arg(8)->Arg(64)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OmReadWhileWriteLocalTaped)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DTensorImplicitRedistribute)->Arg(16)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DeviceGuardRecompile)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ProfilerFlushStorm)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OmReadWhileWriteCores)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The collective engine alone: R ranks each issue 100 all_reduces on world and 100 on their
// half's group; items are collectives completed.
void BM_CollectiveEngine(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::uint64_t done = 0;
  for (auto _ : state) {
    kernel::Simulation sim;
    collective::Engine e(sim, {});
    std::vector<int> all(static_cast<std::size_t>(n)), lo, hi;
    for (int r = 0; r < n; ++r) {
      all[static_cast<std::size_t>(r)] = r;
      (r < n / 2 ? lo : hi).push_back(r);
    }
    collective::Communicator& world = e.communicator("world", all);
    collective::Communicator& a = e.communicator("half", lo);
    collective::Communicator& b = e.communicator("half", hi);
    for (int r = 0; r < n; ++r) {
      sim.spawn("rank " + std::to_string(r), [&, r] {
        collective::Communicator& mine = r < n / 2 ? a : b;
        for (int i = 0; i < 100; ++i) {
          (void)e.run(world, r, {collective::Op::kAllReduce, 1 << 20, 0});
          (void)e.run(mine, r, {collective::Op::kAllReduce, 1 << 20, 0});
        }
      });
    }
    if (sim.run().outcome != kernel::RunOutcome::kCompleted) {
      state.SkipWithError("did not complete");
      return;
    }
    done += e.stats().collectives;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(done));
}
BENCHMARK(BM_CollectiveEngine)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The host CPU model alone (sim/host/cpu_scheduler.h): 64 processes on a node of 8 cores, each
// running 200 pieces of 1 ms back to back but for a 10 ms sleep every 20 (wake-ups, placements,
// slices, balancing); Q 0 one shared run queue, Q 1 a queue per core, both CFS; Q 2 a queue per
// core under EEVDF.
void BM_CpuScheduler(benchmark::State& state) {
  host::CpuConfig config;
  config.cores = 8;
  config.per_core = state.range(0) >= 1;
  if (state.range(0) == 2) config.policy = host::CpuPolicy::kEevdf;
  std::uint64_t pieces = 0;
  for (auto _ : state) {
    kernel::Simulation sim;
    host::CpuScheduler cpu(sim, "node 0", config);
    for (int p = 0; p < 64; ++p) {
      sim.spawn("p" + std::to_string(p), [&] {
        for (int i = 1; i <= 200; ++i) {
          cpu.run(kernel::kMillisecond);
          if (i % 20 == 0) sim.sleep_for(10 * kernel::kMillisecond);
        }
      });
    }
    if (sim.run().outcome != kernel::RunOutcome::kCompleted) {
      state.SkipWithError("did not complete");
      return;
    }
    pieces += 64 * 200;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(pieces));
}
BENCHMARK(BM_CpuScheduler)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace racesim::bench
