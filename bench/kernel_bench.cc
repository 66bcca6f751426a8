// Kernel benchmarks: BM_Timers/N, BM_Ring/N, BM_Barrier/N (see workloads.h), each reporting
// items_per_second (spawning the N processes included) and bytes_per_process; and their
// steady-state variants BM_TimersSteady/N, BM_RingSteady/N, BM_BarrierSteady/N, whose
// items_per_second is the extra items of a long run over a short one divided by the extra
// seconds, so process creation and teardown cancel out. Memory is measured once per benchmark on
// a fresh thread (so the thread's stack pool starts empty), with the heap's free pages returned
// first: resident-set growth from before the simulation is built to the end of its run, while it
// still holds every process, divided by N.
// Stacks stay resident in the pool after their process ends, so this is the peak. Every
// workload runs at 512 and 4,096 processes too, the scaling target's sizes, for the engines'
// growth that bench/anchors/run_anchors.sh prints ("512 4096" as its SIZES). BM_TimersStackless
// and BM_BarrierStackless (and their steady variants) run W1 and W3 on stackless processes.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "bench/workloads.h"

namespace racesim::bench {
namespace {

using Workload = WorkloadResult (*)(kernel::Simulation&, int, int);

// Google Benchmark calls a benchmark several times (to size its iterations); only the first call
// measures, on a heap no earlier call of it has grown (a later thread reuses the first one's
// arena, whose freed pages stay resident).
double bytes_per_process(Workload w, int n, int loops, double* stack_depth) {
  static std::map<std::pair<Workload, int>, std::pair<double, double>> measured;
  if (auto it = measured.find({w, n}); it != measured.end()) {
    *stack_depth = it->second.second;
    return it->second.first;
  }
  double result = 0;
  std::thread t([&] {
    // Free heap memory back to the system first: a stackless process lives on the heap, and
    // pages an earlier run freed would otherwise hold it without growing the resident set.
    malloc_trim(0);
    const std::uint64_t before = resident_bytes();
    kernel::Simulation sim;
    const WorkloadResult r = w(sim, n, loops);
    const std::uint64_t after = resident_bytes();
    if (r.run.outcome == kernel::RunOutcome::kCompleted && after > before) {
      result = static_cast<double>(after - before) / n;
    }
    *stack_depth = static_cast<double>(kernel::StackPool::for_this_thread().deepest_use_bytes());
  });
  t.join();
  measured[{w, n}] = {result, *stack_depth};
  return result;
}

void run_benchmark(benchmark::State& state, Workload w, int loops) {
  const int n = static_cast<int>(state.range(0));
  std::uint64_t items = 0;
  for (auto _ : state) {
    kernel::Simulation sim;
    const WorkloadResult r = w(sim, n, loops);
    if (r.run.outcome != kernel::RunOutcome::kCompleted) {
      state.SkipWithError("workload did not complete");
      return;
    }
    items += r.items;
    benchmark::DoNotOptimize(r.run.trace_hash);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(items));
  double depth = 0;
  state.counters["bytes_per_process"] = bytes_per_process(w, n, loops, &depth);
  state.counters["stack_bytes_used"] = depth;
}

// The loop counts of the steady-state variants, the same for the anchors' engines
// (run_anchors.sh): a short run of 10 loops and a long run with 500,000 more items.
constexpr int kSteadyShortLoops = 10;
constexpr int kSteadyExtraItems = 500000;
int steady_long_loops(int n) { return kSteadyShortLoops + kSteadyExtraItems / n; }

// Seconds of wall time that one fresh run of `w` takes; 0 and an error on the state if the run
// did not complete.
double timed_run(benchmark::State& state, Workload w, int n, int loops) {
  const auto start = std::chrono::steady_clock::now();
  kernel::Simulation sim;
  const WorkloadResult r = w(sim, n, loops);
  const bool ok = r.run.outcome == kernel::RunOutcome::kCompleted;
  benchmark::DoNotOptimize(r.run.trace_hash);
  sim.shutdown();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ok) state.SkipWithError("workload did not complete");
  return ok ? seconds : 0;
}

// Each iteration runs the workload with the short and then the long loop count and reports the
// difference as the iteration's (manual) time, so items_per_second is the steady-state rate.
void run_steady(benchmark::State& state, Workload w) {
  const int n = static_cast<int>(state.range(0));
  std::uint64_t items = 0;
  // Untimed, so the thread's stack pool holds N stacks before the first iteration: otherwise
  // that iteration's short run alone maps and faults them in, the difference comes out too
  // small, and a benchmark of one iteration (a short --benchmark_min_time) reports up to twice
  // the steady rate (BM_TimersSteady/4096: 12.8M events/s against 6.6M).
  if (timed_run(state, w, n, kSteadyShortLoops) == 0) return;
  for (auto _ : state) {
    const double short_s = timed_run(state, w, n, kSteadyShortLoops);
    const double long_s = timed_run(state, w, n, steady_long_loops(n));
    if (short_s == 0 || long_s == 0) return;
    // A noisy machine can make the long run look no longer; count it as a tiny interval rather
    // than a negative one (the median of repetitions then shows the outlier).
    state.SetIterationTime(long_s > short_s ? long_s - short_s : 1e-9);
    items += static_cast<std::uint64_t>(n) * (steady_long_loops(n) - kSteadyShortLoops);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(items));
}

void BM_Timers(benchmark::State& state) { run_benchmark(state, run_timers, kTimerLoops); }
void BM_Ring(benchmark::State& state) { run_benchmark(state, run_ring, kRingLaps); }
void BM_Barrier(benchmark::State& state) { run_benchmark(state, run_barrier, kBarrierRounds); }
void BM_TimersSteady(benchmark::State& state) { run_steady(state, run_timers); }
void BM_RingSteady(benchmark::State& state) { run_steady(state, run_ring); }
void BM_BarrierSteady(benchmark::State& state) { run_steady(state, run_barrier); }
// W1 and W3 on stackless processes (workloads.h).
void BM_TimersStackless(benchmark::State& state) { run_benchmark(state, run_timers_stackless, kTimerLoops); }
void BM_BarrierStackless(benchmark::State& state) { run_benchmark(state, run_barrier_stackless, kBarrierRounds); }
void BM_TimersStacklessSteady(benchmark::State& state) { run_steady(state, run_timers_stackless); }
void BM_BarrierStacklessSteady(benchmark::State& state) { run_steady(state, run_barrier_stackless); }

BENCHMARK(BM_Timers)->Arg(512)->Arg(1000)->Arg(3000)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Ring)->Arg(512)->Arg(1000)->Arg(3000)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Barrier)->Arg(512)->Arg(1000)->Arg(3000)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TimersSteady)->Arg(512)->Arg(1000)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_RingSteady)->Arg(512)->Arg(1000)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_BarrierSteady)->Arg(512)->Arg(1000)->Arg(4096)->Arg(10000)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_TimersStackless)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BarrierStackless)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TimersStacklessSteady)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_BarrierStacklessSteady)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace
}  // namespace racesim::bench

BENCHMARK_MAIN();
