// A campaign's results log, resume and interrupt (campaign.h).
#include "src/cli/campaign.h"

#include <unistd.h>

#include <iostream>
#include <iterator>

#include "src/cli/interrupt.h"

namespace racesim::cli {

report::Experiment experiment_of(const scenario::Study& study, const Overrides& overrides, const run::Plan& plan) {
  report::Experiment e;
  e.scenario = study.scenario.name;
  e.content = study.scenario.content_hash;
  e.overrides = overrides.texts;
  e.policy = plan.options.policy.to_string();
  e.seed_start = plan.seed_start;
  e.seeds = plan.seeds;
  for (const auto& p : study.programs) {
    e.programs.push_back(report::program_label(p->scenario->point, p->strategy->name));
  }
  for (const auto& a : study.scenario.sweep) e.axes.push_back(a.key);
  e.version = report::kRacesimVersion;
  e.shard_index = plan.shard_index;
  e.shard_count = plan.shard_count;
  return e;
}

Campaign::Campaign(std::string command, report::Experiment experiment)
    : command_(std::move(command)), experiment_(std::move(experiment)) {}

bool Campaign::open(const std::string& out_dir, const std::string& resume_dir) {
  std::string error;
  if (!resume_dir.empty()) {
    if (!log_.resume(resume_dir, experiment_, kept_, error)) {
      std::cerr << "racesim: " << command_ << "--resume: " << error << "\n";
      return false;
    }
    std::cerr << "racesim: resuming " << log_.path() << ": " << kept_.size() << " of " << experiment_.expected_runs()
              << " runs kept, " << experiment_.expected_runs() - kept_.size() << " to run\n";
    dir_ = resume_dir;
  } else if (!out_dir.empty()) {
    if (!log_.start(out_dir, experiment_, error)) {
      std::cerr << "racesim: " << command_ << error << "\n";
      return false;
    }
    dir_ = out_dir;
  }
  catch_interrupts();
  return true;
}

bool Campaign::keep(const run::RunRecord& r) {
  if (dir_.empty()) return true;
  std::string error;
  if (log_.append(r, error)) return true;
  std::lock_guard<std::mutex> lock(write_error_mutex_);
  if (write_error_.empty()) write_error_ = error;
  write_failed_.store(true);
  return false;
}

bool Campaign::stopping() const { return stop_requested().load() || write_failed_.load(); }

std::optional<int> Campaign::collect(std::vector<run::RunRecord>& records) {
  std::string error;
  if (!dir_.empty() && !write_failed_.load() && !log_.flush(error)) {
    write_error_ = error;
    write_failed_.store(true);
  }
  const bool interrupted = stop_requested().load();
  if (write_failed_.load() || interrupted) {
    if (isatty(STDERR_FILENO)) std::cerr << "\r\033[K";  // clears a progress line
    std::cerr << "racesim: " << command_ << (write_failed_.load() ? write_error_ : std::string("interrupted")) << "; ";
    if (dir_.empty()) {
      std::cerr << "stopped after " << records.size() << " of " << experiment_.expected_runs()
                << " runs, nothing kept (--out DIR keeps results as runs finish)\n";
    } else {
      std::cerr << log_.path() << " keeps " << log_.records_written() << " of " << experiment_.expected_runs()
                << " runs; to run the rest, repeat the command with --resume " << dir_ << " in place of --out\n";
    }
    const int sig = interrupt_signal();
    return !write_failed_.load() && sig != 0 ? 128 + sig : kExitUsage;
  }
  records.insert(records.end(), std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
  kept_.clear();
  if (!report::order_records(experiment_, records, error)) {
    std::cerr << "racesim: internal error: " << error << "\n";
    return kExitInternal;
  }
  return std::nullopt;
}

bool Campaign::finish(const std::vector<report::StrategySummary>& summaries) {
  if (dir_.empty()) return true;
  std::string error;
  if (log_.finish(report::format_csv(summaries, experiment_.axes),
                  report::format_markdown(experiment_.scenario, summaries), error)) {
    return true;
  }
  std::cerr << "racesim: " << command_ << error << "\n";
  return false;
}

}  // namespace racesim::cli
