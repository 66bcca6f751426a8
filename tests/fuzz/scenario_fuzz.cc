// The libFuzzer target: any bytes as a scenario file, through load, --set-free compile of every
// strategy at every sweep point (each program at most kMaxSteps steps), and a short run of the
// first programs (one seed, at most kMaxEvents events and kMaxRanks ranks), so every input is
// quick: a program at the documented million steps compiles in 1.5 s, but in about 15 s under
// the sanitizers, and a few of them would pass libFuzzer's timeout without being a finding. Bad input must end as located
// errors; anything else is a finding: a crash or sanitizer report, an exception escaping the
// pipeline (`racesim` would say "internal error"), a failed load with no error, an error with no
// line, a run that ends in an internal error, or a program of stackless ranks whose run differs
// from the same run on fibers.
//
// Built with clang's -fsanitize=fuzzer in the sanitizer tree (CI fuzzes for a bounded minute);
// replay_main.cc links the same function into a plain program that runs given inputs once each,
// so the seed corpus and every past finding (tests/fuzz/regressions/) are tests in both trees.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

namespace {

constexpr std::uint64_t kMaxEvents = 20'000;
constexpr std::size_t kMaxSteps = 20'000;
constexpr int kMaxRanks = 64;
constexpr std::size_t kMaxPrograms = 4;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "scenario_fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace racesim;
  scenario::Diagnostics diags;
  std::unique_ptr<scenario::Study> study;
  try {
    study = scenario::compile_study(
        {.path = "fuzz.yaml", .text = std::string(reinterpret_cast<const char*>(data), size), .max_steps = kMaxSteps},
        diags);
  } catch (const std::exception& e) {
    finding(std::string("an exception escaped load and compile: ") + e.what());
  }
  if (!study) {
    if (diags.count() == 0) finding("the scenario was refused without an error");
    for (const auto& d : diags.all()) {
      if (d.where.line <= 0) finding("an error without a line: " + scenario::to_string(d.where) + ": " + d.message);
    }
    return 0;
  }
  if (diags.count() != 0) finding("a study was built despite errors:\n" + diags.to_string());
  for (auto& point : study->points) {
    point->limits.events = std::min(point->limits.events, kMaxEvents);
  }
  std::size_t ran = 0;
  for (const auto& program : study->programs) {
    if (ran++ == kMaxPrograms) break;
    if (program->scenario->ranks > kMaxRanks) continue;
    run::RunRecord rec;
    try {
      rec = run::run_one(*program, 0, run::RunOptions{});
    } catch (const std::exception& e) {
      finding(std::string("an exception escaped a run: ") + e.what());
    }
    if (rec.outcome == run::Outcome::kError && rec.check == "internal") finding("internal error: " + rec.diagnosis);
    if (program->stackless) {
      // Stackless ranks must be the same run as ranks on fibers, event for event.
      run::RunOptions fibers;
      fibers.stackless_ranks = false;
      run::RunRecord on_fibers;
      try {
        on_fibers = run::run_one(*program, 0, fibers);
      } catch (const std::exception& e) {
        finding(std::string("an exception escaped a run on fibers: ") + e.what());
      }
      if (on_fibers.trace_hash != rec.trace_hash || on_fibers.outcome != rec.outcome ||
          on_fibers.diagnosis != rec.diagnosis || on_fibers.metrics != rec.metrics) {
        finding("a stackless run differs from the same run on fibers: " + rec.diagnosis + " / " + on_fibers.diagnosis);
      }
    }
  }
  return 0;
}
