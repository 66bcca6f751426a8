// The second libFuzzer target: any bytes as a results.jsonl (what merge, check --results, report
// --results, --resume and live --fit-costs read) and as an override file (--set-file) applied to
// a small scenario. Bad input must be refused with an error; anything else is a finding: a crash
// or sanitizer report, an exception escaping the readers, a refusal with no error, an override
// error with no line, a results file that reads but whose records, written again, do not read back
// the same, or a mount's per-call costs that fit to a line that is not finite.
//
// replay_main.cc links the same function into a plain program that runs given inputs once each
// (the results_fuzz_corpus test), so past findings stay tests in every tree.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "src/live/cost_fit.h"
#include "src/report/failure_kind.h"
#include "src/report/results_file.h"
#include "src/scenario/language/override_file.h"
#include "src/scenario/pipeline/study.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "results_fuzz: %s\n", what.c_str());
  std::abort();
}

// The scenario the override files are applied to: every kind of key a calibration writes.
constexpr const char* kScenario =
    "name: f\nranks: 2\nseeds: 1\n"
    "params: {t: 1s, n: 2}\n"
    "platform: {storage: {cache: {kind: local, mount: /c, bandwidth: 1GB/s}}}\n"
    "sweep: {params.n: [1, 2]}\n"
    "program: [{sleep: \"${t}\"}, {write_file: {path: /c/x, size: 1MiB}}]\n"
    "strategies: {a: {}}\n";

void results_file(const std::string& text) {
  using namespace racesim;
  std::vector<report::ResultsText> sections;
  std::string error;
  bool ok = false;
  try {
    ok = report::parse_result_sections(text, sections, error);
    report::ResultsText one;
    std::string one_error;
    if (!report::read_results(text, one, one_error) && one_error.empty()) finding("read_results refused with no error");
  } catch (const std::exception& e) {
    finding(std::string("an exception escaped the results readers: ") + e.what());
  }
  if (!ok) {
    if (error.empty()) finding("a results file was refused with no error");
    return;
  }
  // Every failed run read has a kind, on one line (a row of the side-by-side report's "Where the
  // runs failed"), whatever its diagnosis holds.
  for (const auto& s : sections) {
    for (const auto& r : s.records) {
      if (!run::failed(r.outcome)) continue;
      const std::string kind = report::failure_kind(r);
      if (kind.empty() || kind.find('\n') != std::string::npos) finding("a failed run's kind is empty or not one line");
    }
  }
  // Each mount's per-call costs (fs.MOUNT.cost.*, what live --fit-costs reads) fit, or are refused
  // with an error; a fitted line is finite.
  for (const auto& s : sections) {
    std::set<std::string> mounts;
    for (const auto& r : s.records) {
      for (const auto& [k, v] : r.metrics) {
        const auto at = k.find(".cost.");
        if (k.rfind("fs.", 0) == 0 && at != std::string::npos && at > 3) mounts.insert(k.substr(3, at - 3));
      }
    }
    for (const std::string& m : mounts) {
      live::CostSumsByKind sums;
      std::map<std::string, live::CostSumsByKind> by_program;
      std::string refused;
      if (!live::cost_sums_of(s.records, m, sums, refused, &by_program)) {
        if (refused.empty()) finding("a mount's costs were refused with no error");
        continue;
      }
      std::map<std::string, live::CostLine> lines;
      for (const auto& [kind, sum] : sums) {
        const live::CostLine l = live::fit_cost_line(sum);
        if (l.fitted && !(std::isfinite(l.fixed_s) && l.fixed_s >= 0 && std::isfinite(l.bytes_per_s) &&
                          l.bytes_per_s >= 0)) {
          finding("a fitted cost line is not finite");
        }
        lines[kind] = l;
      }
      if (live::format_cost_overrides(m, live::CostSource{}, lines, by_program).empty()) finding("no override text");
    }
  }
  // What reads, written again, reads back the same records.
  std::string again;
  for (const auto& s : sections) again += report::format_jsonl(s.experiment, s.records);
  std::vector<report::ResultsText> back;
  if (!report::parse_result_sections(again, back, error)) finding("records read do not read back: " + error);
  if (back.size() != sections.size()) finding("a section was lost writing the records again");
  for (std::size_t i = 0; i < back.size(); ++i) {
    if (report::format_jsonl(back[i].experiment, back[i].records) !=
        report::format_jsonl(sections[i].experiment, sections[i].records)) {
      finding("records changed writing them again");
    }
  }
}

void override_file(const std::string& text) {
  using namespace racesim::scenario;
  Diagnostics diags;
  std::vector<std::string> texts;
  std::vector<Location> origins;
  try {
    if (!parse_override_file(text, "f.set", texts, origins, diags)) {
      if (diags.count() == 0) finding("an override file was refused with no error");
      return;
    }
    Diagnostics compile;
    StudyRequest request{.path = "f.yaml", .text = kScenario, .overrides = texts, .override_origins = origins};
    const auto study = compile_study(request, compile);
    if (!study && compile.count() == 0) finding("overrides were refused with no error");
    for (const auto& d : compile.all()) {
      if (d.where.line <= 0 && d.where.file.empty()) finding("an override error that names no place: " + d.message);
    }
  } catch (const std::exception& e) {
    finding(std::string("an exception escaped the overrides: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  results_file(text);
  override_file(text);
  return 0;
}
