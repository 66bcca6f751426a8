// The options several subcommands share, in one place: overrides (--set, --set-file), the seeds,
// threads, schedule policy and shard of a run (CommonOptions), and what they turn into: the
// overrides with where each was written, a loaded study, a run plan.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/run/runner.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::cli {

// --set KEY=VALUE and --set-file FILE, as given (both repeatable).
struct OverrideOptions {
  std::vector<std::string> set;
  std::vector<std::string> set_files;
  std::vector<std::string> sweep;  // --sweep AXIS=V1,V2,...
  bool empty() const { return set.empty() && set_files.empty() && sweep.empty(); }
};
void add_override_options(CLI::App* cmd, OverrideOptions& o);

// The overrides a command applies, in order (every --set-file line, then every --set, so a --set
// wins, then every --sweep as sweep.AXIS=[V1,V2]), each with where it was written: FILE:LINE:COLUMN
// for a --set-file line, no file for a --set (whose errors then say "--set KEY"), "--sweep AXIS".
struct Overrides {
  std::vector<std::string> texts;
  std::vector<scenario::Location> origins;  // by index into texts
};
// Reads every --set-file: each line KEY=VALUE (blank lines and # comments skipped). False, with
// the error printed, on a file that cannot be read or a line that is not an assignment.
bool read_overrides(const OverrideOptions& o, Overrides& out);
// Overrides that come from a results file: their texts, with no origin.
Overrides overrides_of(const std::vector<std::string>& texts);

// What a run is made of: overrides, seeds, threads, policy, shard.
struct CommonOptions {
  OverrideOptions overrides;
  std::string shard;        // --shard I/N
  std::uint64_t seeds = 0;  // 0: the scenario's own
  std::uint64_t seed_start = 0;
  int jobs = default_jobs();
  std::string policy = "fifo";
  std::string progress = "auto";  // --progress (progress.h)
  static int default_jobs();  // every core
  // The options that choose runs to make (every one but --jobs) that were given, as flags
  // ("--set", "--seeds", ...): stored results were run as they were, and refuse these.
  std::vector<std::string> run_choices_given() const;
};
void add_common_options(CLI::App* cmd, CommonOptions& o);
// The values --policy takes, as every command's help lists them.
inline constexpr const char* kPolicyValues = "fifo, random, pct[:DEPTH[:STEPS]]";

// Adds --progress (auto, bar, lines, none) to a command that makes many runs.
CLI::Option* add_progress_option(CLI::App* cmd, std::string& progress);
// What --progress `text` asks for, as a function of (runs done, runs in all); empty for none.
std::function<void(std::size_t, std::size_t)> progress_reporter(const std::string& text);

// Adds --shard (I/N, or auto: the scheduler's variables) to a command that runs seeds.
CLI::Option* add_shard_option(CLI::App* cmd, std::string& shard);
// Sets plan's shard from --shard's `text`: I/N, or `auto` (the scheduler's variables, printed as
// chosen). Given as I/N inside a scheduler's job array, it must be the scheduler's own shard.
// False, with the error printed.
bool choose_shard(const std::string& text, run::Plan& plan);

// Adds a seed option (--seed, --seed-start): its text must be a seed (src/run/seed_range.h),
// never a negative number taken modulo 2^64 or a huge one clamped.
CLI::Option* add_seed_option(CLI::App* cmd, const std::string& name, std::uint64_t& seed, const std::string& help);
// A check for an option that takes a real number: a finite decimal number from lo to hi (CLI11's
// Range lets NaN through, since every comparison with it is false).
CLI::Validator number_in(double lo, double hi);
// Whether the `count` seeds from `start` are all seeds; prints why not.
bool seeds_fit(std::uint64_t start, std::uint64_t count);

// Loads `file`, applies `overrides`, expands the sweep, and compiles the named strategies (all
// when `strategies` is empty) at the points chosen by `points` (all when empty). Prints every
// error and returns nullptr on failure.
std::unique_ptr<scenario::Study> load_study(const std::string& file, const std::vector<std::string>& strategies,
                                            const Overrides& overrides = {},
                                            const std::vector<std::string>& points = {});

// The plan `o` asks for on `sc`: policy, shard, seeds, threads, a progress line on a terminal.
// False, with the error printed, on a policy or shard that does not parse.
bool make_plan(const CommonOptions& o, const scenario::Scenario& sc, run::Plan& plan);

// Whether the plan's records and concurrent runs fit in the memory this process can count on;
// false, saying what would fit, when they do not.
bool fits_in_memory(const scenario::Study& study, const run::Plan& plan);
// The same for a command that makes one run of the study's program at a time on each of `jobs`
// threads (replay, explore, shrink).
bool runs_fit_in_memory(const scenario::Study& study, int jobs);

// Flags as a message lists them: "--a", "--a and --b", "--a, --b and --c".
std::string flag_list(const std::vector<std::string>& flags);
// Refuses flags that do not go with the command as given: false, with "racesim: REASON; --a and
// --b cannot be given with it" printed, when `given` is not empty.
bool refuse_flags(const std::string& reason, const std::vector<std::string>& given);

// True when the output path `out` is none of `inputs` (compared as the files or directories they
// name, so a/./b, a symlink and an absolute path are the same); otherwise prints
// "racesim: COMMAND: --out OUT is the input INPUT, which writing would overwrite" and returns false.
bool output_is_no_input(const std::string& command, const std::string& out, const std::vector<std::string>& inputs);

// Writes `text` to `path` whole or not at all (report/output_file.h); false with the error
// printed.
bool write_file_atomically(const std::string& path, const std::string& text);

}  // namespace racesim::cli
