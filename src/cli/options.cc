// The options several subcommands share (options.h).
#include "src/cli/options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "src/report/output_file.h"
#include "src/cli/progress.h"
#include "src/run/scheduler_shard.h"
#include "src/run/seed_range.h"
#include "src/scenario/file/input_file.h"
#include "src/scenario/file/quantity.h"
#include "src/scenario/language/override_file.h"

namespace racesim::cli {

void add_override_options(CLI::App* cmd, OverrideOptions& o) {
  cmd->add_option("--set", o.set,
                  "override KEY=VALUE: ranks, seeds, limits.time, limits.events, params.NAME, "
                  "platform.PATH, faults.NAME.FIELD; a sweep axis's KEY pins the axis to VALUE (repeatable)");
  cmd->add_option("--set-file", o.set_files,
                  "overrides from a file: a KEY=VALUE per line, # comments (racesim live --calibrate writes one); "
                  "applied before --set (repeatable)");
  cmd->add_option("--sweep", o.sweep,
                  "AXIS=V1,V2,...: the sweep axis AXIS (any KEY --set takes) takes these values, replacing the "
                  "file's or adding the axis; applied after --set (repeatable)");
}

namespace {

// The most an override file may hold: a --set per line, 10,000 lines of short text.
constexpr std::size_t kMaxSetFileBytes = 1024 * 1024;

// The whole of an override file, or nullopt with the error printed.
std::optional<std::string> read_set_file(const std::string& file) {
  auto text = scenario::read_input_file(file, kMaxSetFileBytes, "an override file (a --set per line)");
  if (!text) {
    std::cerr << "racesim: --set-file " << file << ": " << text.message() << "\n";
    return std::nullopt;
  }
  return *text;
}

}  // namespace

bool read_overrides(const OverrideOptions& o, Overrides& out) {
  out = {};
  for (const auto& file : o.set_files) {
    const std::optional<std::string> content = read_set_file(file);
    if (!content) return false;
    scenario::Diagnostics diags;
    if (!scenario::parse_override_file(*content, file, out.texts, out.origins, diags)) {
      std::cerr << diags.to_string();
      return false;
    }
  }
  for (const auto& s : o.set) {
    out.texts.push_back(s);
    out.origins.push_back({});
  }
  // --sweep AXIS=V1,V2 is the override sweep.AXIS=[V1,V2]: results record it as any override.
  for (const auto& s : o.sweep) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      std::cerr << "racesim: --sweep: expected AXIS=V1,V2,... (e.g. params.poll=100ms,200ms), got '" << scenario::excerpt(s) << "'\n";
      return false;
    }
    out.texts.push_back("sweep." + s.substr(0, eq) + "=[" + s.substr(eq + 1) + "]");
    out.origins.push_back({"--sweep " + s.substr(0, eq), 0, 0});
  }
  return true;
}

Overrides overrides_of(const std::vector<std::string>& texts) {
  return {texts, std::vector<scenario::Location>(texts.size())};
}

int CommonOptions::default_jobs() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::vector<std::string> CommonOptions::run_choices_given() const {
  std::vector<std::string> given;
  if (!overrides.set.empty()) given.push_back("--set");
  if (!overrides.set_files.empty()) given.push_back("--set-file");
  if (!overrides.sweep.empty()) given.push_back("--sweep");
  if (seeds != 0) given.push_back("--seeds");
  if (seed_start != 0) given.push_back("--seed-start");
  if (policy != "fifo") given.push_back("--policy");
  if (!shard.empty()) given.push_back("--shard");
  return given;
}

CLI::Option* add_seed_option(CLI::App* cmd, const std::string& name, std::uint64_t& seed, const std::string& help) {
  return cmd->add_option(name, seed, help)->check(CLI::Validator(
      [](std::string& text) { return run::seed_text_error(text); }, "SEED", "seed"));
}

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const auto v = scenario::parse_quantity(text, scenario::Unit::kNumber);
        if (v && *v >= lo && *v <= hi) return "";
        std::ostringstream range;
        range << "expected a number from " << lo << " to " << hi << ", got '" << text << "'";
        return range.str();
      },
      "NUMBER", "number");
}

bool seeds_fit(std::uint64_t start, std::uint64_t count) {
  const std::string error = run::seed_range_error(start, count);
  if (!error.empty()) std::cerr << "racesim: --seed-start: " << error << "\n";
  return error.empty();
}

void add_common_options(CLI::App* cmd, CommonOptions& o) {
  add_override_options(cmd, o.overrides);
  cmd->add_option("--seeds", o.seeds, "seeds per strategy (default: the scenario's 'seeds')")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}));
  add_seed_option(cmd, "--seed-start", o.seed_start, "first seed");
  cmd->add_option("--jobs,-j", o.jobs, "threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--policy", o.policy, std::string("schedule policy: ") + kPolicyValues);
  add_shard_option(cmd, o.shard);
  add_progress_option(cmd, o.progress);
}

CLI::Option* add_progress_option(CLI::App* cmd, std::string& progress) {
  return cmd
      ->add_option("--progress", progress,
                   std::string("runs done, rate and time left while it works: ") + kProgressValues +
                       " (auto: bar on a terminal, a line every 10 s otherwise)")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
}

std::function<void(std::size_t, std::size_t)> progress_reporter(const std::string& text) {
  const auto mode = parse_progress(text, isatty(STDERR_FILENO) != 0);
  if (!mode || *mode == ProgressMode::kNone) return {};
  auto p = std::make_shared<Progress>(*mode, stderr);
  return [p](std::size_t done, std::size_t total) { p->update(done, total); };
}

CLI::Option* add_shard_option(CLI::App* cmd, std::string& shard) {
  return cmd->add_option("--shard", shard,
                         "run only slice I of N (seeds with index % N == I); merge joins them. auto: the slice "
                         "the scheduler gives (SLURM_ARRAY_TASK_ID of a Slurm job array; JOB_COMPLETION_INDEX "
                         "with RACESIM_SHARD_COUNT in a Kubernetes Indexed Job)");
}

std::unique_ptr<scenario::Study> load_study(const std::string& file, const std::vector<std::string>& strategies,
                                            const Overrides& overrides, const std::vector<std::string>& points) {
  scenario::Diagnostics diags;
  auto study = scenario::compile_study({.path = file,
                                        .overrides = overrides.texts,
                                        .override_origins = overrides.origins,
                                        .strategies = strategies,
                                        .points = points},
                                       diags);
  if (!study) {
    std::cerr << diags.to_string();
    return study;
  }
  for (const std::string& note : study->scenario.notes) std::cerr << "racesim: note: " << note << "\n";
  return study;
}

namespace {

// "I/N" with 0 <= I < N; false when `text` is not that.
bool parse_shard(const std::string& text, int& index, int& count) {
  const auto slash = text.find('/');
  int i = -1, n = 0;
  try {
    if (slash != std::string::npos) {
      std::size_t used_i = 0, used_n = 0;
      i = std::stoi(text.substr(0, slash), &used_i);
      n = std::stoi(text.substr(slash + 1), &used_n);
      if (used_i != slash || used_n != text.size() - slash - 1) n = 0;
    }
  } catch (const std::exception&) {
    n = 0;
  }
  if (n < 1 || i < 0 || i >= n) return false;
  index = i;
  count = n;
  return true;
}

}  // namespace

bool choose_shard(const std::string& text, run::Plan& plan) {
  run::SchedulerShard scheduled;
  std::string error;
  const bool in_scheduler = run::scheduler_shard(std::getenv, scheduled, error);
  if (text == "auto") {
    if (!in_scheduler) {
      std::cerr << "racesim: --shard auto: " << error << "\n";
      return false;
    }
    plan.shard_index = scheduled.index;
    plan.shard_count = scheduled.count;
    std::cerr << "racesim: --shard auto: shard " << scheduled.index << "/" << scheduled.count << " ("
              << scheduled.source << ")\n";
    return true;
  }
  if (!parse_shard(text, plan.shard_index, plan.shard_count)) {
    std::cerr << "racesim: --shard: expected I/N with 0 <= I < N, or auto, got '" << text << "'\n";
    return false;
  }
  if (in_scheduler && (scheduled.index != plan.shard_index || scheduled.count != plan.shard_count)) {
    std::cerr << "racesim: --shard " << text << " disagrees with the scheduler's " << scheduled.source
              << " (shard " << scheduled.index << "/" << scheduled.count
              << "): give --shard auto, or run outside the job array\n";
    return false;
  }
  return true;
}

bool make_plan(const CommonOptions& o, const scenario::Scenario& sc, run::Plan& plan) {
  auto policy = kernel::PolicySpec::parse(o.policy);
  if (!policy) {
    std::cerr << "racesim: --policy: " << policy.message() << "\n";
    return false;
  }
  plan.options.policy = *policy;
  if (!o.shard.empty() && !choose_shard(o.shard, plan)) return false;
  plan.seeds = o.seeds ? o.seeds : static_cast<std::uint64_t>(sc.seeds);
  plan.progress = progress_reporter(o.progress);
  plan.seed_start = o.seed_start;
  if (!seeds_fit(plan.seed_start, plan.seeds)) return false;
  plan.jobs = o.jobs;
  return true;
}

bool fits_in_memory(const scenario::Study& study, const run::Plan& plan) {
  const auto w = run::size_work(study.program_pointers(), plan);
  const std::uint64_t budget = run::memory_budget(), spare = budget / 10 * 8;  // leave a fifth
  if (budget == 0 || w.bytes <= spare) return true;
  auto gib = [](std::uint64_t b) {
    return std::to_string(b / (1ULL << 30)) + "." + std::to_string(b % (1ULL << 30) * 10 / (1ULL << 30)) + " GiB";
  };
  // What would fit: the ranks of one run on each thread after the records, and the threads.
  const std::uint64_t records = w.runs * run::kRecordBytes;
  const std::uint64_t per_run = w.ranks * w.rank_bytes;
  const std::uint64_t ranks_fit = records < spare && w.rank_bytes > 0 ? (spare - records) / w.rank_bytes / static_cast<std::uint64_t>(w.jobs) : 0;
  const std::uint64_t jobs_fit = records < spare && per_run > 0 ? (spare - records) / per_run : 0;
  const auto n = [](std::uint64_t k, const char* what) { return std::to_string(k) + " " + what + (k == 1 ? "" : "s"); };
  std::cerr << "racesim: " << n(w.runs, "run") << " of " << n(w.ranks, "rank") << " on "
            << n(static_cast<std::uint64_t>(w.jobs), "thread") << " would need about "
            << gib(w.bytes) << " (the records, and each thread's run), more than the " << gib(spare)
            << " this machine can spare; what fits: "
            << (records * 2 > spare
                    ? "fewer --seeds, or split the work with --shard I/N and merge (the records alone take " + gib(records) + ")"
                    : (jobs_fit >= 1 ? "--jobs " + std::to_string(jobs_fit) + " with these ranks, or " : std::string()) +
                          "at most " + n(ranks_fit, "rank") + " on " + n(static_cast<std::uint64_t>(w.jobs), "thread"))
            << "\n";
  return false;
}

bool runs_fit_in_memory(const scenario::Study& study, int jobs) {
  run::Plan plan;
  plan.seeds = static_cast<std::uint64_t>(jobs);
  plan.jobs = jobs;
  return fits_in_memory(study, plan);
}

bool write_file_atomically(const std::string& path, const std::string& text) {
  std::string error;
  if (report::write_output_file(path, text, error)) return true;
  std::cerr << "racesim: " << error << "\n";
  return false;
}

std::string flag_list(const std::vector<std::string>& flags) {
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == flags.size() ? " and " : ", ") + flags[i];
  }
  return out;
}

bool output_is_no_input(const std::string& command, const std::string& out, const std::vector<std::string>& inputs) {
  for (const std::string& in : inputs) {
    std::error_code ec;
    const bool same = std::filesystem::exists(out, ec) && std::filesystem::exists(in, ec)
                          ? std::filesystem::equivalent(out, in, ec)
                          : std::filesystem::weakly_canonical(out, ec) == std::filesystem::weakly_canonical(in, ec);
    if (same && !ec) {
      std::cerr << "racesim: " << command << ": --out " << out << " is the input " << in
                << ", which writing would overwrite; write to another path\n";
      return false;
    }
  }
  return true;
}

bool refuse_flags(const std::string& reason, const std::vector<std::string>& given) {
  if (given.empty()) return true;
  std::cerr << "racesim: " << reason << "; " << flag_list(given) << " cannot be given with it\n";
  return false;
}

}  // namespace racesim::cli
