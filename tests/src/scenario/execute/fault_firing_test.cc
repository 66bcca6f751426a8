// Where an armed fault acts (kernel::ActiveFault::set_firing): `fires` decides at each site the
// fault could act, `times` bounds the sites it fires at, and both levels and a fault argument's
// draw are choices on the run's tape, so a search can steer whether, where and how a fault strikes.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/scenario/language/loader.h"
#include "src/scenario/language/assignment.h"
#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// One rank writes /c/f twenty times, 1 MiB at 100 MiB/s: twenty sites for a writer stall.
std::string writes(const std::string& faults) {
  return "platform:\n  storage:\n    c: {kind: nfs, mount: /c, meta_latency: 1ms, bandwidth: 100MiB/s, "
         "client_bandwidth: 100MiB/s, chunk: 1MiB}\n"
         "faults: [" + faults + "]\n";
}
const std::string kTwentyWrites = "  - repeat: {times: 20, do: [{write_file: {path: /c/f, size: 1MiB}}]}\n";

std::size_t count_kind(const std::vector<kernel::Choice>& tape, kernel::ChoiceKind kind) {
  return static_cast<std::size_t>(
      std::count_if(tape.begin(), tape.end(), [&](const kernel::Choice& c) { return c.kind == kind; }));
}

run::RunRecord recorded(const Fixture& f, std::uint64_t seed, kernel::PolicySpec policy = kernel::PolicySpec::fifo()) {
  run::RunOptions o;
  o.record_choices = true;
  o.policy = std::move(policy);
  return run::run_one(*f.study->programs.at(0), seed, o);
}

TEST(FaultFiringTest, AFaultThatAlwaysFiresMakesNoChoiceAndBitesEverySite) {
  auto f = make(1, kTwentyWrites, writes("{kind: writer_stall, duration: 10ms}"));
  const run::RunRecord r = recorded(f, 1);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  EXPECT_EQ(r.metrics.at("faults.writer_stall.hits"), 20);
  EXPECT_EQ(count_kind(r.tape, kernel::ChoiceKind::kFault), 0u);
}

TEST(FaultFiringTest, FiresDecidesAtEachSiteAndEachDecisionIsAFaultChoice) {
  auto f = make(1, kTwentyWrites, writes("{kind: writer_stall, duration: 10ms, fires: 0.5}"));
  const run::RunRecord r = recorded(f, 1);
  ASSERT_EQ(r.outcome, run::Outcome::kPass) << r.diagnosis;
  const double hits = r.metrics.at("faults.writer_stall.hits");
  EXPECT_GT(hits, 0);
  EXPECT_LT(hits, 20);
  EXPECT_EQ(count_kind(r.tape, kernel::ChoiceKind::kFault), 20u);  // one per write
  // Recording changes nothing: the same run without the tape.
  const run::RunRecord plain = run(f, 1);
  EXPECT_EQ(plain.trace_hash, r.trace_hash);
  EXPECT_EQ(plain.metrics.at("faults.writer_stall.hits"), hits);
  // Flipping one site's choice (option 1: the other way than the draw) moves one hit.
  std::vector<kernel::Choice> tape = r.tape;
  auto first = std::find_if(tape.begin(), tape.end(), [](const kernel::Choice& c) { return c.kind == kernel::ChoiceKind::kFault; });
  ASSERT_NE(first, tape.end());
  first->value = 1;
  const run::RunRecord flipped = recorded(f, 1, kernel::PolicySpec::replay(tape));
  EXPECT_EQ(flipped.replay_divergence, "");
  EXPECT_EQ(std::abs(flipped.metrics.at("faults.writer_stall.hits") - hits), 1);
  EXPECT_NE(flipped.trace_hash, r.trace_hash);
}

TEST(FaultFiringTest, TimesBoundsTheSitesAndTheChoicesPickWhichOne) {
  auto once = make(1, kTwentyWrites, writes("{kind: writer_stall, duration: 10ms, times: 1}"));
  EXPECT_EQ(run(once).metrics.at("faults.writer_stall.hits"), 1);
  // fires 0.5, times 1: it strikes once, at the first write whose choice says so, and makes no
  // choice after: the number of fault choices on the tape is the write it struck at.
  auto f = make(1, kTwentyWrites, writes("{kind: writer_stall, duration: 1s, fires: 0.5, times: 1}"));
  const run::RunRecord r = recorded(f, 2);
  ASSERT_EQ(r.metrics.at("faults.writer_stall.hits"), 1);
  const std::size_t struck = count_kind(r.tape, kernel::ChoiceKind::kFault);
  ASSERT_GT(struck, 1u);  // this seed's draws strike after the first write
  // Option 1 turns the first write's "no" into "yes": it strikes there.
  std::vector<kernel::Choice> earlier(r.tape.begin(), r.tape.end());
  for (kernel::Choice& c : earlier) {
    if (c.kind == kernel::ChoiceKind::kFault) {
      c.value = 1;
      break;
    }
  }
  const run::RunRecord at_first = recorded(f, 2, kernel::PolicySpec::prefix(earlier));
  EXPECT_EQ(at_first.metrics.at("faults.writer_stall.hits"), 1);
  EXPECT_EQ(count_kind(at_first.tape, kernel::ChoiceKind::kFault), 1u);
  // And turning the striking write's "yes" into "no" moves it later (or past the last write).
  std::vector<kernel::Choice> later = r.tape;
  for (auto it = later.rbegin(); it != later.rend(); ++it) {
    if (it->kind == kernel::ChoiceKind::kFault) {
      it->value = 1;
      break;
    }
  }
  const run::RunRecord moved = recorded(f, 2, kernel::PolicySpec::prefix(later));
  EXPECT_GT(count_kind(moved.tape, kernel::ChoiceKind::kFault), struck);
}

TEST(FaultFiringTest, AFaultArgumentsDrawIsADrawChoice) {
  // A stall of 1 s to 3 s on the one write: the draw of `duration` is on the tape, and forcing its
  // low end (option 1) or high end (option 3) stalls the write 1 s or 3 s.
  auto f = make(1, "  - write_file: {path: /c/f, size: 1MiB}\n  - mark: {name: done, metric: true}\n",
                writes("{kind: writer_stall, duration: {uniform: {min: 1s, max: 3s}}}"));
  const run::RunRecord r = recorded(f, 1);
  ASSERT_EQ(count_kind(r.tape, kernel::ChoiceKind::kDraw), 1u);
  auto forced = [&](std::uint64_t value) {
    std::vector<kernel::Choice> tape = r.tape;
    for (kernel::Choice& c : tape) {
      if (c.kind == kernel::ChoiceKind::kDraw) c.value = value;
    }
    const run::RunRecord x = recorded(f, 1, kernel::PolicySpec::replay(tape));
    EXPECT_EQ(x.replay_divergence, "");
    return x.metrics.at("done_s");
  };
  const double low = forced(1);
  const double high = forced(3);
  EXPECT_NEAR(high - low, 2.0, 1e-6);
  const double seeds = r.metrics.at("done_s");
  EXPECT_GT(seeds, low);
  EXPECT_LT(seeds, high);
}

TEST(FaultFiringTest, ACrashFiresAtItsOneSiteOrNot) {
  const std::string program = "  - sleep: 10s\n  - mark: {name: done, metric: true}\n";
  auto f = make(1, program, "faults: [{kind: crash, at: 1s, fires: 0.5}]\n");
  const run::RunRecord r = recorded(f, 1);
  ASSERT_EQ(count_kind(r.tape, kernel::ChoiceKind::kFault), 1u);
  std::vector<kernel::Choice> tape = r.tape;
  for (kernel::Choice& c : tape) c.value = 1 - c.value;
  const run::RunRecord other = recorded(f, 1, kernel::PolicySpec::replay(tape));
  // One of the two crashed the rank at 1 s (a failure: a rank died), the other ran to the end.
  // One of the two crashed the rank at 1 s, before its mark; the other ran to the end.
  EXPECT_EQ(r.metrics.at("crashed_ranks") + other.metrics.at("crashed_ranks"), 1);
  EXPECT_NE(r.metrics.count("done_s"), other.metrics.count("done_s"));
}

TEST(FaultFiringTest, FiresAndTimesAreCheckedWhereWrittenAndOverridable) {
  const std::string program = "  - sleep: 1s\n";
  EXPECT_THAT(compile_errors(1, program, "faults: [{kind: straggler, fires: 2}]\n"),
              HasSubstr("t.yaml:4:35: error: fires: expected a number from 0 to 1"));
  EXPECT_THAT(compile_errors(1, program, "faults: [{kind: straggler, times: 0}]\n"),
              HasSubstr("times: expected a whole number from 1 to 1000000000"));
  EXPECT_THAT(compile_errors(1, program, "faults: [{kind: straggler, times: 1.5}]\n"),
              HasSubstr("times: expected a whole number"));
  Diagnostics d;
  auto sc = load_scenario_text("name: t\nranks: 1\nfaults: [{kind: straggler, factor: 3}]\nprogram:\n" + program +
                                   "strategies: {only: }\n",
                               "t.yaml", d);
  ASSERT_TRUE(sc) << d.to_string();
  ASSERT_TRUE(apply_override(*sc, "faults.straggler.fires=0.25", d)) << d.to_string();
  ASSERT_TRUE(apply_override(*sc, "faults.straggler.times=2", d)) << d.to_string();
  EXPECT_EQ(sc->faults.at(0).fires, 0.25);
  EXPECT_EQ(sc->faults.at(0).times, 2u);
  EXPECT_FALSE(apply_override(*sc, "faults.straggler.fires=-1", d));
  EXPECT_THAT(d.to_string(), HasSubstr("fires: expected a number from 0 to 1"));
}

TEST(FaultFiringTest, AStragglerFiresPerComputeStep) {
  // Ten compute steps of 1 s, each stretched 3x where the straggler fires: the time says how
  // many fired, and the hits agree.
  auto f = make(1, "  - repeat: {times: 10, do: [{compute: 1s}]}\n  - mark: {name: done, metric: true}\n",
                "faults: [{kind: straggler, factor: 3, fires: 0.5}]\n");
  const run::RunRecord r = run(f, 3);
  const double hits = r.metrics.at("faults.straggler.hits");
  EXPECT_GT(hits, 0);
  EXPECT_LT(hits, 10);
  EXPECT_NEAR(r.metrics.at("done_s"), 10 + 2 * hits, 1e-6);
}

}  // namespace
}  // namespace racesim::scenario
