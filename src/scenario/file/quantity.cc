#include "src/scenario/file/quantity.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "sim/kernel/time.h"

namespace racesim::scenario {

namespace {

struct ByteUnit {
  std::string_view name;
  double scale;
};
constexpr ByteUnit kByteUnits[] = {
    {"B", 1.0},          {"KB", 1e3},           {"MB", 1e6},
    {"GB", 1e9},         {"TB", 1e12},          {"KiB", 1024.0},
    {"MiB", 1048576.0},  {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "180 MiB" into a non-negative decimal number and the unit text after it.
bool split_number(std::string_view s, double& number, std::string_view& unit) {
  s = trim(s);
  std::size_t i = 0;
  bool digit = false, dot = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && !dot))) {
    if (s[i] == '.') dot = true; else digit = true;
    ++i;
  }
  if (!digit) return false;
  // Exponent ("1e9") for plain numbers.
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && i + 1 < s.size() &&
      (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+')) {
    std::size_t j = i + 1;
    if (s[j] == '-' || s[j] == '+') ++j;
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      i = j;
    }
  }
  const std::string num(s.substr(0, i));
  char* end = nullptr;
  number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(number)) return false;
  unit = trim(s.substr(i));
  return true;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

// What messages say of each unit, in the order of enum Unit: its name, an example, its largest value.
struct UnitText {
  const char* name;
  const char* example;
  const char* max;
};
constexpr UnitText kUnitTexts[] = {
    {"duration", "'200ms'", "100 days (8640000s)"},
    {"size in bytes", "'180MiB'", "4096TiB"},
    {"bandwidth", "'5GB/s'", "1000TB/s"},
    {"count", "8", "2147483647"},
    {"number", "0.25", "1e15"},
};
static_assert(std::size(kUnitTexts) == static_cast<std::size_t>(Unit::kNumber) + 1, "a text for every unit");

const char* to_string(Unit unit) { return kUnitTexts[static_cast<std::size_t>(unit)].name; }
const char* example_of(Unit unit) { return kUnitTexts[static_cast<std::size_t>(unit)].example; }
const char* max_text(Unit unit) { return kUnitTexts[static_cast<std::size_t>(unit)].max; }

Result<std::int64_t> parse_bytes(std::string_view text) {
  double n = 0;
  std::string_view unit;
  if (trim(text).substr(0, 1) == "-") {
    return Result<std::int64_t>::error("expected a non-negative size, got " + quoted(text));
  }
  if (!split_number(text, n, unit)) {
    return Result<std::int64_t>::error("expected a size like '180MiB', got " + quoted(text));
  }
  if (unit.empty()) {
    return Result<std::int64_t>::error("size " + quoted(text) +
                                       " has no unit (expected B, KB, MB, GB, TB, KiB, MiB, GiB "
                                       "or TiB)");
  }
  for (const ByteUnit& u : kByteUnits) {
    if (u.name != unit) continue;
    const double exact = n * u.scale;
    const double bytes = std::round(exact);
    if (bytes > 9.0e15) return Result<std::int64_t>::error("size " + quoted(text) + " is too large");
    // A fraction of a byte is an error, not a rounding (so "0.5B" is not 1 B while "0B" is refused);
    // the tolerance is the product's rounding error ("1.1KB" is 1100.0000000000002).
    if (std::fabs(exact - bytes) > std::max(1e-6, bytes * 4e-16)) {
      return Result<std::int64_t>::error("size " + quoted(text) + " is not a whole number of bytes");
    }
    return static_cast<std::int64_t>(bytes);
  }
  return Result<std::int64_t>::error("size " + quoted(text) + " has unknown unit " +
                                     quoted(unit) +
                                     " (expected B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
}

Result<double> parse_bandwidth(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.size() < 2 || t.substr(t.size() - 2) != "/s") {
    return Result<double>::error("expected a bandwidth like '5GB/s' (a size per second), got " +
                                 quoted(text));
  }
  auto bytes = parse_bytes(t.substr(0, t.size() - 2));
  if (!bytes) return Result<double>::error("bandwidth " + quoted(text) + ": " + bytes.message());
  if (*bytes == 0) return Result<double>::error("bandwidth " + quoted(text) + " must be positive");
  return static_cast<double>(*bytes);
}

namespace {

// A value the text gives exactly (durations and sizes in whole nanoseconds and bytes), or an
// error naming the grain it falls between.
Result<double> parse_exact(std::string_view text, Unit unit) {
  switch (unit) {
    case Unit::kDuration: {
      bool exact = true;
      auto d = kernel::parse_duration(text, &exact);
      if (!d) return Result<double>(d.status());
      if (!exact) {
        return Result<double>::error("duration " + quoted(text) +
                                     " is not a whole number of nanoseconds (the finest a duration can be)");
      }
      return static_cast<double>(*d);
    }
    case Unit::kBytes: {
      auto b = parse_bytes(text);
      if (!b) return Result<double>(b.status());
      return static_cast<double>(*b);
    }
    case Unit::kBandwidth:
      return parse_bandwidth(text);
    case Unit::kCount: {
      const std::string_view t = trim(text);
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size() || t.empty() || v > (1ULL << 53)) {
        return Result<double>::error("expected a whole number >= 0 like 8, got " + quoted(text));
      }
      return static_cast<double>(v);
    }
    case Unit::kNumber: {
      double n = 0;
      std::string_view rest;
      std::string_view t = trim(text);
      const bool neg = !t.empty() && t.front() == '-';
      if (neg) t.remove_prefix(1);
      if (!split_number(t, n, rest) || !rest.empty()) {
        return Result<double>::error("expected a number like 0.25, got " + quoted(text));
      }
      return neg ? -n : n;
    }
  }
  return Result<double>::error("unknown unit");
}

}  // namespace

Result<double> parse_quantity(std::string_view text, Unit unit) {
  auto v = parse_exact(text, unit);
  if (!v) return v;
  // Counts keep their own bound (2^53, checked by each setting's range); every other unit is
  // bounded here, for every source of a value.
  if (unit != Unit::kCount && std::fabs(*v) > max_of(unit)) {
    return Result<double>::error(std::string(to_string(unit)) + " " + quoted(text) +
                                 " is beyond the largest a scenario takes, " + max_text(unit));
  }
  return v;
}

Result<Unit> infer_unit(std::string_view text) {
  double n = 0;
  std::string_view unit;
  std::string_view t = trim(text);
  if (!t.empty() && t.front() == '-') t.remove_prefix(1);
  if (!split_number(t, n, unit)) {
    return Result<Unit>::error("expected a quantity (like '200ms', '180MiB', '5GB/s' or 8), got " +
                               quoted(text));
  }
  if (unit.empty()) {
    return t.find_first_of(".eE") == std::string_view::npos && t == trim(text) ? Unit::kCount
                                                                              : Unit::kNumber;
  }
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "/s") return Unit::kBandwidth;
  if (kernel::parse_duration(text).is_ok()) return Unit::kDuration;
  for (const ByteUnit& u : kByteUnits) {
    if (u.name == unit) return Unit::kBytes;
  }
  return Result<Unit>::error("unknown unit " + quoted(unit) + " in " + quoted(text) +
                             " (expected a duration unit ns, us, ms, s, min, h; a size unit B, "
                             "KB, MB, GB, TB, KiB, MiB, GiB, TiB; or a size per second)");
}

std::string format_quantity(double value, Unit unit) {
  char buf[64];
  switch (unit) {
    case Unit::kDuration:
      return kernel::format_duration(static_cast<kernel::Time>(std::llround(value)));
    case Unit::kBytes:
    case Unit::kBandwidth: {
      static constexpr ByteUnit kOut[] = {{"TiB", 1099511627776.0}, {"GiB", 1073741824.0},
                                          {"MiB", 1048576.0},       {"KiB", 1024.0},
                                          {"B", 1.0}};
      const char* suffix = unit == Unit::kBandwidth ? "/s" : "";
      for (const ByteUnit& u : kOut) {
        if (std::fabs(value) >= u.scale || u.scale == 1.0) {
          std::snprintf(buf, sizeof buf, "%.4g%.*s%s", value / u.scale,
                        static_cast<int>(u.name.size()), u.name.data(), suffix);
          return buf;
        }
      }
      break;
    }
    case Unit::kCount:
      std::snprintf(buf, sizeof buf, "%.0f", value);
      return buf;
    case Unit::kNumber:
      std::snprintf(buf, sizeof buf, "%.6g", value);
      return buf;
  }
  return "?";
}

}  // namespace racesim::scenario
