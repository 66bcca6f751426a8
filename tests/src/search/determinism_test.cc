// The determinism guard (determinism.h): each injected kind of nondeterminism is caught and the
// event where it first shows is named; two equal runs compare equal; the shipped kind of run
// (a compiled scenario, twice on two threads) is deterministic.
#include "src/search/determinism.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <thread>

#include "sim/kernel/simulation.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::search {
namespace {

using ::testing::HasSubstr;
using namespace kernel::time_literals;

// Two processes, p0 and p1, sleep 1 ms; then `first()` says which of them sleeps 1 ms more (the
// other 2 ms). Events: the two starts, the two wake-ups at 1 ms, then at 2 ms the one `first()`
// named: the fifth event is where a different answer first shows.
run::RunRecord two_processes(const std::function<int()>& first) {
  kernel::Simulation sim({.log_events = true});
  for (int i = 0; i < 2; ++i) {
    sim.spawn("p" + std::to_string(i), [&sim, &first, i] {
      sim.sleep_for(1_ms);
      sim.sleep_for(first() == i ? 1_ms : 2_ms);
    });
  }
  const kernel::RunResult res = sim.run();
  run::RunRecord r;
  r.trace_hash = res.trace_hash;
  r.event_log = sim.event_log();
  for (const auto& p : sim.processes()) r.process_names.push_back(p->name());
  return r;
}

void expect_named_at_the_fifth_event(const std::string& what) {
  EXPECT_THAT(what, HasSubstr("the runs differ from event 5 at 2ms: the first dispatched p"));
  EXPECT_THAT(what, HasSubstr("they agree on the 4 events before"));
  // One run resumed p0 there, the other p1.
  EXPECT_THAT(what, HasSubstr("p0 ("));
  EXPECT_THAT(what, HasSubstr("p1 ("));
}

TEST(DeterminismTest, EqualRunsCompareEqual) {
  const auto a = two_processes([] { return 0; });
  const auto b = two_processes([] { return 0; });
  EXPECT_EQ(a.event_log.size(), 6u);
  EXPECT_EQ(compare_runs(a, b), "");
}

TEST(DeterminismTest, AWallClockReadIsCaughtWhereItFirstShows) {
  // The model asks the wall clock (as a timeout measured in real time would); the second run
  // happens later, past the threshold the first run was under.
  const auto threshold = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  auto clock_says = [threshold] { return std::chrono::steady_clock::now() >= threshold ? 1 : 0; };
  const auto a = two_processes(clock_says);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto b = two_processes(clock_says);
  expect_named_at_the_fifth_event(compare_runs(a, b));
}

TEST(DeterminismTest, IterationOverAContainerKeyedByPointerIsCaughtWhereItFirstShows) {
  // The model keeps its two clients in a set ordered by address and serves the first; the
  // second run allocates them in the other order (another allocation history, as another thread
  // or an earlier run would give).
  auto by_address = [](bool reversed) {
    auto one = std::make_unique<int>(0), two = std::make_unique<int>(1);
    if (reversed == (one.get() < two.get())) std::swap(one, two);
    std::set<const int*> clients = {one.get(), two.get()};
    return *clients.begin() == one.get() ? 0 : 1;
  };
  const auto a = two_processes([&] { return by_address(false); });
  const auto b = two_processes([&] { return by_address(true); });
  expect_named_at_the_fifth_event(compare_runs(a, b));
}

TEST(DeterminismTest, StateLeftFromAnEarlierRunIsCaughtWhereItFirstShows) {
  // A value the run never set (what an uninitialised field holds): here a counter that outlives
  // the run, so the second run starts from what the first left.
  int leftover = 0;
  auto stale = [&leftover] { return leftover++ < 2 ? 0 : 1; };
  const auto a = two_processes(stale);
  const auto b = two_processes(stale);
  expect_named_at_the_fifth_event(compare_runs(a, b));
}

TEST(DeterminismTest, OutcomeAndMetricDifferencesAreNamedWhenTheEventsAgree) {
  auto a = two_processes([] { return 0; });
  auto b = a;
  b.metrics["bytes"] = 2;
  a.metrics["bytes"] = 1;
  EXPECT_THAT(compare_runs(a, b), HasSubstr("the metric bytes is 1 in the first and 2 in the second"));
  b = a;
  b.outcome = run::Outcome::kFail;
  b.check = "fail";
  b.diagnosis = "boom";
  EXPECT_THAT(compare_runs(a, b), HasSubstr("the first ended pass and the second fail (fail: boom)"));
  b = a;
  b.event_log.pop_back();
  EXPECT_THAT(compare_runs(a, b), HasSubstr("the runs differ from event 6"));
  EXPECT_THAT(compare_runs(a, b), HasSubstr("the second nothing (the run had ended after 5 events)"));
}

TEST(DeterminismTest, AScenarioRunTwiceOnTwoThreadsIsTheSameRunAndNamesItsSteps) {
  scenario::Diagnostics d;
  scenario::StudyRequest r;
  r.path = "g.yaml";
  r.text = R"(name: g
ranks: 3
params:
  t: {uniform: {min: 1s, max: 2s}}
program:
  - compute: ${t}
  - barrier: b
  - semaphore: {name: s, permits: 1, do: [{sleep: 10ms}]}
strategies:
  only: {}
)";
  auto study = scenario::compile_study(r, d);
  ASSERT_TRUE(study) << d.to_string();
  std::uint64_t runs = 0;
  DeterminismOptions o;
  o.seeds = 3;
  for (const char* policy : {"fifo", "random", "pct:3"}) {
    o.policy = *kernel::PolicySpec::parse(policy);
    EXPECT_TRUE(check_determinism(study->program_pointers(), o, runs).empty()) << policy;
    EXPECT_EQ(runs, 3u);
  }
  // The log names the step a rank was in: compare a run against another seed's.
  run::RunOptions logged;
  logged.log_events = true;
  const auto a = run::run_one(*study->programs[0], 0, logged);
  const auto b = run::run_one(*study->programs[0], 1, logged);
  EXPECT_THAT(compare_runs(a, b), HasSubstr("in the step at g.yaml:"));
}

}  // namespace
}  // namespace racesim::search
