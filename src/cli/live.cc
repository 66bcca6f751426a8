// racesim live FILE --dir DIR: every chosen strategy (and point) on real processes and a real
// directory, `--runs` seeds each, compared in the table `run` prints; with --out the records (mode
// "live") are kept as runs end, --resume finishes an interrupted campaign. `live --calibrate`
// measures a directory for the model instead; `live --fit-costs` fits a mount's costs to what
// stored live runs paid (cost_fit.h); `live --worker` is one rank of a live run (the supervisor
// starts it).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <map>
#include <set>

#include "src/cli/campaign.h"
#include "src/cli/command.h"
#include "src/cli/interrupt.h"
#include "src/cli/options.h"
#include "src/live/board.h"
#include "src/cli/scenario_results.h"
#include "src/live/calibrate.h"
#include "src/live/cost_fit.h"
#include "src/live/dir_probe.h"
#include "src/live/fs_type.h"
#include "src/live/supervisor.h"
#include "src/live/worker.h"

namespace racesim::cli {
namespace {

struct LiveCommandOptions {
  std::string file;
  std::vector<std::string> strategies, points;
  OverrideOptions overrides;
  std::string out;     // a run: where results are kept; --calibrate: the override file
  std::string resume;
  std::string shard;  // --shard I/N or auto
  std::string progress = "auto";
  std::uint64_t runs = 20, seed_start = 0;
  double scale = 1.0;
  // --calibrate, and what it shares with a run (--dir)
  bool calibrate = false;
  live::CalibrateOptions calibration;
  // --fit-costs DIR: the results of live runs to fit a mount's costs to
  std::string fit_costs;
  // --worker SEGMENT --rank R: one rank of a live run
  std::string worker_segment;
  int worker_rank = -1;
};

// An override file (a calibration's, fitted costs'): to `out`, or standard output when empty.
int put_overrides(const std::string& text, const std::string& out, const std::string& use) {
  if (out.empty()) {
    std::cout << text;
    return kExitOk;
  }
  if (!write_file_atomically(out, text)) return kExitUsage;
  std::cout << "wrote " << out << " (use it with --set-file " << out << use << ")\n";
  return kExitOk;
}

int calibrate_command(live::CalibrateOptions o, double scale, const std::string& out) {
  o.time_scale = scale;
  live::Calibration c;
  std::string error;
  if (!live::calibrate(o, c, error)) {
    std::cerr << "racesim: live --calibrate: " << error << "\n";
    return kExitUsage;
  }
  return put_overrides(live::format_overrides(o, c), out, "");
}

int fit_costs_command(const std::string& dir, const std::string& mount, const std::string& out) {
  const std::string what = "live --fit-costs " + dir;
  std::vector<ResultSet> sets;
  if (!read_result_sets({dir}, what, sets)) return kExitUsage;
  const report::Experiment& e = sets.front().experiment;
  if (sets.size() != 1 || !report::is_live(e)) {
    std::cerr << "racesim: " << what << ": expected the results of one live experiment (racesim live --out), found "
              << (sets.size() != 1 ? std::to_string(sets.size()) + " experiments side by side"
                                   : "a simulation's (policy " + e.policy + ")")
              << ": costs are fitted to what live runs paid\n";
    return kExitUsage;
  }
  live::CostSumsByKind sums;
  std::map<std::string, live::CostSumsByKind> by_program;
  std::string error;
  if (!live::cost_sums_of(sets.front().records, mount, sums, error, &by_program)) {
    std::cerr << "racesim: " << what << "/results.jsonl: " << error << "\n";
    return kExitUsage;
  }
  if (sums.empty()) {
    std::cerr << "racesim: " << what << "/results.jsonl: no run recorded the costs of mount '" << mount
              << "' (fs." << mount << ".cost.*: a live run records them for each mount it reads or writes)\n";
    return kExitUsage;
  }
  live::CostSource source;
  source.command = "racesim " + what + " --mount " + mount;
  source.runs = std::to_string(sets.front().records.size()) + " runs of " + std::to_string(e.programs.size()) +
                " program" + (e.programs.size() == 1 ? "" : "s") + " (" + e.policy + ")";
  const std::string scale = report::live_field(e, "scale");
  source.scale = scale.empty() ? 1.0 : std::strtod(scale.c_str(), nullptr);
  if (!(source.scale > 0)) source.scale = 1.0;
  source.write_back = live::local_write_back(report::live_field(e, "fs"));
  std::map<std::string, live::CostLine> lines;
  for (const auto& [kind, s] : sums) lines[kind] = live::fit_cost_line(s);
  return put_overrides(live::format_cost_overrides(mount, source, lines, by_program), out,
                       ", after the calibration's");
}

int live_runs_command(const LiveCommandOptions& c) {
  const std::string& dir = c.calibration.dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    std::cerr << "racesim: live --dir " << dir << ": not a directory\n";
    return kExitUsage;
  }
  // Before any run: a directory where a run cannot make its files would fail every run, and
  // the harness's failure would read as each strategy's. SIGINT and SIGTERM are caught from
  // here on, so that one during the probe does not leave its files behind.
  catch_interrupts();
  if (const std::string why = live::probe_dir(dir); !why.empty()) {
    std::cerr << "racesim: live --dir " << dir << ": " << why
              << "; a live run creates, writes, locks, renames and removes files there\n";
    return kExitUsage;
  }
  if (stop_requested().load()) {
    std::cerr << "racesim: live: interrupted before any run\n";
    return 128 + interrupt_signal();
  }
  Overrides overrides;
  if (!read_overrides(c.overrides, overrides)) return kExitUsage;
  auto study = load_study(c.file, c.strategies, overrides, c.points);
  if (!study) return kExitUsage;
  scenario::Diagnostics diags;
  for (const auto& p : study->programs) live::check_live(*p, diags);
  if (diags.count()) {
    std::cerr << diags.to_string();
    return kExitUsage;
  }
  live::LiveOptions o;
  o.file = c.file;
  o.overrides = overrides.texts;
  o.dir = std::filesystem::absolute(dir).string();
  o.scale = c.scale;
  o.self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) {
    std::cerr << "racesim: live: cannot find this executable (/proc/self/exe): " << ec.message() << "\n";
    return kExitUsage;
  }
  o.stop = &stop_requested();
  // A run's experiment, but its policy names the live mode and the file system: merge never
  // pools it with a simulation's (it puts them side by side).
  if (!seeds_fit(c.seed_start, c.runs)) return kExitUsage;
  run::Plan plan;
  plan.seed_start = c.seed_start;
  plan.seeds = c.runs;
  if (!c.shard.empty() && !choose_shard(c.shard, plan)) return kExitUsage;
  report::Experiment experiment = experiment_of(*study, overrides, plan);
  char scale[64];
  std::snprintf(scale, sizeof scale, "%g", c.scale);
  experiment.policy = std::string("live:scale=") + scale + ":fs=" + live::file_system_name(o.dir);
  live::clean_stale(o.dir, std::cerr);
  Campaign campaign("live: ", std::move(experiment));
  if (!campaign.open(c.out, c.resume)) return kExitUsage;
  std::set<std::pair<std::string, std::uint64_t>> done;  // (program label, seed) kept
  for (const auto& r : campaign.kept()) done.insert({report::program_label(r.point, r.strategy), r.seed});
  const std::size_t total = campaign.experiment().expected_runs();
  std::vector<run::RunRecord> records;  // the runs made now
  const auto progress = progress_reporter(c.progress);
  for (const auto& p : study->programs) {
    const std::string label = report::program_label(p->scenario->point, p->strategy->name);
    for (std::uint64_t s = c.seed_start; s < c.seed_start + c.runs && !campaign.stopping(); ++s) {
      if (!run::in_shard(s - c.seed_start, plan.shard_index, plan.shard_count)) continue;
      if (done.count({label, s})) continue;
      run::RunRecord r;
      try {
        r = live::run_live(*p, s, o, std::cerr);
      } catch (const live::LiveError& e) {
        // The harness failed, not the strategy: no record of this run is kept (the runs made so
        // far are, and --resume continues from them).
        std::filesystem::remove_all(std::filesystem::path(o.dir) / live::run_dir_name(static_cast<long>(getpid())), ec);
        std::cerr << "racesim: live: " << label << " seed " << s << ": the harness failed (not the strategy): "
                  << e.what() << "\n";
        return kExitInternal;
      }
      // A run cut by Ctrl-C is no result of the scenario: it is dropped, and --resume runs it again.
      if (stop_requested().load()) break;
      campaign.keep(r);
      records.push_back(std::move(r));
      if (progress) progress(records.size() + done.size(), total);
    }
  }
  std::filesystem::remove_all(std::filesystem::path(o.dir) / live::run_dir_name(static_cast<long>(getpid())), ec);
  if (auto code = campaign.collect(records)) return *code;
  const auto summaries = report::summarize(records);
  std::cout << study->scenario.name << ", live in " << o.dir << " (" << live::file_system_name(o.dir)
            << ") at time scale " << c.scale << ", " << c.runs << " runs from " << c.seed_start
            << (plan.shard_count > 1 ? ", shard " + std::to_string(plan.shard_index) + "/" + std::to_string(plan.shard_count) : "")
            << "\n\n"
            << report::format_table(summaries);
  std::cout.flush();
  for (const auto& r : records) {
    if (r.outcome == run::Outcome::kError) {
      std::cerr << "racesim live: " << r.strategy << " seed " << r.seed << ": " << r.check << ": " << r.diagnosis << "\n";
    }
  }
  return campaign.finish(summaries) ? kExitOk : kExitUsage;
}

int live_command(const LiveCommandOptions& c) {
  if (!c.worker_segment.empty()) return live::worker_main(c.worker_segment, c.worker_rank);
  if (!c.fit_costs.empty()) {
    if (c.calibrate || !c.file.empty() || c.calibration.mount.empty() || !c.calibration.dir.empty() ||
        !c.resume.empty() || !c.shard.empty()) {
      std::cerr << "racesim: live --fit-costs DIR takes --mount (and --out), and no scenario file, --dir, "
                   "--calibrate, --resume or --shard\n";
      return kExitUsage;
    }
    return fit_costs_command(c.fit_costs, c.calibration.mount, c.out);
  }
  if (c.calibrate) {
    if (!c.file.empty() || c.calibration.dir.empty() || c.calibration.mount.empty() || !c.resume.empty() ||
        !c.shard.empty()) {
      std::cerr << "racesim: live --calibrate takes --dir and --mount, and no scenario file (nor --resume or --shard)\n";
      return kExitUsage;
    }
    return calibrate_command(c.calibration, c.scale, c.out);
  }
  if (c.file.empty()) {
    std::cerr << "racesim: live: a scenario FILE to run (or --calibrate to measure --dir)\n";
    return kExitUsage;
  }
  if (c.calibration.dir.empty() || !c.calibration.mount.empty()) {
    std::cerr << "racesim: live FILE takes --dir (where the runs' files go); --mount is for --calibrate\n";
    return kExitUsage;
  }
  if (!c.resume.empty() && !c.out.empty()) {
    std::cerr << "racesim: live: --resume DIR continues the results kept in DIR; it takes the place of --out\n";
    return kExitUsage;
  }
  return live_runs_command(c);
}

}  // namespace

Command add_live_command(CLI::App& parent) {
  auto o = std::make_shared<LiveCommandOptions>();
  auto* cmd = parent.add_subcommand(
      "live", "run a scenario on real processes and a real directory (one process per rank), or measure a "
              "directory for the model (--calibrate)");
  cmd->add_option("file", o->file, "scenario file (not with --calibrate)");
  cmd->add_option("--strategy,-s", o->strategies, "strategies to run (repeatable; default: all)");
  cmd->add_option("--runs", o->runs, "runs (seeds) per strategy and point")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}));
  add_seed_option(cmd, "--seed-start", o->seed_start, "first seed (the same seeds sample the same values as run)");
  cmd->add_option("--time-scale", o->scale,
                  "real seconds per simulated second (0.01: a 40 s compile sleeps 0.4 s); with --calibrate, "
                  "the override file describes the directory as live runs at this scale see it")
      ->check(number_in(1e-6, 1000.0));
  cmd->add_option("--point", o->points, "only these sweep points, as run --point takes them (repeatable)");
  add_override_options(cmd, o->overrides);
  add_shard_option(cmd, o->shard);
  add_progress_option(cmd, o->progress);
  cmd->add_option("--worker", o->worker_segment, "(internal) run one rank of the live run on this board");
  cmd->add_option("--rank", o->worker_rank, "(internal) the rank a --worker runs");
  cmd->add_flag("--calibrate", o->calibrate, "measure --dir's file system and the timer; write overrides");
  cmd->add_option("--fit-costs", o->fit_costs,
                  "fit --mount's costs (each kind of read and write: fixed part and rate) to the live runs kept in "
                  "this directory; write overrides (to --out, default standard output)");
  cmd->add_option("--dir", o->calibration.dir,
                  "the directory: where live runs put their files, or the one --calibrate measures");
  cmd->add_option("--mount", o->calibration.mount,
                  "--calibrate, --fit-costs: the scenario's mount the overrides set (platform.storage.MOUNT)");
  cmd->add_option("--out", o->out,
                  "a run: keep results.jsonl (mode live) in this directory as runs end; --calibrate, --fit-costs: "
                  "write the override file here (default: standard output)");
  cmd->add_option("--resume", o->resume,
                  "finish an interrupted live run kept in this directory (the same command, with --resume DIR in "
                  "place of --out DIR)");
  cmd->add_option("--streams", o->calibration.streams, "concurrent writers for the aggregate bandwidth")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--stream-bytes", o->calibration.stream_bytes, "bytes each stream writes")
      ->check(CLI::Range(std::uint64_t{1} << 20, std::uint64_t{16} << 30));
  cmd->add_option("--samples", o->calibration.meta_samples, "samples per metadata operation")
      ->check(CLI::Range(10, 100'000));
  return {cmd, [o] { return live_command(*o); }};
}

}  // namespace racesim::cli
