// Structured trace of a run, and its 64-bit hash.
//
// Levels: kOff records and hashes nothing (cost: one branch per site); kHash folds every record
// into the hash without storing it; kFull also stores the records (for the Chrome trace).
// The hash is the same at kHash and kFull.
//
// The canonical stream that the hash covers is: every dispatched event (virtual time, the
// process it resumes or -1 for a callback, event kind), which fixes the schedule, plus every
// record that models emit (time, process, phase, category, name, args, value). Wait spans that
// the kernel adds at kFull for the timeline are derived from the schedule and not hashed again.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kernel/time.h"

namespace racesim::kernel {

enum class TraceLevel : std::uint8_t { kOff, kHash, kFull };

// Chrome trace phases: 'B' begin, 'E' end, 'i' instant, 'C' counter.
struct TraceRecord {
  Time time;
  std::int32_t pid;  // simulated process, -1 for none
  char phase;
  std::string category;
  std::string name;
  std::string args_json;  // a JSON object's text, or empty
  double value;           // counters
};

class Trace {
 public:
  explicit Trace(TraceLevel level) : level_(level) {}
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  TraceLevel level() const { return level_; }
  bool on() const { return level_ != TraceLevel::kOff; }
  bool full() const { return level_ == TraceLevel::kFull; }

  // Folds a dispatch into the hash (kernel hot path).
  void mix_dispatch(Time t, std::int32_t pid, std::uint8_t kind) {
    if (level_ == TraceLevel::kOff) return;
    mix(static_cast<std::uint64_t>(t));
    mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid)) << 8) | kind);
  }
  // A model record: hashed at kHash and kFull, stored at kFull.
  void record(Time t, std::int32_t pid, char phase, std::string_view category,
              std::string_view name, std::string_view args_json = {}, double value = 0);
  // A kernel timeline record (kFull only, not hashed).
  void timeline(Time t, std::int32_t pid, char phase, std::string_view category,
                std::string_view name, std::string_view args_json = {});

  std::uint64_t hash() const { return hash_; }
  const std::vector<TraceRecord>& records() const { return records_; }
  // kFull only: gives the latest stored record `args_json` (a JSON object's text) for the
  // Chrome trace, if it has none, without changing the hash: what a model adds about a record
  // it emitted (a load's bytes, a lock's result) for a reader, while the hash keeps covering
  // what the model did. REQUIRES: a record was stored (level kFull).
  void annotate_last(std::string args_json);
  std::uint64_t record_count() const { return count_; }

 private:
  void mix(std::uint64_t v) {
    // A 64-bit multiply-xorshift fold (from the MurmurHash3 finaliser constants): order
    // sensitive, cheap, and identical on every platform.
    hash_ = (hash_ ^ v) * 0x9E3779B97F4A7C15ULL;
    hash_ ^= hash_ >> 29;
  }
  void mix_text(std::string_view s);

  TraceLevel level_;
  std::uint64_t hash_ = 0xCBF29CE484222325ULL;
  std::uint64_t count_ = 0;
  std::vector<TraceRecord> records_;
};

// Escapes `s` for use inside a JSON string literal (no surrounding quotes).
std::string json_escape(std::string_view s);

// Describes one simulated process for the Chrome trace: which group (a Chrome "process": a
// rank, say) and which lane (a Chrome "thread": host, stream, comm) it is drawn in.
struct TraceLane {
  std::int32_t pid;
  std::string group;
  std::string lane;
};

// Writes the records as Chrome Trace Event JSON ({"traceEvents": [...]}) that opens in Perfetto
// and chrome://tracing. Timestamps are microseconds with nanosecond precision. Groups become
// Chrome processes and lanes Chrome threads, both named by metadata events; records with no
// process go to a "sim" group. A slice still open at the end (a process blocked when the run
// ended: a deadlock, a failure, a limit) is closed at `end` in the order slices nest, its end
// carrying {"open_at_end":true}, so that a viewer draws it to the run's end instead of dropping
// it. REQUIRES: end >= every record's time.
void write_chrome_trace(std::ostream& out, const std::vector<TraceRecord>& records,
                        const std::vector<TraceLane>& lanes, Time end);

}  // namespace racesim::kernel
