// Result files read back, one scenario's results judged, reports written (scenario_results.h).
#include "src/cli/scenario_results.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "src/report/results_file.h"
#include "src/scenario/file/input_file.h"

namespace racesim::cli {

bool read_result_sets(const std::vector<std::string>& dirs, const std::string& what, std::vector<ResultSet>& sets) {
  std::vector<report::Experiment> parts;
  std::vector<std::string> names;
  std::vector<std::vector<run::RunRecord>> part_records;
  std::string error;
  for (const auto& dir : dirs) {
    const std::string path = dir + "/results.jsonl";
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec) || !std::filesystem::exists(path, ec)) {
      std::cerr << "racesim: " << what << ": "
                << (!std::filesystem::exists(dir, ec) ? dir + ": no such directory (a shard that has not run yet?)"
                                                      : path + ": no such file (" + dir + " is not a run's --out)")
                << "\n";
      return false;
    }
    const auto read = scenario::read_input_file(path, report::kMaxResultsFileBytes, "a results file");
    if (!read) {
      std::cerr << "racesim: " << what << ": " << path << ": " << read.message() << "\n";
      return false;
    }
    const std::string& text = *read;
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

std::vector<report::Side> sides_of(const std::vector<ResultSet>& sets) {
  std::vector<report::Side> sides;
  for (const auto& set : sets) sides.push_back(report::side_of(set.experiment, set.records));
  report::label_sides(sides);
  return sides;
}

bool refuse_run_choices(const std::string& what, const std::string& verb, const std::vector<std::string>& given) {
  if (given.empty()) return true;
  std::cerr << "racesim: " << what << " " << verb << " the runs stored there, as they were run: " << flag_list(given)
            << (given.size() == 1 ? " chooses" : " choose") << " runs to make, and cannot be given with it\n";
  return false;
}

namespace {

// Summarizes r.records and judges the expectations on them.
void judge(ScenarioResults& r) {
  report::ReportInput& in = r.input;
  in.records = &r.records;
  in.summaries = report::summarize(r.records);
  in.verdicts = report::check_expectations(r.study->scenario, in.summaries, &r.records);
}

}  // namespace

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
  r.study = load_study(file, {}, overrides_of(whole.overrides));
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

}  // namespace racesim::cli
