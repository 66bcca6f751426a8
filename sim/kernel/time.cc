#include "sim/kernel/time.h"

#include <cctype>

namespace racesim::kernel {

namespace {

struct Unit {
  std::string_view name;
  Time scale;
};
constexpr Unit kUnits[] = {{"ns", kNanosecond}, {"us", kMicrosecond}, {"ms", kMillisecond},
                           {"s", kSecond},      {"min", kMinute},     {"h", kHour}};

}  // namespace

Result<Time> parse_duration(std::string_view text, bool* exact) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return Result<Time>::error("expected a duration like '200ms', got ''");
  if (text[i] == '-') {
    return Result<Time>::error("expected a non-negative duration, got " + quoted);
  }
  if (text[i] == '+') ++i;
  // Integer part and fraction are accumulated exactly: value = whole + frac_num / frac_den.
  unsigned __int128 whole = 0;
  unsigned __int128 frac_num = 0;
  unsigned __int128 frac_den = 1;
  bool any_digit = false;
  constexpr unsigned __int128 kCap = static_cast<unsigned __int128>(1) << 100;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > kCap) return Result<Time>::error("duration " + quoted + " is out of range");
    any_digit = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac_den < static_cast<unsigned __int128>(1'000'000'000'000'000'000ULL)) {
        frac_num = frac_num * 10 + static_cast<unsigned>(text[i] - '0');
        frac_den *= 10;
      }
      any_digit = true;
      ++i;
    }
  }
  if (!any_digit) {
    return Result<Time>::error("expected a duration like '200ms' (number then unit), got " +
                               quoted);
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  const std::string_view unit = text.substr(i, end - i);
  if (unit.empty()) {
    return Result<Time>::error("duration " + quoted +
                               " has no unit (expected one of ns, us, ms, s, min, h)");
  }
  for (const Unit& u : kUnits) {
    if (u.name != unit) continue;
    const unsigned __int128 scale = static_cast<unsigned __int128>(u.scale);
    const unsigned __int128 ns_whole = whole * scale;
    // Round half up the fractional nanoseconds.
    const unsigned __int128 ns_frac = (frac_num * scale * 2 + frac_den) / (2 * frac_den);
    if (exact != nullptr) *exact = frac_num * scale % frac_den == 0;
    const unsigned __int128 total = ns_whole + ns_frac;
    if (total > static_cast<unsigned __int128>(kTimeMax)) {
      return Result<Time>::error("duration " + quoted + " is out of range (max about 292 years)");
    }
    return static_cast<Time>(total);
  }
  return Result<Time>::error("duration " + quoted + " has unknown unit '" + std::string(unit) +
                             "' (expected one of ns, us, ms, s, min, h)");
}

std::string format_duration(Time t) {
  if (t == 0) return "0s";
  std::string sign;
  unsigned long long v;
  if (t < 0) {
    sign = "-";
    v = static_cast<unsigned long long>(-(t + 1)) + 1;
  } else {
    v = static_cast<unsigned long long>(t);
  }
  // Largest unit (up to seconds) such that the value is >= 1 in that unit; up to 9 decimals,
  // trailing zeros trimmed, so the text parses back to the same value.
  struct U {
    const char* name;
    unsigned long long scale;
  };
  static constexpr U kOut[] = {{"s", 1'000'000'000ULL}, {"ms", 1'000'000ULL}, {"us", 1'000ULL},
                               {"ns", 1ULL}};
  for (const U& u : kOut) {
    if (v < u.scale && u.scale != 1) continue;
    const unsigned long long whole = v / u.scale;
    unsigned long long frac = v % u.scale;
    std::string out = sign + std::to_string(whole);
    if (frac != 0) {
      int digits = 0;
      for (unsigned long long s = u.scale; s > 1; s /= 10) ++digits;
      std::string f = std::to_string(frac);
      f.insert(0, static_cast<std::size_t>(digits) - f.size(), '0');
      while (!f.empty() && f.back() == '0') f.pop_back();
      out += "." + f;
    }
    return out + u.name;
  }
  return sign + std::to_string(v) + "ns";
}

}  // namespace racesim::kernel
