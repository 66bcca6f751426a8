// Scenario benchmarks: whole runs of a shipped scenario through the harness (load once, compile
// once per strategy, then run seeds), reporting runs per second (one run = one seed of one
// strategy) and simulation events per second.
//
//   BM_OmReadWhileWrite/R  scenarios/om_read_while_write.yaml at R ranks (all on one node), its
//                          first sweep point (no fault), every strategy in turn, seed after seed.
#include <benchmark/benchmark.h>

#include "src/run/runner.h"
#include "src/scenario/program.h"

namespace racesim::bench {
namespace {

void BM_OmReadWhileWrite(benchmark::State& state) {
  const std::string ranks = std::to_string(state.range(0));
  scenario::Diagnostics d;
  auto sc = scenario::load_scenario(RACESIM_SOURCE "/scenarios/om_read_while_write.yaml", d);
  if (!sc || !scenario::apply_override(*sc, "ranks=" + ranks, d) ||
      !scenario::apply_override(*sc, "platform.ranks_per_node=" + ranks, d)) {
    state.SkipWithError(d.to_string().c_str());
    return;
  }
  auto point = scenario::at_point(*sc, scenario::sweep_points(*sc).front(), d);
  std::vector<scenario::CompiledProgram> programs;
  for (const auto& st : point->strategies) {
    auto p = scenario::compile_program(*point, st, d);
    if (!p) {
      state.SkipWithError(d.to_string().c_str());
      return;
    }
    programs.push_back(std::move(*p));
  }
  std::uint64_t seed = 0, runs = 0, events = 0;
  for (auto _ : state) {
    for (const auto& p : programs) {
      const run::RunRecord r = run::run_one(p, seed, {});
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

BENCHMARK(BM_OmReadWhileWrite)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace racesim::bench
