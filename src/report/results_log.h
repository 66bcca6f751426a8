// The results of a run in progress, kept as runs finish: `racesim run --out DIR` appends each
// record to DIR/results.jsonl as its run ends (written out at least every kFlushMillis and every
// kFlushBytes), so a kill, a crash or Ctrl-C late in a long sweep keeps what ran, and
// `racesim run --resume DIR` runs only what is missing. At the end the
// file is rewritten whole (records in run order, then the trailer; temp file + rename), so a
// finished results.jsonl is the same bytes however often the run was interrupted.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "src/report/experiment.h"
#include "src/run/runner.h"

namespace racesim::report {

// A kill -9 loses at most the records of the last kFlushMillis (wall time, not simulated time);
// a stop (Ctrl-C) or an error loses none.
inline constexpr int kFlushMillis = 100;
inline constexpr std::size_t kFlushBytes = 64 * 1024;

class ResultsLog {
 public:
  ResultsLog() = default;
  ResultsLog(const ResultsLog&) = delete;
  ResultsLog& operator=(const ResultsLog&) = delete;
  ~ResultsLog();  // writes out what append buffered

  // Starts DIR/results.jsonl afresh for `experiment` (creating DIR): the header line, nothing
  // else. summary.csv and report.md left in DIR by an earlier run are removed, as they would
  // describe other results. False with `error` naming the file on failure.
  bool start(const std::string& dir, const Experiment& experiment, std::string& error);
  // Continues DIR/results.jsonl: its header must name `experiment` (the same shard too), else an
  // error says which field differs. `done` receives the records it holds; a last line cut by a
  // kill is dropped from the file.
  bool resume(const std::string& dir, const Experiment& experiment, std::vector<run::RunRecord>& done,
              std::string& error);
  // Appends one record's line. Lines are written whole (a process killed mid-write leaves at most
  // a cut last line, which resume drops). Safe to call from several threads at once.
  // REQUIRES: start or resume succeeded.
  bool append(const run::RunRecord& record, std::string& error);
  // Writes out the lines append has buffered.
  bool flush(std::string& error);
  // Rewrites results.jsonl whole: header, every record resumed or appended (the lines already
  // formatted, in run order: programs, then seeds), trailer; then summary.csv and report.md from
  // `summary_csv` and `report_md`. Each file is written to a temporary file and renamed, so it is
  // whole or absent. Fails, writing nothing, unless the log holds every run of the experiment.
  bool finish(const std::string& summary_csv, const std::string& report_md, std::string& error);

  const std::string& path() const { return path_; }
  // The records in the file: those resume found plus those appended and written out.
  std::size_t records_written() const { return written_; }

 private:
  void reset(const std::string& dir, const Experiment& experiment);  // a fresh log for DIR
  bool open_for_append(std::string& error);
  // Writes what is pending; the lock guard is the proof that mutex_ is held.
  bool flush_locked(const std::lock_guard<std::mutex>& held, std::string& error);
  void close();

  // A record's line and where it goes in run order.
  struct Line {
    std::size_t program;
    std::uint64_t seed;
    std::string text;  // with its newline
  };
  // REQUIRES: mutex_ held, or no other thread can reach the log yet (resume).
  bool keep(const run::RunRecord& r, std::string text, std::string& error);
  std::map<std::string, std::size_t> program_index_;  // Experiment::programs label -> position

  std::mutex mutex_;  // guards what follows
  std::vector<Line> lines_;  // every record of the file, resumed or appended
  std::string pending_;  // whole lines not yet written
  std::size_t pending_lines_ = 0, written_ = 0;
  std::chrono::steady_clock::time_point last_flush_{};
  int fd_ = -1;
  std::string dir_, path_;
  Experiment experiment_;
};

}  // namespace racesim::report
