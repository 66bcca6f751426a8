// Scaling benchmarks: how the time and memory of one run of each shipped scenario grow with its
// rank count (the speed issue's target: no faster than n log n from 512 to 4,096 ranks, an
// exponent of at most 1.2 over that range, judged in instructions by
// bench/scaling_instructions.sh; bench/scaling.sh fits the exponent in time).
//
//   BM_Scaling/S/R  shipped scenario S (see kScenarios) at R ranks, its first sweep point, one
//                   seed of every strategy per iteration (seed 0, 1, ... as iterations go on).
//
// Counters: seconds_per_run (wall time over runs: a run is one seed of one strategy),
// events_per_run, runs (how many runs the figures are over), and bytes_per_rank: the growth
// of the peak resident set (VmHWM) from before the first call to the end, divided by R (what a
// run of R ranks holds at its peak: fiber stacks, model state, the study). The baseline and
// the peak are per process, so run one benchmark per process (bench/scaling.sh does).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/proc_status.h"
#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::bench {
namespace {

struct ShippedScenario {
  const char* file;  // under scenarios/
  // The file sweeps `ranks` itself (a --set cannot change a swept key): the rank count is added
  // to its sweep line unless it is there already (so the file's own expectations at its points still compile) and the run
  // takes that point.
  const char* ranks_sweep_line;
};

constexpr ShippedScenario kScenarios[] = {
    {"om_read_while_write.yaml", nullptr},
    {"om_noflock_poison.yaml", nullptr},
    {"dtensor_implicit_redistribute.yaml", nullptr},
    {"device_guard_recompile.yaml", "  ranks: [1, 8, 64]"},
    {"examples/publish_race.yaml", nullptr},
    {"examples/slow_writer_sweep.yaml", nullptr},
    {"examples/wait_cycle.yaml", nullptr},
    {"profiler_flush_storm.yaml", "  ranks: [8, 64, 512, 4096]"},
};

void BM_Scaling(benchmark::State& state) {
  const ShippedScenario& s = kScenarios[state.range(0)];
  const int ranks = static_cast<int>(state.range(1));
  const std::string path = std::string(RACESIM_SOURCE "/scenarios/") + s.file;
  scenario::StudyRequest request{.path = path, .first_point_only = true};
  if (s.ranks_sweep_line != nullptr) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string t = text.str();
    const auto at = t.find(s.ranks_sweep_line);
    if (at == std::string::npos) {
      state.SkipWithError((path + ": no line '" + s.ranks_sweep_line + "' to replace").c_str());
      return;
    }
    std::string line = s.ranks_sweep_line;
    const std::string r = std::to_string(ranks);
    const bool listed = line.find(" " + r + ",") != std::string::npos || line.find(" " + r + "]") != std::string::npos;
    if (!listed) line.insert(line.size() - 1, ", " + r);
    t.replace(at, std::strlen(s.ranks_sweep_line), line);
    request.text = t;
    request.first_point_only = false;
    request.points = {"ranks=" + std::to_string(ranks)};
  } else {
    request.overrides = {"ranks=" + std::to_string(ranks)};
  }
  // Google Benchmark calls this function more than once (a trial run first); the baseline is
  // the resident set before the first call, so the growth counts what the point itself kept.
  static const std::uint64_t rss_before_kib = status_kib("VmRSS:");
  scenario::Diagnostics d;
  auto study = scenario::compile_study(request, d);
  if (!study) {
    state.SkipWithError(d.to_string().c_str());
    return;
  }
  state.SetLabel(s.file);
  std::uint64_t seed = 0, runs = 0, events = 0;
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& p : study->programs) {
      const run::RunRecord r = run::run_one(*p, seed, {});
      events += r.events;
      ++runs;
      benchmark::DoNotOptimize(r.trace_hash);
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++seed;
  }
  const std::uint64_t hwm_kib = status_kib("VmHWM:");
  state.SetItemsProcessed(static_cast<std::int64_t>(runs));
  state.counters["seconds_per_run"] = seconds / static_cast<double>(runs);
  state.counters["events_per_run"] = static_cast<double>(events) / static_cast<double>(runs);
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["bytes_per_rank"] =
      hwm_kib > rss_before_kib ? static_cast<double>(hwm_kib - rss_before_kib) * 1024.0 / ranks : 0.0;
}

void ScalingArgs(benchmark::internal::Benchmark* b) {
  for (int s = 0; s < static_cast<int>(std::size(kScenarios)); ++s) {
    for (int ranks : {512, 1024, 2048, 4096}) b->Args({s, ranks});
  }
}

BENCHMARK(BM_Scaling)->Apply(ScalingArgs)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace racesim::bench

BENCHMARK_MAIN();
