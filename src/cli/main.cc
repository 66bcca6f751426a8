// racesim: run scenario comparisons, check expectations, validate files, replay one seed.
// Exit codes: 0 ok; 1 an expectation or check failed; 2 usage or scenario error; 3 internal;
// 128 + the signal's number when `run` is interrupted (SIGINT, SIGTERM).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "src/live/calibrate.h"
#include "src/live/fs_type.h"
#include "src/live/supervisor.h"
#include "src/live/worker.h"
#include "src/report/aggregate.h"
#include "src/report/output_file.h"
#include "src/report/report.h"
#include "src/report/results_file.h"
#include "src/report/results_log.h"
#include "src/run/runner.h"
#include "src/scenario/registry.h"
#include "src/scenario/study.h"

namespace {

using namespace racesim;

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitInternal = 3;

// Loads `file`, applies the --set overrides, expands the sweep, and compiles the named
// strategies (all when `only` is empty) at every point (only the point labelled `point` when it
// is not empty). Prints every error and returns nullptr on failure.
// Where each line a --set-file gave was written (FILE:LINE), by the line's text: what load()
// hands the compiler, so an error in it names the file and line. Filled once, before any load.
std::map<std::string, scenario::Location> g_set_file_origins;

std::unique_ptr<scenario::Study> load(const std::string& file, const std::vector<std::string>& only,
                                      const std::vector<std::string>& overrides = {},
                                      const std::vector<std::string>& points = {}) {
  scenario::Diagnostics diags;
  std::vector<scenario::Location> origins;
  for (const auto& o : overrides) {
    auto it = g_set_file_origins.find(o);
    origins.push_back(it == g_set_file_origins.end() ? scenario::Location{} : it->second);
  }
  auto study = scenario::compile_study(
      {.path = file, .overrides = overrides, .override_origins = origins, .strategies = only, .points = points}, diags);
  if (!study) std::cerr << diags.to_string();
  return study;
}

// --set-file FILE (repeatable): each line KEY=VALUE (blank lines and # comments skipped) becomes
// an override placed before the --set ones (so a --set wins), its origin FILE:LINE remembered for
// errors. False, with the error printed, on a file that cannot be read or a line that is not an
// assignment.
bool read_set_files(const std::vector<std::string>& files, std::vector<std::string>& overrides) {
  std::vector<std::string> from_files;
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "racesim: --set-file " << file << ": cannot read it\n";
      return false;
    }
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (n > 10'000) {
        std::cerr << file << ":" << n << ": more than 10000 lines: not an override file\n";
        return false;
      }
      const auto first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      const auto last = line.find_last_not_of(" \t\r");
      const std::string text = line.substr(first, last - first + 1);
      const auto eq = text.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        std::cerr << file << ":" << n << ":" << first + 1 << ": error: expected KEY=VALUE (a --set per line, "
                  << "e.g. platform.storage.cache.bandwidth=2GB/s), got '" << text << "'\n";
        return false;
      }
      g_set_file_origins[text] = {file, n, static_cast<int>(first) + 1};
      from_files.push_back(text);
    }
  }
  overrides.insert(overrides.begin(), from_files.begin(), from_files.end());
  return true;
}

struct CommonOptions {
  std::vector<std::string> set_files;  // --set-file FILE
  std::vector<std::string> overrides;  // --set KEY=VALUE
  std::string shard;                   // --shard I/N
  std::uint64_t seeds = 0;  // 0: the scenario's own
  std::uint64_t seed_start = 0;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string policy = "fifo";
};

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--set", o.overrides,
                  "override KEY=VALUE: ranks, seeds, limits.time, limits.events, params.NAME, "
                  "platform.PATH, faults.NAME.FIELD (repeatable)");
  cmd->add_option("--set-file", o.set_files,
                  "overrides from a file: a KEY=VALUE per line, # comments (racesim live --calibrate writes one); "
                  "applied before --set (repeatable)");
  cmd->add_option("--seeds", o.seeds, "seeds per strategy (default: the scenario's 'seeds')")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}));
  cmd->add_option("--seed-start", o.seed_start, "first seed");
  cmd->add_option("--jobs,-j", o.jobs, "threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--policy", o.policy, "schedule policy: fifo, random, pct[:DEPTH[:STEPS]]");
  cmd->add_option("--shard", o.shard, "run only slice I of N (seeds with index % N == I); merge joins them");
}

bool make_plan(const CommonOptions& o, const scenario::Scenario& sc, run::Plan& plan) {
  auto policy = kernel::PolicySpec::parse(o.policy);
  if (!policy) {
    std::cerr << "racesim: --policy: " << policy.message() << "\n";
    return false;
  }
  plan.options.policy = *policy;
  if (!o.shard.empty()) {
    const auto slash = o.shard.find('/');
    int i = -1, n = 0;
    try {
      if (slash != std::string::npos) {
        std::size_t used_i = 0, used_n = 0;
        i = std::stoi(o.shard.substr(0, slash), &used_i);
        n = std::stoi(o.shard.substr(slash + 1), &used_n);
        if (used_i != slash || used_n != o.shard.size() - slash - 1) n = 0;
      }
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1 || i < 0 || i >= n) {
      std::cerr << "racesim: --shard: expected I/N with 0 <= I < N, got '" << o.shard << "'\n";
      return false;
    }
    plan.shard_index = i;
    plan.shard_count = n;
  }
  plan.seeds = o.seeds ? o.seeds : static_cast<std::uint64_t>(sc.seeds);
  if (isatty(STDERR_FILENO)) {
    // A progress line on the terminal only; redirected output stays clean.
    plan.progress = [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\r%zu/%zu runs (%zu%%)", done, total, total ? done * 100 / total : 100);
      if (done == total) std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
    };
  }
  plan.seed_start = o.seed_start;
  plan.jobs = o.jobs;
  return true;
}

// Refuses, before starting, a plan whose records and concurrent runs would not fit in the memory
// this process can count on, saying what would.
bool fits_in_memory(const scenario::Study& study, const run::Plan& plan) {
  const auto w = run::size_work(study.program_pointers(), plan);
  const std::uint64_t budget = run::memory_budget(), spare = budget / 10 * 8;  // leave a fifth
  if (budget == 0 || w.bytes <= spare) return true;
  auto gib = [](std::uint64_t b) { return std::to_string(b / (1ULL << 30)) + "." + std::to_string(b % (1ULL << 30) * 10 / (1ULL << 30)) + " GiB"; };
  std::cerr << "racesim: " << w.runs << " runs on " << w.jobs << " threads would need about " << gib(w.bytes)
            << " (results and fiber stacks), more than the " << gib(spare)
            << " this machine can spare; run fewer --seeds, fewer --jobs, or split the work with --shard I/N and merge\n";
  return false;
}

// What identifies this run's results (report/experiment.h).
report::Experiment experiment_of(const scenario::Study& study, const CommonOptions& o, const run::Plan& plan) {
  report::Experiment e;
  e.scenario = study.scenario.name;
  e.content = study.scenario.content_hash;
  e.overrides = o.overrides;
  e.policy = plan.options.policy.to_string();
  e.seed_start = plan.seed_start;
  e.seeds = plan.seeds;
  for (const auto& p : study.programs) {
    e.programs.push_back(report::program_label(p->scenario->point, p->strategy->name));
  }
  for (const auto& a : study.scenario.sweep) e.axes.push_back(a.key);
  e.version = report::kRacesimVersion;
  e.shard_index = plan.shard_index;
  e.shard_count = plan.shard_count;
  return e;
}

// Writes `text` to `path` whole or not at all (report/output_file.h); a failure is reported.
bool write_file_atomically(const std::string& path, const std::string& text) {
  std::string error;
  if (report::write_output_file(path, text, error)) return true;
  std::cerr << "racesim: " << error << "\n";
  return false;
}

// The signal that interrupted `run` (0: none). The first SIGINT or SIGTERM stops new runs from
// starting; the handler then gives way to the default, so a second one ends the process at once.
std::atomic<int> g_interrupt{0};
std::atomic<bool> g_stop{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "set from a signal handler");
extern "C" void on_interrupt(int sig) {
  g_interrupt.store(sig);
  g_stop.store(true);
}
void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int cmd_run(const std::string& file, const std::vector<std::string>& strategies,
            const std::vector<std::string>& points, const CommonOptions& o, const std::string& format,
            const std::string& out_dir, const std::string& resume_dir) {
  auto l = load(file, strategies, o.overrides, points);
  if (!l) return kExitUsage;
  run::Plan plan;
  if (!make_plan(o, l->scenario, plan) || !fits_in_memory(*l, plan)) return kExitUsage;
  const report::Experiment experiment = experiment_of(*l, o, plan);
  const std::string dir = resume_dir.empty() ? out_dir : resume_dir;
  report::ResultsLog log;
  std::vector<run::RunRecord> kept;  // runs an interrupted run already did (--resume)
  std::string error;
  if (!resume_dir.empty()) {
    if (!log.resume(resume_dir, experiment, kept, error)) {
      std::cerr << "racesim: --resume: " << error << "\n";
      return kExitUsage;
    }
    const auto index = report::program_index(experiment);
    for (const auto& r : kept) plan.skip.insert({index.at(report::program_label(r.point, r.strategy)), r.seed});
    std::cerr << "racesim: resuming " << log.path() << ": " << kept.size() << " of " << experiment.expected_runs()
              << " runs kept, " << experiment.expected_runs() - kept.size() << " to run\n";
  } else if (!out_dir.empty() && !log.start(out_dir, experiment, error)) {
    std::cerr << "racesim: " << error << "\n";
    return kExitUsage;
  }
  std::string write_error;
  if (!dir.empty()) plan.on_record = [&](const run::RunRecord& r) { return log.append(r, write_error); };
  plan.stop = &g_stop;
  catch_interrupts();
  auto records = run::run_all(l->program_pointers(), plan);
  if (!dir.empty() && write_error.empty()) log.flush(write_error);
  if (!write_error.empty() || g_stop.load()) {
    if (plan.progress) std::cerr << "\r\033[K";
    std::cerr << "racesim: " << (write_error.empty() ? std::string("interrupted") : write_error) << "; ";
    if (dir.empty()) {
      std::cerr << "stopped after " << records.size() << " of " << experiment.expected_runs()
                << " runs, nothing kept (--out DIR keeps results as runs finish)\n";
    } else {
      std::cerr << log.path() << " keeps " << log.records_written() << " of " << experiment.expected_runs()
                << " runs; to run the rest, repeat the command with --resume " << dir << " in place of --out\n";
    }
    const int sig = g_interrupt.load();
    return write_error.empty() && sig != 0 ? 128 + sig : kExitUsage;
  }
  records.insert(records.end(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
  if (!report::order_records(experiment, records, error)) {
    std::cerr << "racesim: internal error: " << error << "\n";
    return kExitInternal;
  }
  const auto summaries = report::summarize(records);
  const std::vector<std::string>& axes = experiment.axes;
  if (format == "json") {
    std::cout << report::format_json(l->scenario.name, summaries);
  } else if (format == "csv") {
    std::cout << report::format_csv(summaries, axes);
  } else {
    std::cout << l->scenario.name << ": " << l->scenario.ranks << " ranks, " << plan.seeds << " seeds from "
              << plan.seed_start << ", policy " << plan.options.policy.to_string() << "\n\n"
              << report::format_table(summaries);
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "racesim: cannot write the results to standard output\n";
    return kExitUsage;
  }
  if (!dir.empty() && !log.finish(report::format_csv(summaries, axes),
                                  report::format_markdown(experiment.scenario, summaries), error)) {
    std::cerr << "racesim: " << error << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

// One experiment read from result files: its shards joined, its records in run order.
struct ResultSet {
  report::Experiment experiment;
  std::vector<run::RunRecord> records;
};

// The results in `dirs` (each DIR/results.jsonl, complete: a run, one shard, or a side-by-side
// merge of several experiments) as experiments: the shards of each joined, different experiments
// kept apart, in the order given (report::group_experiments). False, with the error printed
// after `what`, when a file is missing, cut short, or of another scenario file, or a shard is
// missing.
bool read_result_sets(const std::vector<std::string>& dirs, const std::string& what, std::vector<ResultSet>& sets) {
  std::vector<report::Experiment> parts;
  std::vector<std::string> names;
  std::vector<std::vector<run::RunRecord>> part_records;
  std::string error;
  for (const auto& dir : dirs) {
    const std::string path = dir + "/results.jsonl";
    std::ifstream in(path);
    if (!in) {
      std::cerr << "racesim: " << what << ": cannot read " << path << "\n";
      return false;
    }
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::vector<report::ResultsText> sections;
    if (!report::parse_result_sections(text, sections, error)) {
      std::cerr << "racesim: " << what << ": " << path << ": " << error << "\n";
      return false;
    }
    for (std::size_t k = 0; k < sections.size(); ++k) {
      parts.push_back(sections[k].experiment);
      names.push_back(sections.size() == 1 ? dir : dir + " (its experiment " + std::to_string(k + 1) + ")");
      part_records.push_back(std::move(sections[k].records));
    }
  }
  std::vector<report::JoinedExperiment> joined;
  if (!report::group_experiments(parts, names, joined, error)) {
    std::cerr << "racesim: " << what << ": " << error << "\n";
    return false;
  }
  sets.clear();
  for (const auto& j : joined) {
    sets.push_back({j.whole, {}});
    for (std::size_t i : j.parts) {
      auto& from = part_records[i];
      sets.back().records.insert(sets.back().records.end(), std::make_move_iterator(from.begin()),
                                 std::make_move_iterator(from.end()));
    }
    if (!report::order_records(sets.back().experiment, sets.back().records, error)) {
      std::cerr << "racesim: " << what << ": " << error << "\n";
      return false;
    }
  }
  return true;
}

// The sides of a comparison, one per experiment, labelled apart.
std::vector<report::Side> sides_of(const std::vector<ResultSet>& sets) {
  std::vector<report::Side> sides;
  for (const auto& set : sets) sides.push_back(report::side_of(set.experiment, set.records));
  report::label_sides(sides);
  return sides;
}

int cmd_merge(const std::vector<std::string>& dirs, const std::string& out_dir) {
  std::vector<ResultSet> sets;
  std::string error;
  if (!read_result_sets(dirs, "merge", sets)) return kExitUsage;
  if (sets.size() > 1) {
    // Different experiments of one scenario (simulated and live, two calibrations): each keeps
    // its section of results.jsonl, never pooled; the summary puts them side by side.
    const auto sides = sides_of(sets);
    std::string jsonl;
    std::size_t runs = 0;
    for (const auto& set : sets) {
      jsonl += report::format_jsonl(set.experiment, set.records);
      runs += set.records.size();
    }
    const std::string md = "# " + sets[0].experiment.scenario + " side by side\n\n" +
                           report::format_comparison_markdown(sides, {});
    std::cout << sets[0].experiment.scenario << ": " << sets.size() << " experiments side by side (" << runs
              << " runs from " << dirs.size() << " result sets; `racesim report FILE --results " << out_dir
              << "` adds the scenario's metrics and charts)\n\n" << md;
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    const std::string dir = out_dir + "/";
    return write_file_atomically(dir + "results.jsonl", jsonl) &&
                   write_file_atomically(dir + "summary.csv", report::format_comparison_csv(sides, {})) &&
                   write_file_atomically(dir + "report.md", md)
               ? kExitOk
               : kExitUsage;
  }
  const report::Experiment& whole = sets[0].experiment;
  const std::vector<run::RunRecord>& records = sets[0].records;
  const auto summaries = report::summarize(records);
  std::cout << whole.scenario << ": merged " << records.size() << " runs from " << dirs.size()
            << " result sets\n\n" << report::format_table(summaries);
  report::ResultsLog log;
  bool ok = log.start(out_dir, whole, error);
  for (std::size_t i = 0; ok && i < records.size(); ++i) ok = log.append(records[i], error);
  if (!ok || !log.finish(report::format_csv(summaries, whole.axes), report::format_markdown(whole.scenario, summaries), error)) {
    std::cerr << "racesim: merge: " << error << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// One JUnit test case: an expectation (or a scenario that does not load).
struct JUnitCase {
  std::string suite, name, failure;  // failure empty: passed
  bool skipped = false;              // not judged (its points were not run)
};

std::string junit_xml(const std::vector<JUnitCase>& cases) {
  std::map<std::string, std::vector<const JUnitCase*>> suites;
  std::size_t failures = 0, skipped = 0;
  for (const auto& c : cases) {
    suites[c.suite].push_back(&c);
    failures += !c.skipped && !c.failure.empty();
    skipped += c.skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"racesim check\" tests=\"" +
                    std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) + "\" skipped=\"" +
                    std::to_string(skipped) + "\">\n";
  for (const auto& [suite, list] : suites) {
    std::size_t f = 0, k = 0;
    for (const auto* c : list) {
      f += !c->skipped && !c->failure.empty();
      k += c->skipped;
    }
    out += "  <testsuite name=\"" + xml_escape(suite) + "\" tests=\"" + std::to_string(list.size()) +
           "\" failures=\"" + std::to_string(f) + "\" skipped=\"" + std::to_string(k) + "\">\n";
    for (const auto* c : list) {
      out += "    <testcase classname=\"" + xml_escape(suite) + "\" name=\"" + xml_escape(c->name) + "\"";
      if (c->skipped) {
        out += ">\n      <skipped message=\"" + xml_escape(c->failure) + "\"/>\n    </testcase>\n";
      } else if (c->failure.empty()) {
        out += "/>\n";
      } else {
        out += ">\n      <failure message=\"" + xml_escape(c->failure) + "\"/>\n    </testcase>\n";
      }
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

// One scenario file run for `check` and `report`: its study, its runs on the plan's seeds, their
// summaries and the expectations' verdicts; `input` is what its report is written from.
struct ScenarioResults {
  std::unique_ptr<scenario::Study> study;
  std::vector<run::RunRecord> records;
  std::vector<report::Side> sides;  // several experiments from stored results (report --results)
  report::ReportInput input;
};

// Summarizes r.records and judges the expectations on them.
void judge(ScenarioResults& r) {
  report::ReportInput& in = r.input;
  in.records = &r.records;
  in.summaries = report::summarize(r.records);
  in.verdicts = report::check_expectations(r.study->scenario, in.summaries, &r.records);
}

// Fills `r` for `file` from stored results (check --results, report --results) instead of
// running: the scenario is compiled with the results' own overrides, and must be the file they
// were run from (its content hash). Several experiments (a simulation and its live runs) are
// allowed only `side_by_side` (report): their comparison, with no verdicts. False, with the
// reason printed, otherwise.
bool read_scenario_results(const std::string& file, const std::vector<std::string>& dirs, const std::string& what,
                           bool side_by_side, ScenarioResults& r) {
  std::vector<ResultSet> sets;
  if (!read_result_sets(dirs, what, sets)) return false;
  if (sets.size() > 1 && !side_by_side) {
    std::cerr << "racesim: " << what << ": the results hold " << sets.size()
              << " experiments side by side; check judges one experiment's runs against the expectations: give the "
                 "results of one (racesim report FILE --results ... compares them)\n";
    return false;
  }
  const report::Experiment& whole = sets[0].experiment;
  r.study = load(file, {}, whole.overrides);
  if (!r.study) return false;
  const scenario::Scenario& sc = r.study->scenario;
  if (sc.content_hash != whole.content || sc.name != whole.scenario) {
    std::cerr << "racesim: " << what << ": the results in " << dirs.front() << " were run from "
              << (sc.name != whole.scenario ? "scenario '" + whole.scenario + "'" : "another version of " + file)
              << ", not from " << file << " as it is now (its content differs)\n";
    return false;
  }
  r.input.scenario = &sc;
  r.input.stem = std::filesystem::path(file).stem().string();
  if (sets.size() > 1) {
    r.sides = sides_of(sets);
    // The charts' series are the sides: each side's points relabelled "SIDE" or "SIDE @ POINT".
    for (std::size_t k = 0; k < sets.size(); ++k) {
      for (auto& rec : sets[k].records) {
        rec.point = rec.point.empty() ? r.sides[k].label : r.sides[k].label + " @ " + rec.point;
        r.records.push_back(std::move(rec));
      }
    }
    r.input.records = &r.records;
    r.input.summaries = report::summarize(r.records);
    r.input.sides = &r.sides;
    r.input.setup = std::to_string(sets.size()) + " experiments side by side, from stored results";
    std::cout << "comparing " << sets.size() << " experiments from " << dirs.size() << " result set"
              << (dirs.size() == 1 ? "" : "s") << ":";
    for (const auto& side : r.sides) std::cout << " " << side.label << " (" << side.setup << ");";
    std::cout << "\n";
    return true;
  }
  r.records = std::move(sets[0].records);
  r.input.setup = std::to_string(whole.seeds) + " seeds from " + std::to_string(whole.seed_start) +
                  " per strategy and point, policy " + whole.policy + ", judged from stored results (racesim " +
                  whole.version + ")";
  std::cout << "judging " << r.records.size() << " runs from " << dirs.size() << " result set"
            << (dirs.size() == 1 ? "" : "s") << ": " << whole.programs.size() << " programs x " << whole.seeds
            << " seeds from " << whole.seed_start << ", written by racesim " << whole.version << "\n";
  judge(r);
  return true;
}

// Runs the loaded study of `file` (r.study) over the plan's seeds and fills in the rest of `r`.
// False when the options do not fit it (a usage error; printed).
bool run_scenario(const std::string& file, const CommonOptions& o, ScenarioResults& r) {
  run::Plan plan;
  if (!make_plan(o, r.study->scenario, plan) || !fits_in_memory(*r.study, plan)) return false;
  r.records = run::run_all(r.study->program_pointers(), plan);
  report::ReportInput& in = r.input;
  in.scenario = &r.study->scenario;
  in.stem = std::filesystem::path(file).stem().string();
  in.setup = std::to_string(plan.seeds) + " seeds from " + std::to_string(plan.seed_start) +
             " per strategy and point, policy " + plan.options.policy.to_string();
  judge(r);
  return true;
}

// Reports are named by the file's name: two files of one name would overwrite each other.
bool stems_distinct(const std::vector<std::string>& files) {
  std::set<std::string> stems;
  for (const auto& file : files) {
    const std::string stem = std::filesystem::path(file).stem().string();
    if (!stems.insert(stem).second) {
      std::cerr << "racesim: report: two scenario files are named '" << stem
                << "' (reports are named by the file name)\n";
      return false;
    }
  }
  return true;
}

// DIR/<stem>.md (with its charts and CSV) for every scenario, then DIR/README.md.
bool write_reports(const std::vector<std::unique_ptr<ScenarioResults>>& results, const std::string& dir) {
  std::vector<report::ReportInput> inputs;
  std::string error;
  for (const auto& r : results) {
    if (!report::write_report(r->input, dir, error)) {
      std::cerr << "racesim: report: " << error << "\n";
      return false;
    }
    std::cout << "wrote " << dir << "/" << r->input.stem << ".md\n";
    inputs.push_back(r->input);
  }
  if (!report::write_report_index(inputs, dir, error)) {
    std::cerr << "racesim: report: " << error << "\n";
    return false;
  }
  std::cout << "wrote " << dir << "/README.md\n";
  return true;
}

int cmd_check(const std::vector<std::string>& files, const CommonOptions& common,
              const std::string& junit_file, const std::string& report_dir, bool ci,
              const std::vector<std::string>& points, const std::vector<std::string>& strategies,
              const std::vector<std::string>& results_dirs) {
  if (!report_dir.empty() && !stems_distinct(files)) return kExitUsage;
  if (!results_dirs.empty()) {
    if (files.size() != 1) {
      std::cerr << "racesim: check --results judges one scenario file's stored results; " << files.size()
                << " files were given\n";
      return kExitUsage;
    }
    if (ci || !points.empty() || !strategies.empty() || !common.overrides.empty() || common.seeds != 0 ||
        common.seed_start != 0 || common.policy != "fifo" || !common.shard.empty()) {
      std::cerr << "racesim: check --results judges the runs stored there, as they were run: --ci, --point, "
                   "--strategy, --set, --seeds, --seed-start, --policy and --shard choose runs to make, and "
                   "cannot be given with it\n";
      return kExitUsage;
    }
  }
  int passed = 0, failed = 0, skipped = 0;
  std::vector<JUnitCase> cases;
  std::vector<std::unique_ptr<ScenarioResults>> reports;
  for (const auto& file : files) {
    auto r = std::make_unique<ScenarioResults>();
    CommonOptions o = common;
    if (!results_dirs.empty()) {
      if (!read_scenario_results(file, results_dirs, "check --results", false, *r)) return kExitUsage;
    } else {
      r->study = load(file, strategies, o.overrides, points);
    }
    // --ci: the scenario's own subset for regression suites (its `ci:` section).
    if (ci && r->study) {
      const scenario::Scenario& sc = r->study->scenario;
      // The scenario's ci seeds cap --seeds too (a sanitizer tree asks for fewer of every scenario).
      if (sc.ci_seeds > 0) o.seeds = o.seeds == 0 ? static_cast<std::uint64_t>(sc.ci_seeds)
                                                  : std::min(o.seeds, static_cast<std::uint64_t>(sc.ci_seeds));
      if (!sc.ci_points.empty() && points.empty()) r->study = load(file, strategies, o.overrides, sc.ci_points);
    }
    if (!r->study) {
      std::cout << "FAIL " << file << ": the scenario does not load (errors above)\n";
      cases.push_back({file, "loads", "the scenario does not load"});
      ++failed;
      continue;
    }
    if (r->study->scenario.expect.empty()) {
      std::cout << "note " << file << ": no expectations to check\n";
      if (report_dir.empty()) continue;  // nothing to run it for
    }
    if (results_dirs.empty() && !run_scenario(file, o, *r)) return kExitUsage;
    for (const auto& v : r->input.verdicts) {
      const std::string who = v.point.empty() ? v.strategy : v.strategy + " @ " + v.point;
      std::cout << (v.skipped ? "SKIP " : v.passed ? "PASS " : "FAIL ") << file << " " << who << " " << v.expectation
                << ": " << v.detail << "\n";
      if (v.skipped) {
        ++skipped;
        cases.push_back({file, who + " " + v.expectation, v.detail, true});
        continue;
      }
      (v.passed ? passed : failed)++;
      cases.push_back({file, who + " " + v.expectation, v.passed ? "" : v.detail});
    }
    if (!report_dir.empty()) reports.push_back(std::move(r));
  }
  if (!junit_file.empty()) {
    if (!write_file_atomically(junit_file, junit_xml(cases))) return kExitUsage;
  }
  if (!report_dir.empty() && !write_reports(reports, report_dir)) return kExitUsage;
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped > 0) std::cout << ", " << skipped << " not run (points or strategies not selected)";
  std::cout << "\n";
  // A selection that judged nothing is not a pass.
  if (passed == 0 && failed == 0 && skipped > 0) {
    std::cout << "racesim: check: no expectation was judged: select the points and strategies they are at\n";
    return kExitFailed;
  }
  return failed ? kExitFailed : kExitOk;
}

int cmd_validate(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& file : files) {
    auto l = load(file, {});
    if (!l) {
      ++bad;
      continue;
    }
    std::cout << "ok " << file << ": " << l->scenario.name << ", " << l->scenario.ranks << " ranks, "
              << l->scenario.strategies.size() << " strategies";
    if (l->points.size() > 1) std::cout << " x " << l->points.size() << " sweep points";
    if (!l->scenario.faults.empty()) std::cout << ", " << l->scenario.faults.size() << " faults";
    std::cout << "\n";
    // The points, as --point takes them.
    if (l->points.size() > 1) {
      for (const auto& p : l->points) std::cout << "  point " << p->point << "\n";
    }
  }
  return bad ? kExitUsage : kExitOk;
}

int cmd_calibrate(const live::CalibrateOptions& o, const std::string& out) {
  live::Calibration c;
  std::string error;
  if (!live::calibrate(o, c, error)) {
    std::cerr << "racesim: live --calibrate: " << error << "\n";
    return kExitUsage;
  }
  const std::string text = live::format_overrides(o, c);
  if (out.empty()) {
    std::cout << text;
    return kExitOk;
  }
  if (!write_file_atomically(out, text)) return kExitUsage;
  std::cout << "wrote " << out << " (use it with --set-file " << out << ")\n";
  return kExitOk;
}

// racesim live FILE: every chosen strategy (and point) on real processes and a real directory,
// `runs` seeds each; a table per program (failure rate with its Wilson interval, makespan p50),
// and with --out the records (mode "live") as results.jsonl.
struct LiveCommand {
  std::string file;
  std::vector<std::string> strategies, points, overrides, set_files;
  std::string dir, out, resume;
  std::uint64_t runs = 20, seed_start = 0;
  double scale = 1.0;
};

int cmd_live(const LiveCommand& c) {
  if (c.file.empty()) {
    std::cerr << "racesim: live: a scenario FILE to run (or --calibrate to measure --dir)\n";
    return kExitUsage;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(c.dir, ec)) {
    std::cerr << "racesim: live --dir " << c.dir << ": not a directory\n";
    return kExitUsage;
  }
  auto l = load(c.file, c.strategies, c.overrides, c.points);
  if (!l) return kExitUsage;
  scenario::Diagnostics diags;
  for (const auto& p : l->programs) live::check_live(*p, diags);
  if (diags.count()) {
    std::cerr << diags.to_string();
    return kExitUsage;
  }
  live::LiveOptions o;
  o.file = c.file;
  o.overrides = c.overrides;
  o.dir = std::filesystem::absolute(c.dir).string();
  o.scale = c.scale;
  o.self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) {
    std::cerr << "racesim: live: cannot find this executable (/proc/self/exe): " << ec.message() << "\n";
    return kExitUsage;
  }
  o.stop = &g_stop;
  // A run's experiment, but its policy names the live mode and the file system: merge never
  // pools it with a simulation's (it puts them side by side).
  CommonOptions common;
  common.overrides = c.overrides;
  run::Plan plan;
  plan.seed_start = c.seed_start;
  plan.seeds = c.runs;
  report::Experiment experiment = experiment_of(*l, common, plan);
  char scale[64];
  std::snprintf(scale, sizeof scale, "%g", c.scale);
  experiment.policy = std::string("live:scale=") + scale + ":fs=" + live::file_system_name(o.dir);
  // --out keeps each run's record as it ends, so an interrupted or killed campaign keeps what ran
  // and --resume runs only what is missing (results_log.h).
  report::ResultsLog log;
  std::vector<run::RunRecord> records;  // every run's record, those --resume kept first
  std::set<std::pair<std::string, std::uint64_t>> done;  // (program label, seed) kept
  std::string error;
  const std::string log_dir = c.resume.empty() ? c.out : c.resume;
  if (!c.resume.empty()) {
    if (!log.resume(c.resume, experiment, records, error)) {
      std::cerr << "racesim: live --resume: " << error << "\n";
      return kExitUsage;
    }
    for (const auto& r : records) done.insert({report::program_label(r.point, r.strategy), r.seed});
    std::cerr << "racesim: resuming " << log.path() << ": " << records.size() << " of " << experiment.expected_runs()
              << " runs kept\n";
  } else if (!c.out.empty() && !log.start(c.out, experiment, error)) {
    std::cerr << "racesim: " << error << "\n";
    return kExitUsage;
  }
  live::clean_stale(o.dir, std::cerr);
  catch_interrupts();
  const std::size_t total = experiment.expected_runs();
  for (const auto& p : l->programs) {
    const std::string label = report::program_label(p->scenario->point, p->strategy->name);
    for (std::uint64_t s = c.seed_start; s < c.seed_start + c.runs && !g_stop.load() && error.empty(); ++s) {
      if (done.count({label, s})) continue;
      run::RunRecord r = live::run_live(*p, s, o, std::cerr);
      // A run cut by Ctrl-C is no result of the scenario: it is dropped, and --resume runs it again.
      if (g_stop.load()) break;
      if (!log_dir.empty() && !log.append(r, error)) break;
      records.push_back(std::move(r));
      if (isatty(STDERR_FILENO)) {
        std::fprintf(stderr, "\r%zu/%zu live runs", records.size(), total);
        std::fflush(stderr);
      }
    }
  }
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
  std::error_code ec2;
  std::filesystem::remove_all(std::filesystem::path(o.dir) / live::run_dir_name(static_cast<long>(getpid())), ec2);
  if (!log_dir.empty() && error.empty()) log.flush(error);
  if (!error.empty()) {
    std::cerr << "racesim: live: " << error << "\n";
    return kExitUsage;
  }
  if (!report::order_records(experiment, records, error)) {
    std::cerr << "racesim: internal error: " << error << "\n";
    return kExitInternal;
  }
  // The table: one line per program.
  std::cout << l->scenario.name << ", live in " << o.dir << " (" << live::file_system_name(o.dir) << ") at time scale "
            << c.scale << ":\n";
  for (const auto& p : l->programs) {
    std::uint64_t n = 0, failed = 0;
    std::vector<double> makespans;
    std::map<std::string, int> checks;
    for (const auto& r : records) {
      if (r.strategy != p->strategy->name || r.point != p->scenario->point) continue;
      ++n;
      makespans.push_back(kernel::to_seconds(r.makespan));
      if (run::failed(r.outcome)) {
        ++failed;
        ++checks[r.check];
      }
    }
    const auto w = report::wilson_interval(failed, n);
    std::string why;
    for (const auto& [check, k] : checks) why += (why.empty() ? " (" : ", ") + check + " " + std::to_string(k);
    if (!why.empty()) why += ")";
    std::printf("  %-40s %4llu runs  %4llu failed  rate %.3f [%.3f, %.3f]  makespan p50 %.1f s%s\n",
                report::program_label(p->scenario->point, p->strategy->name).c_str(),
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(failed),
                n ? static_cast<double>(failed) / static_cast<double>(n) : 0.0, w.lo, w.hi,
                makespans.empty() ? 0.0 : report::percentile(makespans, 50), why.c_str());
  }
  std::fflush(stdout);
  for (const auto& r : records) {
    if (r.outcome == run::Outcome::kError) {
      std::cerr << "racesim live: " << r.strategy << " seed " << r.seed << ": " << r.check << ": " << r.diagnosis << "\n";
    }
  }
  if (g_interrupt.load()) {
    std::cerr << "racesim: live: interrupted; " << records.size() << " of " << total << " runs done";
    if (!log_dir.empty()) {
      std::cerr << ", kept in " << log.path() << "; to run the rest, repeat the command with --resume " << log_dir
                << " in place of --out";
    }
    std::cerr << "\n";
    return 128 + g_interrupt.load();
  }
  if (!log_dir.empty()) {
    const auto summaries = report::summarize(records);
    if (!log.finish(report::format_csv(summaries, experiment.axes), report::format_markdown(experiment.scenario, summaries),
                    error)) {
      std::cerr << "racesim: live: " << error << "\n";
      return kExitUsage;
    }
  }
  return kExitOk;
}

int cmd_replay(const std::string& file, const std::string& strategy, std::uint64_t seed,
               const std::string& policy_text, const std::string& trace_file,
               const std::vector<std::string>& overrides, const std::string& point) {
  auto l = load(file, {strategy}, overrides, point.empty() ? std::vector<std::string>{} : std::vector<std::string>{point});
  if (!l) return kExitUsage;
  auto policy = kernel::PolicySpec::parse(policy_text);
  if (!policy) {
    std::cerr << "racesim: --policy: " << policy.message() << "\n";
    return kExitUsage;
  }
  run::RunOptions opts;
  opts.policy = *policy;
  std::ostringstream trace;  // written whole once the run is done
  std::string deadlock;
  const auto rec = run::run_one(*l->programs[0], seed, opts, trace_file.empty() ? nullptr : &trace,
                                &deadlock);
  const std::string& at = l->programs[0]->scenario->point;
  std::cout << l->scenario.name << " / " << strategy << (at.empty() ? "" : " @ " + at) << " / seed " << seed << ": "
            << run::to_string(rec.outcome) << " at " << kernel::format_duration(rec.makespan) << " ("
            << rec.events << " events, trace hash " << run::trace_hash_text(rec.trace_hash) << ")\n";
  if (!rec.diagnosis.empty()) std::cout << rec.check << ": " << rec.diagnosis << "\n";
  if (!deadlock.empty()) std::cout << "\n" << deadlock;
  for (const auto& [name, v] : rec.metrics) std::cout << "  " << name << " = " << v << "\n";
  if (!trace_file.empty()) {
    if (!write_file_atomically(trace_file, trace.str())) return kExitUsage;
    std::cout << "Chrome trace written to " << trace_file << "\n";
  }
  return run::failed(rec.outcome) ? kExitFailed : kExitOk;
}

int cmd_report(const std::vector<std::string>& files, const CommonOptions& o, const std::string& dir,
               const std::vector<std::string>& results_dirs) {
  if (!stems_distinct(files)) return kExitUsage;
  std::vector<std::unique_ptr<ScenarioResults>> results;
  if (!results_dirs.empty()) {
    if (files.size() != 1) {
      std::cerr << "racesim: report --results reports one scenario file's stored results; " << files.size()
                << " files were given\n";
      return kExitUsage;
    }
    if (!o.overrides.empty() || o.seeds != 0 || o.seed_start != 0 || o.policy != "fifo" || !o.shard.empty()) {
      std::cerr << "racesim: report --results reports the runs stored there, as they were run: --set, --seeds, "
                   "--seed-start, --policy and --shard choose runs to make, and cannot be given with it\n";
      return kExitUsage;
    }
    auto r = std::make_unique<ScenarioResults>();
    if (!read_scenario_results(files[0], results_dirs, "report --results", true, *r)) return kExitUsage;
    results.push_back(std::move(r));
    return write_reports(results, dir) ? kExitOk : kExitUsage;
  }
  for (const auto& file : files) {
    auto r = std::make_unique<ScenarioResults>();
    r->study = load(file, {}, o.overrides);
    if (!r->study || !run_scenario(file, o, *r)) return kExitUsage;
    results.push_back(std::move(r));
  }
  return write_reports(results, dir) ? kExitOk : kExitUsage;
}

int cmd_list() {
  std::cout << "primitives:\n";
  for (const auto* p : scenario::builtin_registry().all()) std::cout << "  " << p->help << "\n";
  std::cout << "faults (faults: [{kind: K, name: N, on: RANKS | {ranks: RANKS, mount: M, comm: C, "
               "link: intra|inter}, probability: P, ARG: VALUE}]):\n";
  for (const auto* f : scenario::builtin_registry().all_faults()) {
    std::string args;
    for (const auto& a : f->args) {
      args += (args.empty() ? "" : ", ") + a.name + ": " +
              (a.default_value.empty() ? std::string("a ") + scenario::to_string(a.unit)
                                       : a.default_value);
    }
    std::string aim;
    for (auto k : f->aimable) aim += std::string(aim.empty() ? "; aim at a " : " or a ") + kernel::to_string(k);
    std::cout << "  " << f->name << " {" << args << "} - " << f->help << aim << "\n";
  }
  std::cout << "checks (hard: always on; soft: on when `checks:` lists it or is absent):\n";
  for (const auto* c : scenario::builtin_registry().all_checks()) {
    std::cout << "  " << c->name << " (" << (c->hard ? "hard" : "soft") << ") - " << c->description << "\n";
  }
  std::cout << "policies:\n"
               "  fifo, random, pct[:DEPTH[:STEPS]]\n";
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"racesim: deterministic simulation of distributed-runtime race conditions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("racesim ") + report::kRacesimVersion);
  CommonOptions common;

  std::string run_file, format = "table", out_dir;
  std::vector<std::string> run_strategies;
  auto* run = app.add_subcommand("run", "run every strategy over seeds and compare them");
  run->add_option("file", run_file, "scenario file")->required();
  run->add_option("--strategy,-s", run_strategies, "only these strategies (repeatable)");
  std::vector<std::string> run_points;
  run->add_option("--point", run_points,
                  "only these sweep points: a label as run prints it, or KEY=VALUE filters (repeatable; a point "
                  "matches when it has every filter's value)");
  run->add_option("--format", format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  auto* out_opt = run->add_option("--out", out_dir,
                                  "also write results.jsonl (as runs finish), summary.csv and report.md here");
  std::string resume_dir;
  run->add_option("--resume", resume_dir,
                  "finish an interrupted run --out DIR: run only the runs DIR/results.jsonl lacks "
                  "(same scenario and options)")
      ->excludes(out_opt);
  add_common(run, common);

  std::vector<std::string> check_files;
  std::string junit_file;
  auto* check = app.add_subcommand("check", "run every scenario's expectations (exit 1 if any fails)");
  check->add_option("files", check_files, "scenario files")->required();
  check->add_option("--junit", junit_file, "also write the results as JUnit XML here");
  std::vector<std::string> check_points;
  check->add_option("--point", check_points,
                    "only these sweep points, as run --point takes them (repeatable; with several files, each must "
                    "have them)");
  std::vector<std::string> check_strategies;
  check->add_option("--strategy,-s", check_strategies,
                    "only these strategies (repeatable); expectations of the others are reported as not run");
  bool check_ci = false;
  check->add_flag("--ci", check_ci,
                  "run each scenario's `ci:` subset (its points and seeds for regression suites) where it has one");
  std::string check_report;
  check->add_option("--report", check_report,
                    "also write the reports `racesim report` writes, from the same runs, here");
  std::vector<std::string> check_results;
  check->add_option("--results", check_results,
                    "judge the runs stored in these result directories (run --out DIR, or the shards of one "
                    "run: run --shard I/N --out DIR) instead of running: one scenario file, the one they were run "
                    "from (repeatable)");
  add_common(check, common);

  std::vector<std::string> validate_files;
  auto* validate = app.add_subcommand("validate", "load and compile scenario files, report errors");
  validate->add_option("files", validate_files, "scenario files")->required();

  std::string replay_file, replay_strategy, trace_file, replay_policy = "fifo";
  std::uint64_t replay_seed = 0;
  auto* replay = app.add_subcommand("replay", "run one seed, explain the outcome, write a trace");
  replay->add_option("file", replay_file, "scenario file")->required();
  replay->add_option("--strategy,-s", replay_strategy, "strategy")->required();
  replay->add_option("--seed", replay_seed, "seed")->required();
  replay->add_option("--policy", replay_policy, "schedule policy");
  replay->add_option("--trace", trace_file, "write a Chrome trace (JSON) here");
  std::vector<std::string> replay_overrides;
  std::string replay_point;
  replay->add_option("--set", replay_overrides, "override KEY=VALUE, as for run (repeatable)");
  std::vector<std::string> replay_set_files;
  replay->add_option("--set-file", replay_set_files, "overrides from a file, as for run (repeatable)");
  replay->add_option("--point", replay_point,
                     "the sweep point, by its label as run prints it or a KEY=VALUE filter (default: the first)");

  std::vector<std::string> merge_dirs;
  std::string merge_out;
  auto* merge = app.add_subcommand(
      "merge", "join the results of shards (run --shard I/N --out DIR); different experiments of one scenario "
               "(simulated and live) are kept apart, side by side");
  merge->add_option("dirs", merge_dirs, "result directories")->required();
  merge->add_option("--out", merge_out, "write the merged results.jsonl, summary.csv and report.md here")
      ->required();

  std::vector<std::string> report_files;
  std::string report_out;
  auto* report_cmd = app.add_subcommand(
      "report", "run scenarios and write Markdown reports with charts (gnuplot) and CSV");
  report_cmd->add_option("files", report_files, "scenario files")->required();
  report_cmd->add_option("--out", report_out, "directory for the reports")->required();
  std::vector<std::string> report_results;
  report_cmd->add_option("--results", report_results,
                         "report stored results (DIR/results.jsonl) instead of running; several experiments (a "
                         "simulation and its live runs, a merge of them) are put side by side (repeatable)");
  add_common(report_cmd, common);

  auto* list = app.add_subcommand("list", "list primitives, faults, checks and policies");

  live::CalibrateOptions calibrate_options;
  bool calibrate = false;
  std::string calibrate_out;
  LiveCommand live_options;
  std::string worker_segment;
  int worker_rank = -1;
  auto* live_cmd = app.add_subcommand(
      "live", "run a scenario on real processes and a real directory (one process per rank), or measure a "
              "directory for the model (--calibrate)");
  live_cmd->add_option("file", live_options.file, "scenario file (not with --calibrate)");
  live_cmd->add_option("--strategy,-s", live_options.strategies, "strategies to run (repeatable; default: all)");
  live_cmd->add_option("--runs", live_options.runs, "runs (seeds) per strategy and point")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  live_cmd->add_option("--seed-start", live_options.seed_start, "first seed (the same seeds sample the same values as run)");
  live_cmd->add_option("--time-scale", live_options.scale,
                       "real seconds per simulated second (0.01: a 40 s compile sleeps 0.4 s); with --calibrate, "
                       "the override file describes the directory as live runs at this scale see it")
      ->check(CLI::Range(1e-6, 1000.0));
  live_cmd->add_option("--point", live_options.points, "only these sweep points, as run --point takes them (repeatable)");
  live_cmd->add_option("--set", live_options.overrides, "override KEY=VALUE, as for run (repeatable)");
  live_cmd->add_option("--set-file", live_options.set_files, "overrides from a file, as for run (repeatable)");
  live_cmd->add_option("--worker", worker_segment, "(internal) run one rank of the live run on this board");
  live_cmd->add_option("--rank", worker_rank, "(internal) the rank a --worker runs");
  live_cmd->add_flag("--calibrate", calibrate, "measure --dir's file system and the timer; write overrides");
  live_cmd->add_option("--dir", calibrate_options.dir,
                       "the directory: where live runs put their files, or the one --calibrate measures");
  live_cmd->add_option("--mount", calibrate_options.mount,
                       "--calibrate: the scenario's mount the overrides set (platform.storage.MOUNT)");
  live_cmd->add_option("--out", calibrate_out,
                       "a run: keep results.jsonl (mode live) in this directory as runs end; --calibrate: write the "
                       "override file here (default: standard output)");
  live_cmd->add_option("--resume", live_options.resume,
                                           "finish an interrupted live run kept in this directory (the same "
                                           "command, with --resume DIR in place of --out DIR)");
  live_cmd->add_option("--streams", calibrate_options.streams, "concurrent writers for the aggregate bandwidth")
      ->check(CLI::Range(1, 64));
  live_cmd->add_option("--stream-bytes", calibrate_options.stream_bytes, "bytes each stream writes")
      ->check(CLI::Range(std::uint64_t{1} << 20, std::uint64_t{16} << 30));
  live_cmd->add_option("--samples", calibrate_options.meta_samples, "samples per metadata operation")
      ->check(CLI::Range(10, 100'000));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // --version is a "success" CLI11 reports this way
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (!read_set_files(common.set_files, common.overrides) || !read_set_files(replay_set_files, replay_overrides) ||
      !read_set_files(live_options.set_files, live_options.overrides)) {
    return kExitUsage;
  }
  try {
    if (live_cmd->parsed() && !worker_segment.empty()) return live::worker_main(worker_segment, worker_rank);
    if (live_cmd->parsed() && calibrate) {
      if (!live_options.file.empty() || calibrate_options.dir.empty() || calibrate_options.mount.empty() ||
          !live_options.resume.empty()) {
        std::cerr << "racesim: live --calibrate takes --dir and --mount, and no scenario file (nor --resume)\n";
        return kExitUsage;
      }
      calibrate_options.time_scale = live_options.scale;
      return cmd_calibrate(calibrate_options, calibrate_out);
    }
    if (live_cmd->parsed()) {
      if (calibrate_options.dir.empty() || !calibrate_options.mount.empty()) {
        std::cerr << "racesim: live FILE takes --dir (where the runs' files go); --mount is for --calibrate\n";
        return kExitUsage;
      }
      if (!live_options.resume.empty() && !calibrate_out.empty()) {
        std::cerr << "racesim: live: --resume DIR continues the results kept in DIR; it takes the place of --out\n";
        return kExitUsage;
      }
      live_options.dir = calibrate_options.dir;
      live_options.out = calibrate_out;
      return cmd_live(live_options);
    }
    if (run->parsed()) return cmd_run(run_file, run_strategies, run_points, common, format, out_dir, resume_dir);
    if (check->parsed()) return cmd_check(check_files, common, junit_file, check_report, check_ci, check_points, check_strategies,
                                           check_results);
    if (validate->parsed()) return cmd_validate(validate_files);
    if (replay->parsed()) return cmd_replay(replay_file, replay_strategy, replay_seed, replay_policy, trace_file,
                                            replay_overrides, replay_point);
    if (merge->parsed()) return cmd_merge(merge_dirs, merge_out);
    if (report_cmd->parsed()) return cmd_report(report_files, common, report_out, report_results);
    if (list->parsed()) return cmd_list();
  } catch (const std::exception& e) {
    std::cerr << "racesim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitUsage;
}
