// Numbers as report text (see number_text.h).
#include "src/report/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace racesim::report {

std::string format_number(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

std::string pct(double x) { return format_number("%.1f%%", 100 * x); }
std::string num(double x) { return format_number("%.4g", x); }
std::string csv_number(double x) { return format_number("%.6g", x); }

std::string metric_text(const std::string& name, double v) {
  auto ends = [&](const char* suffix) {
    const std::size_t n = std::strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  if (name.find("bytes") != std::string::npos) {
    static constexpr std::pair<const char*, double> kUnits[] = {
        {"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0}};
    for (const auto& [unit, scale] : kUnits) {
      if (std::fabs(v) >= scale) return num(v / scale) + " " + unit;
    }
    return num(v) + " B";
  }
  if (ends("_s")) return num(v) + " s";
  if (ends("_gib")) return num(v) + " GiB";
  return num(v);
}

std::string exact_number(double x) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, end) : format_number("%.17g", x);
}

std::string metric_exact_text(const std::string& name, double v) {
  const std::string exact = exact_number(v), in_unit = metric_text(name, v);
  return in_unit == num(v) ? exact : exact + " (" + in_unit + ")";
}

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace racesim::report
