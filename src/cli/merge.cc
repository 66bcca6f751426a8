// racesim merge DIR... --out DIR: join the results of shards into the results of one run;
// different experiments of one scenario (simulated and live, two calibrations) are kept apart,
// side by side, never pooled. Gaps, damaged files and other scenarios are refused.
#include <filesystem>
#include <iostream>
#include <memory>

#include "src/cli/command.h"
#include "src/cli/options.h"
#include "src/cli/scenario_results.h"
#include "src/report/results_file.h"
#include "src/report/results_log.h"

namespace racesim::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out;
};

// Several experiments: each keeps its section of results.jsonl; the summary puts them side by side.
int merge_side_by_side(const std::vector<ResultSet>& sets, const MergeOptions& o) {
  const auto sides = sides_of(sets);
  std::string jsonl;
  std::size_t runs = 0;
  for (const auto& set : sets) {
    jsonl += report::format_jsonl(set.experiment, set.records);
    runs += set.records.size();
  }
  const std::string md =
      "# " + sets[0].experiment.scenario + " side by side\n\n" + report::format_comparison_markdown(sides, {});
  std::cout << sets[0].experiment.scenario << ": " << sets.size() << " experiments side by side (" << runs
            << " runs from " << o.dirs.size() << " result sets; `racesim report FILE --results " << o.out
            << "` adds the scenario's metrics and charts)\n\n"
            << md;
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  const std::string dir = o.out + "/";
  return write_file_atomically(dir + "results.jsonl", jsonl) &&
                 write_file_atomically(dir + "summary.csv", report::format_comparison_csv(sides, {})) &&
                 write_file_atomically(dir + "report.md", md)
             ? kExitOk
             : kExitUsage;
}

int merge_command(const MergeOptions& o) {
  if (!output_is_no_input("merge", o.out, o.dirs)) return kExitUsage;
  std::vector<ResultSet> sets;
  if (!read_result_sets(o.dirs, "merge", sets)) return kExitUsage;
  if (sets.size() > 1) return merge_side_by_side(sets, o);
  const report::Experiment& whole = sets[0].experiment;
  const std::vector<run::RunRecord>& records = sets[0].records;
  const auto summaries = report::summarize(records);
  std::cout << whole.scenario << ": merged " << records.size() << " runs from " << o.dirs.size()
            << " result sets\n\n"
            << report::format_table(summaries);
  report::ResultsLog log;
  std::string error;
  bool ok = log.start(o.out, whole, error);
  for (std::size_t i = 0; ok && i < records.size(); ++i) ok = log.append(records[i], error);
  if (!ok || !log.finish(report::format_csv(summaries, whole.axes), report::format_markdown(whole.scenario, summaries),
                         error)) {
    std::cerr << "racesim: merge: " << error << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

Command add_merge_command(CLI::App& parent) {
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = parent.add_subcommand(
      "merge", "join the results of shards (run --shard I/N --out DIR); different experiments of one scenario "
               "(simulated and live) are kept apart, side by side");
  cmd->add_option("dirs", o->dirs, "result directories")->required();
  cmd->add_option("--out", o->out, "write the merged results.jsonl, summary.csv and report.md here")->required();
  return {cmd, [o] { return merge_command(*o); }};
}

}  // namespace racesim::cli
