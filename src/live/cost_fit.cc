// A mount's costs as live runs paid them: see cost_fit.h.
#include "src/live/cost_fit.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "src/report/results_file.h"

namespace racesim::live {

namespace {

// The largest value a cost sum may hold (bytes squared of 2^20 calls of 1 TiB): beyond, a results
// file is damaged, not a record of calls.
constexpr double kCostSumMax = 1e30;

// The most calls a count may hold: a whole number a double holds exactly (2^53), and one that
// converts to an integer.
constexpr double kCostCountMax = 9007199254740992.0;

// Sizes whose spread (standard deviation) is under this share of their mean are taken as one.
constexpr double kSizesVaryAtLeast = 0.05;

std::string fixed3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

// Each kind's words in the override file's comments, in the order they are written.
struct KindText {
  const char* kind;
  const char* what;
};
constexpr KindText kKindTexts[] = {
    {"read", "reads of a file with a content identity (a model's load)"},
    {"text_read", "reads of a text (a pointer, a marker)"},
    {"write", "writes of a file's bytes"},
    {"text_write", "writes of a text"},
};

}  // namespace

CostLine fit_cost_line(const storage::CostSums& s) {
  assert(s.count >= 1 && "fit_cost_line REQUIRES at least one call");
  CostLine line;
  const double n = s.count;
  line.count = static_cast<std::uint64_t>(n);
  const double mx = s.bytes / n;
  const double my = s.seconds / n;
  line.bytes_mean = mx;
  // The centred sums (never below 0: rounding).
  const double sxx = std::max(0.0, s.bytes_squared - s.bytes * s.bytes / n);
  const double syy = std::max(0.0, s.seconds_squared - s.seconds * s.seconds / n);
  const double sxy = s.bytes_seconds - s.bytes * s.seconds / n;
  if (mx < kTextBytesMax) {
    line.fitted = true;
    line.fixed_s = my;
    if (n > 1) line.fixed_se_s = std::sqrt(syy / (n - 1) / n);
    return line;
  }
  if (std::sqrt(sxx / n) < kSizesVaryAtLeast * mx) {
    line.note = "all of one size (" + mib(mx) + "): a fixed part and a rate cannot be told apart";
    return line;
  }
  const double per_byte = sxy / sxx;
  if (!(per_byte > 0) || !std::isfinite(1 / per_byte) || !(my > 0)) {
    line.note = "its time does not grow with its bytes";
    return line;
  }
  const double fixed = my - per_byte * mx;
  if (fixed < 0 && !std::isfinite(mx / my)) {
    line.note = "its time is too small for its bytes";
    return line;
  }
  line.fitted = true;
  if (fixed < 0) {
    line.fixed_s = 0;
    line.bytes_per_s = mx / my;
    line.note = "the line crossed 0 below no bytes: no fixed part, the rate of the mean size";
    return line;
  }
  line.fixed_s = fixed;
  line.bytes_per_s = 1 / per_byte;
  if (n > 2) {
    const double residual = std::max(0.0, syy - per_byte * sxy) / (n - 2);
    line.fixed_se_s = std::sqrt(residual * (1 / n + mx * mx / sxx));
  }
  return line;
}

bool cost_sums_of(const std::vector<run::RunRecord>& records, const std::string& mount,
                  CostSumsByKind& out, std::string& error,
                  std::map<std::string, CostSumsByKind>* by_program) {
  out.clear();
  if (by_program != nullptr) by_program->clear();
  for (const run::RunRecord& r : records) {
    for (const storage::CostKind& k : storage::kCostKinds) {
      const std::string prefix = "fs." + mount + ".cost." + k.name + ".";
      storage::CostSums sums;
      int found = 0;
      for (const storage::CostField& f : storage::kCostFields) {
        const auto it = r.metrics.find(prefix + f.name);
        if (it == r.metrics.end()) continue;
        ++found;
        sums.*f.value = it->second;
      }
      if (found == 0) continue;
      const int fields = static_cast<int>(std::size(storage::kCostFields));
      // Sums of real calls: counts and sizes never below 0, and each sum of squares at least
      // its sum's square over the count (Cauchy-Schwarz, within rounding).
      const auto at_least = [](double sq, double sum, double n) {
        return sq >= sum * sum / n * (1 - 1e-9);
      };
      // Each value finite and within what a run can hold (the limit keeps every product of two
      // sums finite), a whole count.
      const bool bounded = [&] {
        for (const storage::CostField& f : storage::kCostFields) {
          if (!(std::abs(sums.*f.value) <= kCostSumMax)) return false;
        }
        return sums.count == std::floor(sums.count) && sums.count <= kCostCountMax;
      }();
      if (found != fields || !bounded || !(sums.count >= 1) || sums.bytes < 0 || sums.seconds < 0 ||
          !at_least(sums.bytes_squared, sums.bytes, sums.count) ||
          !at_least(sums.seconds_squared, sums.seconds, sums.count)) {
        error = "seed " + std::to_string(r.seed) + " of " + r.strategy + ": " + prefix + "*: " +
                (found != fields
                     ? std::to_string(found) + " of its " + std::to_string(fields) + " fields"
                     : std::string("sums that no set of calls gives")) +
                " (a live run records count, bytes, seconds, bytes_squared, bytes_seconds, "
                "seconds_squared)";
        return false;
      }
      storage::CostSums& into = out[k.name];
      for (const storage::CostField& f : storage::kCostFields) into.*f.value += sums.*f.value;
      if (by_program != nullptr) {
        storage::CostSums& its = (*by_program)[report::program_label(r.point, r.strategy)][k.name];
        for (const storage::CostField& f : storage::kCostFields) its.*f.value += sums.*f.value;
      }
      if (!(into.bytes_squared <= kCostSumMax && into.seconds_squared <= kCostSumMax &&
            into.count <= kCostCountMax)) {
        error = prefix + "*: the runs' sums together pass what runs can make (2^53 calls, 1e30 " +
                "for a sum of squares)";
        return false;
      }
    }
  }
  return true;
}

std::string format_cost_overrides(const std::string& mount, const CostSource& source,
                                  const std::map<std::string, CostLine>& lines,
                                  const std::map<std::string, CostSumsByKind>& by_program) {
  std::ostringstream s;
  const std::string key = "platform.storage." + mount + ".";
  s << "# " << source.command << "\n";
  s << "# the live workers' own costs, call by call (their thread CPU clocks): " << source.runs
    << "\n";
  s << "# each kind's line, cost = fixed + bytes / rate, by least squares (real time; the values "
       "below are\n"
       "#   the runs' virtual time at scale "
    << source.scale << "; +- one standard error)\n";
  std::ostringstream values;
  for (const KindText& k : kKindTexts) {
    const auto it = lines.find(k.kind);
    if (it == lines.end()) continue;
    const CostLine& l = it->second;
    s << "# " << k.what << ": " << l.count << " of them, " << mib(l.bytes_mean) << " on average: ";
    assert((!l.fitted || (std::isfinite(l.fixed_s) && std::isfinite(l.bytes_per_s))) &&
           "a fitted line is finite (cost_sums_of bounds the sums)");
    if (!l.fitted) {
      s << "not fitted, " << l.note << "; the calibration's stand\n";
      continue;
    }
    s << fixed3(l.fixed_s * source.scale * 1e3) << " ms";
    if (const double se_ms = l.fixed_se_s * source.scale * 1e3; se_ms >= 0.0005)
      s << " +- " << fixed3(se_ms);
    if (l.bytes_per_s > 0)
      s << " + " << fixed3(l.bytes_per_s / source.scale / (1024.0 * 1024.0)) << " MiB/s";
    if (!l.note.empty()) s << " (" << l.note << ")";
    s << "\n";
    values << key << "file_overhead." << k.kind << "="
           << static_cast<long long>(std::llround(l.fixed_s * 1e9)) << "ns\n";
    if (l.bytes_per_s <= 0) continue;
    const std::string kind = k.kind;
    const char* rate_key =
        kind == "read"    ? "read_bandwidth"
        : kind == "write" ? (source.write_back ? "page_cache_stream_bandwidth" : "client_bandwidth")
                          : nullptr;
    if (rate_key != nullptr) {
      values << key << rate_key << "=" << static_cast<long long>(std::llround(l.bytes_per_s))
             << "B/s\n";
    }
  }
  if (by_program.size() >= 2) {
    s << "# each kind's mean cost by program (real time): what runs beside a call can change its "
         "cost,\n#   and the line above charges every program's calls alike\n";
    for (const KindText& k : kKindTexts) {
      bool said = false;
      for (const auto& [program, kinds] : by_program) {
        const auto it = kinds.find(k.kind);
        if (it == kinds.end() || !(it->second.count >= 1)) continue;
        const storage::CostSums& c = it->second;
        if (!said) s << "#   " << k.what << ":\n";
        said = true;
        const double mean_ms = c.seconds / c.count * source.scale * 1e3;
        s << "#     " << program << ": " << static_cast<long long>(c.count) << ", "
          << mib(c.bytes / c.count) << ", " << fixed3(mean_ms) << " ms";
        if (c.bytes / c.count >= kTextBytesMax)
          s << " (" << fixed3(c.seconds * source.scale * 1e3 / (c.bytes / (1024.0 * 1024.0)))
            << " ms per MiB)";
        s << "\n";
      }
    }
  }
  s << values.str();
  return s.str();
}

}  // namespace racesim::live
