// results.jsonl, the file of a run's records: a header line naming the experiment
// (experiment.h), one JSON object per run, one per line, and a trailer line with the number of
// records; a side-by-side merge of several experiments of one scenario holds one such section per
// experiment, one after another. A file without its trailer is a run that was cut short:
// `racesim merge` refuses it, `racesim run --resume` continues it (results_log.h).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/report/experiment.h"
#include "src/run/runner.h"

namespace racesim::report {

// The largest results.jsonl read (some 2.5 million runs; a larger study is split with --shard
// and reported per shard or merged into several files).
inline constexpr std::size_t kMaxResultsFileBytes = std::size_t{2} << 30;

// One record as its line (no newline), and back. A line ends with its digest, `"digest":"HEX"`
// (64-bit FNV-1a of the line without it). parse_record fails, with `error`, on a line that is not
// a record of `scenario` as racesim writes it: a digest that is not its text's (an edited record),
// a key twice, an unknown field, a field of the wrong type or range (a seed, makespan_ns or events
// that is not a whole number >= 0, a metric that is not a number, a trace hash that is not 16 hex
// digits), or redundant fields that disagree (makespan_s and makespan_ns; a pass that names a
// failed check, a failure that names none).
std::string format_record(const std::string& scenario, const run::RunRecord& r);
bool parse_record(const std::string& line, const std::string& scenario, run::RunRecord& r,
                  std::string& error);
// A record line's digest (its 16 hex digits). REQUIRES: a line parse_record accepts.
std::string_view record_digest(std::string_view line);

// The digest a section's trailer carries: of its header line and its records' digests in file
// order, so a record edited, reordered, duplicated, added or removed is refused by every reader.
class SectionDigest {
 public:
  explicit SectionDigest(std::string_view header_line);
  void add(std::string_view record_line);  // REQUIRES: a line parse_record accepts
  std::string hex() const;

 private:
  std::string text_;
};

// The whole file: header, `records` as given, trailer.
std::string format_jsonl(const Experiment& experiment, const std::vector<run::RunRecord>& records);

// What a results.jsonl holds. `complete`: it ends with a trailer that counts its records and its
// experiment's. `whole_bytes`: the length of its text up to the end of its last whole line (a
// line cut by a kill is not whole).
struct ResultsText {
  Experiment experiment;
  std::vector<run::RunRecord> records;
  bool complete = false;
  std::size_t whole_bytes = 0;
};
// Reads a results.jsonl, whole or cut short. Fails, with `error` naming the line, on a missing or
// bad header, a malformed record before the last line, a record of another scenario, a line
// after the trailer, or a trailer whose count is not the file's.
bool read_results(const std::string& text, ResultsText& out, std::string& error);
// Every experiment a results.jsonl holds, each complete: one for a run's file, several for a
// side-by-side merge (`racesim merge` of different experiments of one scenario, e.g. simulated and
// live: each keeps its own header, records and trailer, and their records are never pooled).
// Fails, with `error` naming the line, as read_results, or when a section is cut short.
bool parse_result_sections(const std::string& text, std::vector<ResultsText>& out, std::string& error);
// read_results, requiring a complete file of one experiment.
bool parse_jsonl(const std::string& text, Experiment& experiment, std::vector<run::RunRecord>& out,
                 std::string& error);

// The label Experiment::programs gives a record's program: "STRATEGY" or "POINT / STRATEGY".
std::string program_label(const std::string& point, const std::string& strategy);
// Each of the experiment's program labels -> its position in Experiment::programs (run order).
std::map<std::string, std::size_t> program_index(const Experiment& experiment);
// Puts `records` in the order one run of `experiment` writes them: its programs in order, then
// seeds ascending. A record of a program the experiment does not run, of a seed outside its range
// or shard, or a (program, seed) twice is an error naming it.
bool order_records(const Experiment& experiment, std::vector<run::RunRecord>& records,
                   std::string& error);

}  // namespace racesim::report
