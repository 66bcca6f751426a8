#include "sim/kernel/trace.h"

#include <bit>
#include <cassert>
#include <cstdio>
#include <map>

namespace racesim::kernel {

void Trace::mix_text(std::string_view s) {
  mix(s.size());
  // Each whole 8 bytes as one big-endian word, then the rest (fewer than 8) as one shorter word:
  // the fold's definition, byte by byte, is w = (w << 8) | c; loading 8 bytes at once gives the
  // same words in a quarter of the instructions (Trace::record was 7% of a device-guards run).
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    __builtin_memcpy(&w, p, sizeof w);
    if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
    mix(w);
  }
  if (n != 0) {
    std::uint64_t w = 0;
    for (; n != 0; --n) w = (w << 8) | static_cast<unsigned char>(*p++);
    mix(w);
  }
}

void Trace::record(Time t, std::int32_t pid, char phase, std::string_view category,
                   std::string_view name, std::string_view args_json, double value) {
  if (level_ == TraceLevel::kOff) return;
  ++count_;
  mix(static_cast<std::uint64_t>(t));
  mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid)) << 8) |
      static_cast<unsigned char>(phase));
  mix_text(category);
  mix_text(name);
  mix_text(args_json);
  std::uint64_t bits;
  static_assert(sizeof bits == sizeof value);
  __builtin_memcpy(&bits, &value, sizeof bits);
  mix(bits);
  if (level_ == TraceLevel::kFull) {
    records_.push_back({t, pid, phase, std::string(category), std::string(name),
                        std::string(args_json), value});
  }
}

void Trace::timeline(Time t, std::int32_t pid, char phase, std::string_view category,
                     std::string_view name, std::string_view args_json) {
  if (level_ != TraceLevel::kFull) return;
  records_.push_back(
      {t, pid, phase, std::string(category), std::string(name), std::string(args_json), 0});
}

void Trace::annotate_last(std::string args_json) {
  assert(level_ == TraceLevel::kFull && !records_.empty() && "annotate_last REQUIRES a stored record");
  if (records_.back().args_json.empty()) records_.back().args_json = std::move(args_json);
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

namespace {

// Microseconds with three decimals, exact for integer nanoseconds.
std::string format_us(Time t) {
  const bool neg = t < 0;
  const unsigned long long v = neg ? static_cast<unsigned long long>(-(t + 1)) + 1
                                   : static_cast<unsigned long long>(t);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "", v / 1000, v % 1000);
  return buf;
}

}  // namespace

void write_chrome_trace(std::ostream& out, const std::vector<TraceRecord>& records,
                        const std::vector<TraceLane>& lanes, Time end) {
  // Chrome pids: 1 + index of the group in first-seen order of the lanes (deterministic);
  // tids: 1 + simulated pid. Records without a process use group 0 "sim", tid 0.
  std::map<std::string, int> group_ids;
  std::vector<std::string> group_names;
  std::vector<int> chrome_pid_of;  // by simulated pid
  for (const TraceLane& l : lanes) {
    auto [it, inserted] = group_ids.emplace(l.group, static_cast<int>(group_names.size()) + 1);
    if (inserted) group_names.push_back(l.group);
    if (chrome_pid_of.size() <= static_cast<std::size_t>(l.pid)) chrome_pid_of.resize(l.pid + 1, 0);
    chrome_pid_of[l.pid] = it->second;
  }
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  sep();
  out << R"({"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"sim"}})";
  for (std::size_t g = 0; g < group_names.size(); ++g) {
    sep();
    out << R"({"ph":"M","name":"process_name","pid":)" << g + 1
        << R"(,"tid":0,"args":{"name":")" << json_escape(group_names[g]) << "\"}}";
    sep();
    out << R"({"ph":"M","name":"process_sort_index","pid":)" << g + 1
        << R"(,"tid":0,"args":{"sort_index":)" << g + 1 << "}}";
  }
  for (const TraceLane& l : lanes) {
    sep();
    out << R"({"ph":"M","name":"thread_name","pid":)" << chrome_pid_of[l.pid]
        << ",\"tid\":" << l.pid + 1 << R"(,"args":{"name":")" << json_escape(l.lane) << "\"}}";
  }
  // The slices open on each lane (by pid + 1, 0 for none): the records of their begins.
  std::map<std::int32_t, std::vector<const TraceRecord*>> open;
  for (const TraceRecord& r : records) {
    assert(r.time <= end && "write_chrome_trace REQUIRES end >= every record's time");
    if (r.phase == 'B') open[r.pid].push_back(&r);
    if (r.phase == 'E') {
      auto& o = open[r.pid];
      if (!o.empty()) o.pop_back();
    }
  }
  std::vector<TraceRecord> closing;
  for (const auto& [pid, begins] : open) {
    for (auto b = begins.rbegin(); b != begins.rend(); ++b) {
      closing.push_back({end, pid, 'E', (*b)->category, (*b)->name, R"({"open_at_end":true})", 0});
    }
  }
  auto write = [&](const TraceRecord& r) {
    const bool has_proc = r.pid >= 0 && static_cast<std::size_t>(r.pid) < chrome_pid_of.size();
    const int cpid = has_proc ? chrome_pid_of[r.pid] : 0;
    const int tid = has_proc ? r.pid + 1 : 0;
    sep();
    out << "{\"ph\":\"" << r.phase << "\",\"ts\":" << format_us(r.time) << ",\"pid\":" << cpid
        << ",\"tid\":" << tid << ",\"cat\":\"" << json_escape(r.category) << "\",\"name\":\""
        << json_escape(r.name) << "\"";
    if (r.phase == 'i') out << ",\"s\":\"t\"";
    if (r.phase == 'C') {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", r.value);
      out << ",\"args\":{\"" << json_escape(r.name) << "\":" << buf << "}";
    } else if (!r.args_json.empty()) {
      out << ",\"args\":" << r.args_json;
    }
    out << "}";
  };
  for (const TraceRecord& r : records) write(r);
  for (const TraceRecord& r : closing) write(r);
  out << "\n]}\n";
}

}  // namespace racesim::kernel
