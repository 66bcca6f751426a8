// results.jsonl's format (see results_file.h).
#include "src/report/results_file.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/kernel/random.h"
#include "src/report/strict_json.h"
#include "src/scenario/file/input_file.h"

namespace racesim::report {

namespace {

// A record line ends with its digest: `,"digest":"` 16 hex digits `"}`.
constexpr std::string_view kDigestOpen = ",\"digest\":\"";
constexpr std::size_t kDigestTail = kDigestOpen.size() + 16 + 2;

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The keys a record may hold; any other is an error (a record of another format, or edited).
bool record_key(const std::string& key) {
  for (const char* k : {"scenario", "strategy", "point", "seed", "outcome", "check", "diagnosis", "makespan_ns",
                        "events", "metrics", "trace_hash", "mode"}) {
    if (key == k) return true;
  }
  return false;
}

std::string text_field(const nlohmann::json& j, const char* key, bool required = true) {
  if (!j.contains(key)) {
    if (required) throw std::invalid_argument(std::string("no '") + key + "'");
    return "";
  }
  const auto& v = j.at(key);
  if (!v.is_string()) throw std::invalid_argument(std::string("'") + key + "' is " + v.dump() + ", expected text");
  return v.get<std::string>();
}

}  // namespace

std::string format_record(const std::string& scenario, const run::RunRecord& r) {
  nlohmann::ordered_json j;
  j["scenario"] = scenario;
  j["strategy"] = r.strategy;
  j["point"] = r.point;
  j["seed"] = r.seed;
  j["outcome"] = run::to_string(r.outcome);
  j["check"] = r.check;
  j["diagnosis"] = r.diagnosis;
  j["makespan_ns"] = r.makespan;
  j["events"] = r.events;
  j["metrics"] = r.metrics;
  j["trace_hash"] = run::trace_hash_text(r.trace_hash);
  if (!r.mode.empty()) j["mode"] = r.mode;
  std::string line = j.dump();
  const std::string digest = hex16(kernel::fnv1a64(line));
  line.pop_back();  // the closing brace, put back after the digest
  return line.append(kDigestOpen).append(digest).append("\"}");
}

std::string_view record_digest(std::string_view line) {
  assert(line.size() >= kDigestTail && "record_digest REQUIRES a record line parse_record accepted");
  return line.substr(line.size() - kDigestTail + kDigestOpen.size(), 16);
}

bool parse_record(const std::string& line, const std::string& scenario, run::RunRecord& r,
                  std::string& error) {
  try {
    // The digest first: of the record's text without it, which the writer hashed.
    const bool tailed = line.size() > kDigestTail && line.compare(line.size() - 2, 2, "\"}") == 0 &&
                        line.compare(line.size() - kDigestTail, kDigestOpen.size(), kDigestOpen) == 0;
    if (!tailed) throw std::invalid_argument("no digest at its end");
    const std::string body = line.substr(0, line.size() - kDigestTail) + "}";
    if (hex16(kernel::fnv1a64(body)) != record_digest(line)) {
      throw std::invalid_argument("its digest is not that of its fields (an edited record?)");
    }
    const auto j = parse_strict(body);
    if (!j.is_object()) throw std::invalid_argument("not an object");
    for (const auto& [key, value] : j.items()) {
      if (!record_key(key)) throw std::invalid_argument("an unknown field '" + key + "'");
    }
    const std::string sc = text_field(j, "scenario");
    if (sc != scenario) {
      error = "scenario '" + sc + "', expected '" + scenario + "'";
      return false;
    }
    r.strategy = text_field(j, "strategy");
    r.point = text_field(j, "point", false);
    r.mode = text_field(j, "mode", false);
    if (!r.mode.empty() && r.mode != "live") throw std::invalid_argument("'mode' is '" + r.mode + "', expected live");
    r.seed = whole_field(j, "seed");
    const std::string outcome = text_field(j, "outcome");
    bool known = false;
    for (auto o : {run::Outcome::kPass, run::Outcome::kFail, run::Outcome::kDeadlock,
                   run::Outcome::kTimeout, run::Outcome::kError}) {
      if (outcome == run::to_string(o)) {
        r.outcome = o;
        known = true;
      }
    }
    if (!known) throw std::invalid_argument("unknown outcome '" + outcome + "'");
    r.check = text_field(j, "check");
    r.diagnosis = text_field(j, "diagnosis");
    if ((r.outcome == run::Outcome::kPass) != r.check.empty()) {
      throw std::invalid_argument("outcome '" + outcome + "' with check '" + r.check +
                                  "' (a pass fails no check; any other outcome names one)");
    }
    const std::uint64_t makespan = whole_field(j, "makespan_ns");
    if (makespan > static_cast<std::uint64_t>(kernel::kTimeMax)) throw std::invalid_argument("'makespan_ns' is beyond the clock");
    r.makespan = static_cast<kernel::Time>(makespan);
    r.events = whole_field(j, "events");
    const auto& metrics = j.at("metrics");
    if (!metrics.is_object()) throw std::invalid_argument("'metrics' is not an object");
    r.metrics.clear();
    for (const auto& [name, value] : metrics.items()) {
      if (!value.is_number()) throw std::invalid_argument("metric '" + name + "' is " + value.dump() + ", expected a number");
      r.metrics.emplace(name, value.get<double>());
    }
    // The redundant fields agree: makespan_s is makespan_ns in seconds, as the runner wrote it.
    if (const auto it = r.metrics.find("makespan_s"); it != r.metrics.end() && it->second != kernel::to_seconds(r.makespan)) {
      throw std::invalid_argument("metric makespan_s is " + nlohmann::json(it->second).dump() + " but makespan_ns is " +
                                  std::to_string(r.makespan));
    }
    const std::string hash = text_field(j, "trace_hash");
    if (hash.size() != 16 || hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw std::invalid_argument("'trace_hash' is '" + hash + "', expected 16 hex digits");
    }
    r.trace_hash = std::stoull(hash, nullptr, 16);
  } catch (const std::exception& e) {
    error = std::string("not a racesim result record (") + e.what() + ")";
    return false;
  }
  return true;
}

SectionDigest::SectionDigest(std::string_view header_line) : text_(header_line) { text_ += '\n'; }

void SectionDigest::add(std::string_view record_line) { text_ += record_digest(record_line); }

std::string SectionDigest::hex() const { return hex16(kernel::fnv1a64(text_)); }

std::string format_jsonl(const Experiment& experiment, const std::vector<run::RunRecord>& records) {
  const std::string header = format_experiment(experiment);
  SectionDigest digest(header);
  std::string out = header + "\n";
  for (const auto& r : records) {
    const std::string line = format_record(experiment.scenario, r);
    digest.add(line);
    out += line + "\n";
  }
  return out + format_trailer(records.size(), digest.hex()) + "\n";
}

namespace {

// Reads one experiment's section of `text` from `pos` (a header, records, a trailer), leaving
// `pos` after its trailer, or at the end of the text when it has none. `line_no` counts the lines
// read so far (errors name the line).
bool read_section(const std::string& text, std::size_t& pos, std::size_t& line_no, ResultsText& out,
                  std::string& error) {
  out = ResultsText{};
  bool header = false;
  std::optional<SectionDigest> digest;
  while (pos < text.size() && !out.complete) {
    const std::size_t nl = text.find('\n', pos);
    const bool whole = nl != std::string::npos;
    const std::string line = text.substr(pos, whole ? nl - pos : std::string::npos);
    const std::size_t line_start = pos;
    pos = whole ? nl + 1 : text.size();
    ++line_no;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (!whole && !header) {
      // The header is written whole (temp file and rename): a cut line here is a stray one, e.g.
      // a byte after a trailer.
      error = where + "'" + scenario::excerpt(line) + "' where an experiment header belongs, and no line end";
      return false;
    }
    if (!whole) {
      // The last line, cut by a kill or a full disk: not part of the results.
      out.whole_bytes = line_start;
      break;
    }
    out.whole_bytes = pos;
    if (line.empty()) continue;
    if (!header) {
      if (!parse_experiment(line, out.experiment, error)) {
        error = where + error;
        return false;
      }
      header = true;
      digest.emplace(line);
      continue;
    }
    if (line.rfind("{\"end\"", 0) == 0) {
      std::uint64_t n = 0;
      std::string carried;
      try {
        const auto end = parse_strict(line).at("end");
        n = whole_field(end, "runs");
        carried = end.at("digest").get<std::string>();
      } catch (const std::exception& e) {
        error = where + "a bad trailer (" + e.what() + ")";
        return false;
      }
      if (n != out.records.size() || n != out.experiment.expected_runs()) {
        error = where + "the trailer counts " + std::to_string(n) + " records, the file holds " +
                std::to_string(out.records.size()) + " and its experiment " +
                std::to_string(out.experiment.expected_runs());
        return false;
      }
      if (carried != digest->hex()) {
        error = where + "the trailer's digest is not that of the header and records before it (a record edited, "
                        "reordered, duplicated, added or removed?)";
        return false;
      }
      out.complete = true;
      continue;
    }
    run::RunRecord r;
    if (!parse_record(line, out.experiment.scenario, r, error)) {
      error = where + error;
      return false;
    }
    digest->add(line);
    out.records.push_back(std::move(r));
  }
  if (!header) {
    error = "empty: no experiment header and no records (a run that was interrupted or failed to write?)";
    return false;
  }
  return true;
}

// Whether only empty lines follow `pos`.
bool at_end(const std::string& text, std::size_t pos) {
  return text.find_first_not_of('\n', pos) == std::string::npos;
}

}  // namespace

bool read_results(const std::string& text, ResultsText& out, std::string& error) {
  std::size_t pos = 0, line_no = 0;
  if (!read_section(text, pos, line_no, out, error)) return false;
  if (!at_end(text, pos)) {
    const auto next = text.find_first_not_of('\n', pos);
    line_no += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(pos),
                                                   text.begin() + static_cast<std::ptrdiff_t>(next), '\n'));
    error = "line " + std::to_string(line_no + 1) + ": a line after the trailer (two files joined? a side-by-side "
            "merge of several experiments is read whole by report --results and merge, not continued)";
    return false;
  }
  return true;
}

bool parse_result_sections(const std::string& text, std::vector<ResultsText>& out, std::string& error) {
  out.clear();
  std::size_t pos = 0, line_no = 0;
  do {
    out.emplace_back();
    const std::size_t first_line = line_no + 1;
    if (!read_section(text, pos, line_no, out.back(), error)) return false;
    if (!out.back().complete) {
      error = "cut short: the experiment from line " + std::to_string(first_line) + " has " +
              std::to_string(out.back().records.size()) + " records of " +
              std::to_string(out.back().experiment.expected_runs()) +
              " and no trailer line (an interrupted run? `racesim run --resume DIR` finishes it)";
      return false;
    }
  } while (!at_end(text, pos));
  return true;
}

bool parse_jsonl(const std::string& text, Experiment& experiment, std::vector<run::RunRecord>& out,
                 std::string& error) {
  ResultsText read;
  if (!read_results(text, read, error)) return false;
  experiment = read.experiment;
  if (!read.complete) {
    error = "cut short: " + std::to_string(read.records.size()) + " records of " +
            std::to_string(read.experiment.expected_runs()) +
            " and no trailer line (an interrupted run? `racesim run --resume DIR` finishes it)";
    return false;
  }
  out.insert(out.end(), std::make_move_iterator(read.records.begin()),
             std::make_move_iterator(read.records.end()));
  return true;
}

std::string program_label(const std::string& point, const std::string& strategy) {
  return point.empty() ? strategy : point + " / " + strategy;
}

std::map<std::string, std::size_t> program_index(const Experiment& experiment) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < experiment.programs.size(); ++i) index.emplace(experiment.programs[i], i);
  return index;
}

bool order_records(const Experiment& experiment, std::vector<run::RunRecord>& records,
                   std::string& error) {
  const auto index = program_index(experiment);
  std::vector<std::pair<std::size_t, std::size_t>> keys;  // (program, position in records)
  keys.reserve(records.size());
  const auto count = static_cast<std::uint64_t>(experiment.shard_count);
  const auto shard = static_cast<std::uint64_t>(experiment.shard_index);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const run::RunRecord& r = records[i];
    const std::string label = program_label(r.point, r.strategy);
    const auto it = index.find(label);
    if (it == index.end()) {
      error = "a record of '" + label + "', which the experiment does not run";
      return false;
    }
    if (r.seed < experiment.seed_start || r.seed - experiment.seed_start >= experiment.seeds ||
        (r.seed - experiment.seed_start) % count != shard) {
      error = "'" + label + "' seed " + std::to_string(r.seed) + " is outside the experiment's seeds (" +
              std::to_string(experiment.seeds) + " from " + std::to_string(experiment.seed_start) +
              (count > 1 ? ", shard " + std::to_string(shard) + "/" + std::to_string(count) : std::string()) + ")";
      return false;
    }
    keys.emplace_back(it->second, i);
  }
  std::sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : records[a.second].seed < records[b.second].seed;
  });
  std::vector<run::RunRecord> sorted;
  sorted.reserve(records.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (k > 0 && keys[k].first == keys[k - 1].first && records[keys[k].second].seed == records[keys[k - 1].second].seed) {
      error = "'" + experiment.programs[keys[k].first] + "' seed " + std::to_string(records[keys[k].second].seed) +
              " appears twice (overlapping shards?)";
      return false;
    }
    sorted.push_back(std::move(records[keys[k].second]));
  }
  records = std::move(sorted);
  return true;
}

}  // namespace racesim::report
