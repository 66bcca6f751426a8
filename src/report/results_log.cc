// Results kept as runs finish (see results_log.h).
#include "src/report/results_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cassert>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "src/report/output_file.h"
#include "src/report/results_file.h"
#include "src/scenario/file/input_file.h"

namespace racesim::report {

namespace {

// Writes all of `text` to `fd`, retrying short writes; false with errno set on failure. `done`:
// the bytes written.
bool write_all(int fd, const std::string& text, std::size_t& done) {
  done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

ResultsLog::~ResultsLog() {
  std::string ignored;  // best effort: a log abandoned by an error still keeps what ran
  if (fd_ >= 0) flush(ignored);
  close();
}

void ResultsLog::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pending_.clear();
  pending_lines_ = 0;
}

bool ResultsLog::open_for_append(std::string& error) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  last_flush_ = std::chrono::steady_clock::now();
  if (fd_ < 0) {
    error = "cannot write " + path_ + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

void ResultsLog::reset(const std::string& dir, const Experiment& experiment) {
  close();
  dir_ = dir;
  path_ = dir + "/results.jsonl";
  experiment_ = experiment;
  program_index_ = program_index(experiment);
  lines_.clear();
  written_ = 0;
}

bool ResultsLog::start(const std::string& dir, const Experiment& experiment, std::string& error) {
  reset(dir, experiment);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  for (const char* stale : {"/summary.csv", "/report.md"}) {
    std::filesystem::remove(dir + stale, ec);
    if (ec) {
      error = "cannot remove " + dir + stale + " (left by an earlier run): " + ec.message();
      return false;
    }
  }
  // The header goes in through a temp file and rename: a kill never leaves a results.jsonl
  // without one.
  if (!write_output_file(path_, format_experiment(experiment) + "\n", error)) return false;
  written_ = 0;
  return open_for_append(error);
}

bool ResultsLog::resume(const std::string& dir, const Experiment& experiment,
                        std::vector<run::RunRecord>& done, std::string& error) {
  reset(dir, experiment);
  const auto file = scenario::read_input_file(path_, kMaxResultsFileBytes, "a results file");
  if (!file) {
    error = "nothing to resume: " + path_ + ": " + file.message() + " (start the run with --out " + dir + ")";
    return false;
  }
  const std::string& text = *file;
  ResultsText read;
  if (!read_results(text, read, error)) {
    error = path_ + ": " + error;
    return false;
  }
  std::string why;
  if (!same_experiment(read.experiment, experiment, why) || read.experiment.shard_index != experiment.shard_index) {
    if (why.empty()) {
      why = "shard differs: " + std::to_string(read.experiment.shard_index) + " and " +
            std::to_string(experiment.shard_index);
    }
    error = path_ + " holds another experiment than this command runs: " + why +
            " (resume with the scenario and options the run was started with)";
    return false;
  }
  if (read.whole_bytes < text.size() && ::truncate(path_.c_str(), static_cast<off_t>(read.whole_bytes)) != 0) {
    error = "cannot drop the cut last line of " + path_ + ": " + std::strerror(errno);
    return false;
  }
  if (!order_records(experiment, read.records, error)) {
    error = path_ + ": " + error;
    return false;
  }
  // The records are kept as this binary formats them (the experiment names its version, so they
  // are the bytes it read).
  for (const auto& r : read.records) {
    if (!keep(r, format_record(experiment.scenario, r) + "\n", error)) return false;
  }
  written_ = read.records.size();
  done = std::move(read.records);
  return open_for_append(error);
}

bool ResultsLog::keep(const run::RunRecord& r, std::string text, std::string& error) {
  const auto it = program_index_.find(program_label(r.point, r.strategy));
  if (it == program_index_.end()) {
    error = "a record of '" + program_label(r.point, r.strategy) + "', which the experiment does not run";
    return false;
  }
  lines_.push_back({it->second, r.seed, std::move(text)});
  return true;
}

bool ResultsLog::append(const run::RunRecord& record, std::string& error) {
  assert(!path_.empty() && "append REQUIRES start or resume");
  std::string line = format_record(experiment_.scenario, record) + "\n";  // outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  if (!keep(record, std::move(line), error)) return false;
  pending_ += lines_.back().text;
  ++pending_lines_;
  const auto now = std::chrono::steady_clock::now();
  if (pending_.size() < kFlushBytes && now - last_flush_ < std::chrono::milliseconds(kFlushMillis)) return true;
  return flush_locked(lock, error);
}

bool ResultsLog::flush(std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  return flush_locked(lock, error);
}

bool ResultsLog::flush_locked(const std::lock_guard<std::mutex>&, std::string& error) {
  last_flush_ = std::chrono::steady_clock::now();
  if (pending_.empty()) return true;
  std::size_t bytes = 0;
  const bool ok = write_all(fd_, pending_, bytes);
  // Whole lines that made it: on a failure part-way, those before the cut.
  written_ += ok ? pending_lines_ : static_cast<std::size_t>(std::count(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(bytes), '\n'));
  pending_.clear();
  pending_lines_ = 0;
  if (!ok) {
    error = "cannot write " + path_ + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool ResultsLog::finish(const std::string& summary_csv, const std::string& report_md, std::string& error) {
  if (!flush(error)) return false;
  close();
  std::lock_guard<std::mutex> lock(mutex_);
  if (lines_.size() != experiment_.expected_runs()) {
    error = path_ + " holds " + std::to_string(lines_.size()) + " of the experiment's " +
            std::to_string(experiment_.expected_runs()) + " runs";
    return false;
  }
  std::sort(lines_.begin(), lines_.end(), [](const Line& a, const Line& b) {
    return a.program != b.program ? a.program < b.program : a.seed < b.seed;
  });
  const std::string header = format_experiment(experiment_);
  SectionDigest digest(header);
  std::string text = header + "\n";
  std::size_t bytes = text.size();
  for (const Line& l : lines_) bytes += l.text.size();
  text.reserve(bytes + 96);
  for (const Line& l : lines_) {
    text += l.text;
    digest.add(std::string_view(l.text).substr(0, l.text.size() - 1));  // without its newline
  }
  text += format_trailer(lines_.size(), digest.hex()) + "\n";
  return write_output_file(path_, text, error) && write_output_file(dir_ + "/summary.csv", summary_csv, error) &&
         write_output_file(dir_ + "/report.md", report_md, error);
}

}  // namespace racesim::report
