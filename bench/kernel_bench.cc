// Kernel benchmarks: BM_Timers/N, BM_Ring/N, BM_Barrier/N (see workloads.h), each reporting
// items_per_second and bytes_per_process. Memory is measured once per benchmark on a fresh
// thread (so the thread's stack pool starts empty): resident-set growth from before the
// simulation is built to the end of its run, while it still holds every process, divided by N.
// Stacks stay resident in the pool after their process ends, so this is the peak.
#include <benchmark/benchmark.h>

#include <functional>
#include <thread>

#include "bench/workloads.h"

namespace racesim::bench {
namespace {

using Workload = WorkloadResult (*)(kernel::Simulation&, int);

double bytes_per_process(Workload w, int n, double* stack_depth) {
  double result = 0;
  std::thread t([&] {
    const std::uint64_t before = resident_bytes();
    kernel::Simulation sim;
    const WorkloadResult r = w(sim, n);
    const std::uint64_t after = resident_bytes();
    if (r.run.outcome == kernel::RunOutcome::kCompleted && after > before) {
      result = static_cast<double>(after - before) / n;
    }
    *stack_depth = static_cast<double>(kernel::StackPool::for_this_thread().deepest_use_bytes());
  });
  t.join();
  return result;
}

void run_benchmark(benchmark::State& state, Workload w) {
  const int n = static_cast<int>(state.range(0));
  std::uint64_t items = 0;
  for (auto _ : state) {
    kernel::Simulation sim;
    const WorkloadResult r = w(sim, n);
    if (r.run.outcome != kernel::RunOutcome::kCompleted) {
      state.SkipWithError("workload did not complete");
      return;
    }
    items += r.items;
    benchmark::DoNotOptimize(r.run.trace_hash);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(items));
  double depth = 0;
  state.counters["bytes_per_process"] = bytes_per_process(w, n, &depth);
  state.counters["stack_bytes_used"] = depth;
}

void BM_Timers(benchmark::State& state) { run_benchmark(state, run_timers); }
void BM_Ring(benchmark::State& state) { run_benchmark(state, run_ring); }
void BM_Barrier(benchmark::State& state) { run_benchmark(state, run_barrier); }

BENCHMARK(BM_Timers)->Arg(1000)->Arg(3000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Ring)->Arg(1000)->Arg(3000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Barrier)->Arg(1000)->Arg(3000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace racesim::bench

BENCHMARK_MAIN();
