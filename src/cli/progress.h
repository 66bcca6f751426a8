// What a command that makes many runs shows while it works (--progress): a line rewritten in
// place on a terminal (bar), a line every 10 s for a log or a batch job's output (lines), or
// nothing. Each says runs done of all, the rate so far and the time left at that rate.
//
// The clock is the wall clock of the command line, never the simulation's: progress is about the
// machine, and no run's result depends on it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace racesim::cli {

enum class ProgressMode { kNone, kBar, kLines };

// "auto" (bar on a terminal, lines otherwise), "bar", "lines" or "none"; nullopt otherwise.
std::optional<ProgressMode> parse_progress(const std::string& text, bool terminal);
inline constexpr const char* kProgressValues = "auto, bar, lines, none";

// "1200/5000 runs (24%), 310 runs/s, 12s left": `elapsed_s` since the first run started.
std::string progress_line(std::size_t done, std::size_t total, double elapsed_s);

class Progress {
 public:
  // The seconds between two lines in lines mode, and between two redraws of the bar.
  static constexpr double kLinesEvery_s = 10;
  static constexpr double kBarEvery_s = 0.1;

  // `now_s` is a clock in seconds (the steady clock; a test's own).
  Progress(ProgressMode mode, std::FILE* out, std::function<double()> now_s = {});
  // A run ended: `done` of `total`. Prints when the mode's interval has passed, and a bar's last
  // state (cleared) at the end. Lines mode prints nothing for a command shorter than one
  // interval, so a short command's output is its result alone.
  void update(std::size_t done, std::size_t total);

 private:
  ProgressMode mode_;
  std::FILE* out_;
  std::function<double()> now_s_;
  double started_s_ = 0;
  double last_s_ = 0;
};

}  // namespace racesim::cli
