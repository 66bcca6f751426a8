// Progress while runs are made (progress.h).
#include "src/cli/progress.h"

#include <chrono>
#include <cmath>

namespace racesim::cli {

std::optional<ProgressMode> parse_progress(const std::string& text, bool terminal) {
  if (text == "auto") return terminal ? ProgressMode::kBar : ProgressMode::kLines;
  if (text == "bar") return ProgressMode::kBar;
  if (text == "lines") return ProgressMode::kLines;
  if (text == "none") return ProgressMode::kNone;
  return std::nullopt;
}

namespace {

// "45s", "12min 3s", "2h 5min".
std::string duration_text(double s) {
  const long total = std::lround(std::max(0.0, s));
  char buf[48];
  if (total < 60) {
    std::snprintf(buf, sizeof buf, "%lds", total);
  } else if (total < 3600) {
    std::snprintf(buf, sizeof buf, "%ldmin %lds", total / 60, total % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ldh %ldmin", total / 3600, total % 3600 / 60);
  }
  return buf;
}

}  // namespace

std::string progress_line(std::size_t done, std::size_t total, double elapsed_s) {
  char buf[160];
  const std::size_t percent = total ? done * 100 / total : 100;
  if (done == 0 || elapsed_s <= 0) {
    std::snprintf(buf, sizeof buf, "%zu/%zu runs (%zu%%)", done, total, percent);
    return buf;
  }
  const double rate = static_cast<double>(done) / elapsed_s;
  const double left_s = static_cast<double>(total - done) / rate;
  // Three significant digits, and whole runs from 100/s up (3610 runs/s, not 3.61e+03).
  std::snprintf(buf, sizeof buf, rate >= 100 ? "%zu/%zu runs (%zu%%), %.0f runs/s, %s left"
                                             : "%zu/%zu runs (%zu%%), %.3g runs/s, %s left",
                done, total, percent, rate, duration_text(left_s).c_str());
  return buf;
}

Progress::Progress(ProgressMode mode, std::FILE* out, std::function<double()> now_s)
    : mode_(mode), out_(out), now_s_(std::move(now_s)) {
  if (!now_s_) {
    now_s_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
  started_s_ = last_s_ = now_s_();
}

void Progress::update(std::size_t done, std::size_t total) {
  if (mode_ == ProgressMode::kNone) return;
  const double now = now_s_();
  const bool last = done >= total;
  if (mode_ == ProgressMode::kBar) {
    if (!last && now - last_s_ < kBarEvery_s) return;
    last_s_ = now;
    std::fprintf(out_, "\r%s\033[K", progress_line(done, total, now - started_s_).c_str());
    if (last) std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
    return;
  }
  if (now - last_s_ < kLinesEvery_s) return;
  last_s_ = now;
  std::fprintf(out_, "racesim: %s\n", progress_line(done, total, now - started_s_).c_str());
  std::fflush(out_);
}

}  // namespace racesim::cli
