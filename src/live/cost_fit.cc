// A mount's costs as live runs paid them: see cost_fit.h.
#include "src/live/cost_fit.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "src/live/board.h"
#include "src/live/calibrate.h"
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

std::string fixed2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string mib_per_s(double bytes_per_s) { return fixed3(bytes_per_s / (1024.0 * 1024.0)) + " MiB/s"; }

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

// Run `r`'s reads amid writes (read_amid_writes) are a part of its reads alone (read_alone):
// no more calls, bytes or seconds (within rounding). False, with `error` naming the seed, when not.
bool amid_writes_within_alone(const run::RunRecord& r, const std::string& mount, std::string& error) {
  const std::string amid = "fs." + mount + ".cost.read_amid_writes.", alone = "fs." + mount + ".cost.read_alone.";
  const auto value = [&r](const std::string& name) {
    const auto it = r.metrics.find(name);
    return it == r.metrics.end() ? 0.0 : it->second;
  };
  for (const char* field : {"count", "bytes", "seconds"}) {
    const double part = value(amid + field), whole = value(alone + field);
    if (part > whole * (1 + 1e-9) + 1e-12) {
      error = "seed " + std::to_string(r.seed) + " of " + r.strategy + ": " + amid + field + " (" + fixed3(part) +
              ") is above " + alone + field + " (" + fixed3(whole) +
              "): the reads amid writes are a part of the reads alone";
      return false;
    }
  }
  return true;
}

// Adds kQuietReads to `kinds`: read_alone less read_amid_writes, where both are there and calls
// remain.
void add_quiet_reads(CostSumsByKind& kinds) {
  const auto alone = kinds.find("read_alone"), amid = kinds.find("read_amid_writes");
  if (alone == kinds.end() || amid == kinds.end()) return;
  storage::CostSums quiet = alone->second;
  for (const storage::CostField& f : storage::kCostFields) quiet.*f.value -= amid->second.*f.value;
  // Whole counts, each a part of the other's (amid_writes_within_alone): exact.
  if (!(quiet.count >= 1)) return;
  // Sums that rounding took below 0 are 0.
  for (const storage::CostField& f : storage::kCostFields) quiet.*f.value = std::max(0.0, quiet.*f.value);
  kinds[kQuietReads] = quiet;
}

// The disk's rates from the runs' fsyncs (format_cost_overrides): comments into `s`, overrides
// into `values`. `find` gives a kind's line, or nullptr when no call had it.
template <typename Find>
void put_disk_rates(std::ostringstream& s, std::ostringstream& values, const std::string& key,
                    const CostSource& source, const Find& find) {
  const CostLine* all = find("sync");
  if (all == nullptr) return;
  s << "# fsyncs (real time: the caller sleeps while the disk works): " << all->count << " of them, "
    << mib(all->bytes_mean) << " on average, " << fixed3(all->seconds_mean * source.scale * 1e3) << " ms each";
  if (!source.write_back) {
    s << ": no disk behind this file system (no write-back); nothing set\n";
    return;
  }
  if (!(all->origin_bytes_per_s > 0)) {
    s << ": no bytes to fit a rate to; the calibration's disk stands\n";
    return;
  }
  s << ": the line through 0 " << mib_per_s(all->origin_bytes_per_s / source.scale) << "\n";
  const CostLine* alone = find("sync_alone");
  const CostLine* beside = find("sync_beside");
  const bool counted = alone != nullptr || beside != nullptr;
  const bool from_alone = alone != nullptr && alone->origin_bytes_per_s > 0;
  const double one = from_alone ? alone->origin_bytes_per_s : all->origin_bytes_per_s;
  if (counted) {
    s << "#   alone (no other fsync running at any moment): ";
    if (alone == nullptr) {
      s << "none: the line of all of them";
    } else {
      s << alone->count << ", " << mib(alone->bytes_mean) << " on average: "
        << (from_alone ? mib_per_s(one / source.scale) : std::string("no bytes: the line of all of them"));
    }
    s << " (disk_stream_bandwidth)\n";
  } else {
    s << "#   as one fsync's rate (disk_stream_bandwidth); the runs did not count the fsyncs at once\n";
  }
  double shared = one;
  if (beside != nullptr && beside->origin_bytes_per_s > 0) {
    const double running = std::max(1.0, beside->running_mean);
    shared = std::max(one, beside->origin_bytes_per_s * running);
    s << "#   beside others: " << beside->count << ", " << mib(beside->bytes_mean) << " on average, "
      << fixed2(beside->running_mean) << " running at once on average: "
      << mib_per_s(beside->origin_bytes_per_s / source.scale) << " each x " << fixed2(running)
      << ", at least one's rate: " << mib_per_s(shared / source.scale) << " (client_bandwidth, bandwidth)\n";
  } else {
    s << "#   none ran beside another: what fsyncs at once share set to one's rate (client_bandwidth, "
         "bandwidth)\n";
  }
  for (const auto& [name, rate] : {std::pair<const char*, double>{"disk_stream_bandwidth", one},
                                   {"client_bandwidth", shared}, {"bandwidth", shared}}) {
    values << key << name << "=" << static_cast<long long>(std::llround(rate)) << "B/s\n";
  }
}

}  // namespace

CostLine fit_cost_line(const storage::CostSums& s) {
  assert(s.count >= 1 && "fit_cost_line REQUIRES at least one call");
  CostLine line;
  const double n = s.count;
  line.count = static_cast<std::uint64_t>(n);
  const double mx = s.bytes / n;
  const double my = s.seconds / n;
  line.bytes_mean = mx;
  line.seconds_mean = my;
  line.running_mean = s.running / n;
  if (s.bytes_seconds > 0 && s.bytes_squared > 0 && std::isfinite(s.bytes_squared / s.bytes_seconds)) {
    line.origin_bytes_per_s = s.bytes_squared / s.bytes_seconds;
  }
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

SharedRate fit_shared_rate(const CostLine& alone, const CostLine& beside) {
  assert(alone.fitted && alone.bytes_per_s > 0 && beside.count >= 1 &&
         "fit_shared_rate REQUIRES a line alone with a rate and calls beside others");
  SharedRate r;
  const double on_line_s = alone.fixed_s + beside.bytes_mean / alone.bytes_per_s;
  r.extra_s = std::max(0.0, beside.seconds_mean - on_line_s);
  r.each_bytes_per_s = beside.bytes_mean > 0 ? rate_beside(alone.bytes_per_s, beside.bytes_mean, on_line_s,
                                                            beside.seconds_mean)
                                             : alone.bytes_per_s;
  r.bytes_per_s = r.each_bytes_per_s * std::max(1.0, beside.running_mean);
  return r;
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
      // Of calls beside others, how many ran at once (each at least itself, at most what a
      // board counts): optional, as runs before the board counted copies have none.
      const auto running = r.metrics.find(prefix + "running");
      const bool running_bad =
          running != r.metrics.end() &&
          !(running->second >= sums.count && running->second <= sums.count * Board::kMaxCopies);
      if (running != r.metrics.end()) sums.running = running->second;
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
      if (found != fields || !bounded || running_bad || !(sums.count >= 1) || sums.bytes < 0 || sums.seconds < 0 ||
          !at_least(sums.bytes_squared, sums.bytes, sums.count) ||
          !at_least(sums.seconds_squared, sums.seconds, sums.count)) {
        error = "seed " + std::to_string(r.seed) + " of " + r.strategy + ": " + prefix + "*: " +
                (found != fields
                     ? std::to_string(found) + " of its " + std::to_string(fields) + " fields"
                     : std::string("sums that no set of calls gives")) +
                " (a live run records count, bytes, seconds, bytes_squared, bytes_seconds, "
                "seconds_squared, and of calls beside others running: 1 to " +
                std::to_string(Board::kMaxCopies) + " a call)";
        return false;
      }
      storage::CostSums& into = out[k.name];
      for (const storage::CostField& f : storage::kCostFields) into.*f.value += sums.*f.value;
      into.running += sums.running;
      if (by_program != nullptr) {
        storage::CostSums& its = (*by_program)[report::program_label(r.point, r.strategy)][k.name];
        for (const storage::CostField& f : storage::kCostFields) its.*f.value += sums.*f.value;
        its.running += sums.running;
      }
      if (!(into.bytes_squared <= kCostSumMax && into.seconds_squared <= kCostSumMax &&
            into.count <= kCostCountMax)) {
        error = prefix + "*: the runs' sums together pass what runs can make (2^53 calls, 1e30 " +
                "for a sum of squares)";
        return false;
      }
    }
    if (!amid_writes_within_alone(r, mount, error)) return false;
  }
  add_quiet_reads(out);
  if (by_program != nullptr) {
    for (auto& [program, kinds] : *by_program) add_quiet_reads(kinds);
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
  const auto put_line = [&](const CostLine& l) {
    assert((!l.fitted || (std::isfinite(l.fixed_s) && std::isfinite(l.bytes_per_s))) &&
           "a fitted line is finite (cost_sums_of bounds the sums)");
    s << fixed3(l.fixed_s * source.scale * 1e3) << " ms";
    if (const double se_ms = l.fixed_se_s * source.scale * 1e3; se_ms >= 0.0005)
      s << " +- " << fixed3(se_ms);
    if (l.bytes_per_s > 0) s << " + " << mib_per_s(l.bytes_per_s / source.scale);
    if (!l.note.empty()) s << " (" << l.note << ")";
  };
  const auto find = [&](const std::string& kind) -> const CostLine* {
    const auto it = lines.find(kind);
    return it == lines.end() || it->second.count == 0 ? nullptr : &it->second;
  };
  for (const KindText& k : kKindTexts) {
    const CostLine* all = find(k.kind);
    if (all == nullptr) continue;
    const std::string kind = k.kind;
    const bool copy = kind == "read" || kind == "write";
    s << "# " << k.what << ": " << all->count << " of them, " << mib(all->bytes_mean) << " on average: ";
    if (all->fitted) {
      put_line(*all);
    } else {
      s << "not fitted, " << all->note << "; the calibration's stand";
    }
    s << "\n";
    // Where the runs counted each copy's company: the line of those alone, and what those beside
    // others share.
    const CostLine* alone = copy ? find(kind + "_alone") : nullptr;
    const CostLine* beside = copy ? find(kind + "_beside") : nullptr;
    // Where the reads amid writes were counted and those with no copy beside them give a line, a
    // read alone is one of those.
    const CostLine* amid = kind == "read" ? find("read_amid_writes") : nullptr;
    const CostLine* quiet = amid != nullptr ? find(kQuietReads) : nullptr;
    const bool quiet_line = quiet != nullptr && quiet->fitted && quiet->bytes_per_s > 0;
    if (quiet_line) alone = quiet;
    const CostLine* own = all->fitted ? all : nullptr;
    if (alone != nullptr || beside != nullptr) {
      const char* company = kind == "read" && !quiet_line ? "no other read" : "no other read or write";
      s << "#   alone (" << company << " running at any moment): ";
      if (alone == nullptr) {
        s << "none";
      } else {
        s << alone->count << ", " << mib(alone->bytes_mean) << " on average: ";
        if (alone->fitted && alone->bytes_per_s > 0) {
          put_line(*alone);
          own = alone;
        } else {
          s << "no line (" << (alone->fitted ? "no rate" : alone->note) << ")";
        }
      }
      // (`alone` may be null, as `own` may: a line of the calls alone is one that is there.)
      const bool from_alone = own != nullptr && own == alone;
      if (from_alone) {
        s << ": the fixed part and the rate below\n";
      } else if (own != nullptr) {
        s << ": the line of all of them stands below, and holds what running beside others cost\n";
      } else {
        s << ": the calibration's stand\n";
      }
      if (amid != nullptr) {
        s << "#   amid writes (no other read, a write running at some moment): " << amid->count << ", "
          << mib(amid->bytes_mean) << " on average, " << fixed3(amid->seconds_mean * source.scale * 1e3)
          << " ms each";
        if (quiet_line) {  // then `alone` is the quiet reads' line, and the line below
          // One read at a time: what a read took more beside writes is its own rate's.
          const SharedRate r = fit_shared_rate(*alone, *amid);
          s << ": " << fixed3(r.extra_s * source.scale * 1e3) << " ms more than the line alone, on their bytes "
            << mib_per_s(r.each_bytes_per_s / source.scale) << " (read_amid_writes_bandwidth)\n";
          values << key << "read_amid_writes_bandwidth=" << static_cast<long long>(std::llround(r.each_bytes_per_s))
                 << "B/s\n";
        } else {
          s << ": no line of the reads with no copy beside them ("
            << (quiet == nullptr ? std::string("none") : quiet->fitted ? std::string("no rate") : quiet->note)
            << ") to set them against; the line above holds them\n";
        }
      }
      if (beside != nullptr) {
        const char* shared_key = kind == "read"   ? "read_shared_bandwidth"
                                 : source.write_back ? "page_cache_bandwidth"
                                                     : "bandwidth";
        const double running = std::max(1.0, beside->running_mean);
        s << "#   beside others: " << beside->count << ", " << mib(beside->bytes_mean)
          << " on average, " << fixed3(beside->seconds_mean * source.scale * 1e3) << " ms each, "
          << fixed2(beside->running_mean) << " running at once on average";
        double shared = 0;
        if (from_alone) {
          const SharedRate r = fit_shared_rate(*alone, *beside);
          s << ": " << fixed3(r.extra_s * source.scale * 1e3)
            << " ms more than the line alone, on their bytes " << mib_per_s(r.each_bytes_per_s / source.scale)
            << " each while running, x " << fixed2(running) << " (" << shared_key << ")\n";
          shared = r.bytes_per_s;
        } else if (own != nullptr && own->bytes_per_s > 0) {
          // The line already holds their company's cost: the sharing takes nothing more from
          // copies at once (the calibration's, measured apart, would count it again).
          s << ": the sharing set to take no more than the line gives, its rate x " << fixed2(running)
            << " (" << shared_key << ")\n";
          shared = own->bytes_per_s * running;
        } else {
          s << ": no line to set against; the calibration's " << shared_key << " stands\n";
        }
        if (shared > 0) {
          values << key << shared_key << "=" << static_cast<long long>(std::llround(shared)) << "B/s\n";
        }
      }
    }
    if (own == nullptr) continue;
    values << key << "file_overhead." << k.kind << "="
           << static_cast<long long>(std::llround(own->fixed_s * 1e9)) << "ns\n";
    if (own->bytes_per_s <= 0) continue;
    const char* rate_key =
        kind == "read"    ? "read_bandwidth"
        : kind == "write" ? (source.write_back ? "page_cache_stream_bandwidth" : "client_bandwidth")
                          : nullptr;
    if (rate_key != nullptr) {
      values << key << rate_key << "=" << static_cast<long long>(std::llround(own->bytes_per_s))
             << "B/s\n";
    }
  }
  put_disk_rates(s, values, key, source, find);
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
