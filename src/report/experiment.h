// What identifies an experiment's results: the scenario's content, the overrides, the schedule
// policy, the seed range, the programs run (sweep points x strategies), the racesim version, and
// which shard of it a result file holds. results.jsonl opens with it (a header line) and closes
// with the number of records it holds (a trailer line), so results of different experiments
// never merge, and a file cut short, empty, or missing a shard is refused with what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace racesim::report {

struct Experiment {
  std::string scenario;                // the scenario's name
  std::string content;                 // Scenario::content_hash: the scenario file's bytes
  std::vector<std::string> overrides;  // --set KEY=VALUE, as given, in order
  std::string policy;                  // "fifo", "random", "pct:3:1000"
  std::uint64_t seed_start = 0;
  std::uint64_t seeds = 0;             // seeds per program, over all shards
  std::vector<std::string> programs;   // "STRATEGY" or "POINT / STRATEGY", in run order
  std::vector<std::string> axes;       // the sweep's axis keys (the CSV's axis columns); fixed by the content
  std::string version;                 // racesim's version (kRacesimVersion)
  int shard_index = 0;
  int shard_count = 1;
  // The records a shard with this index holds: seeds with (seed - seed_start) % count == index,
  // for every program.
  std::uint64_t expected_runs() const;
};

// The version this binary writes into its results (the project's version and, when built from a
// git checkout, its commit).
extern const char* const kRacesimVersion;

// The header line's JSON object (one line, no newline) and its parse; a bad header is an error
// naming the field.
std::string format_experiment(const Experiment& e);
bool parse_experiment(const std::string& line, Experiment& e, std::string& error);
// The trailer line: {"end": {"runs": N, "digest": HEX}} (HEX: the section's SectionDigest,
// results_file.h).
std::string format_trailer(std::uint64_t runs, const std::string& digest);

// Whether `a` and `b` are shards of the same experiment; otherwise `why` names the first field
// that differs, with both values.
bool same_experiment(const Experiment& a, const Experiment& b, std::string& why);
// The whole experiment from its shards: every shard of the same experiment, each index once, none
// missing. `names` label the parts in errors (their directories). On success, `whole` is the
// experiment as one unsharded run would record it.
bool join_shards(const std::vector<Experiment>& parts, const std::vector<std::string>& names,
                 Experiment& whole, std::string& error);

// Several result files (or sections of one) as experiments: parts that differ only in their shard
// index are shards of one experiment, joined by join_shards (each whole, none missing); parts of
// different experiments are kept apart, in the order first given, never pooled. All must be of
// one scenario file (its name and content): a comparison of two versions of a file, or of two
// scenarios, is refused with the field that differs. `names` label the parts in errors.
struct JoinedExperiment {
  Experiment whole;
  std::vector<std::size_t> parts;  // indices into the parts given
};
bool group_experiments(const std::vector<Experiment>& parts, const std::vector<std::string>& names,
                       std::vector<JoinedExperiment>& out, std::string& error);

// Whether the experiment ran on real processes (`racesim live`: its policy is "live:...").
bool is_live(const Experiment& e);
// A field of a live experiment's policy, "live:scale=F[:fs=NAME]": live_field(e, "fs") is NAME;
// "" when the policy has no such field.
std::string live_field(const Experiment& e, const std::string& key);

}  // namespace racesim::report
