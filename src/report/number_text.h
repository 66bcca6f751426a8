// Numbers and fields as report text: percentages, four significant digits, a metric's value in
// the unit its name says, a CSV field. Fixed precision, so reports are byte-for-byte reproducible.
#pragma once

#include <string>

namespace racesim::report {

// `x` through a printf format that takes one double ("%.6g"); at most 63 characters.
std::string format_number(const char* format, double x);
// 0.123 -> "12.3%".
std::string pct(double x);
// Four significant digits: 1234.5 -> "1235", 0.012345 -> "0.01235".
std::string num(double x);
// A metric's value with the unit its name says: "2.148 GiB" for a *bytes* metric (not
// "2.148e+09"), "7.805 s" for a *_s one, "1.5 GiB" for a *_gib one, else the number.
std::string metric_text(const std::string& name, double v);

// The shortest text that reads back as exactly `x`: 41943040 -> "41943040" (never "4.1943e+07"),
// 0.1 -> "0.1", 2.5e-07 -> "2.5e-07".
std::string exact_number(double x);
// A metric as replay shows it: its exact value, then, for a metric whose name says a unit, the value
// in that unit: "41943040 (40 MiB)", "7.80512 (7.805 s)".
std::string metric_exact_text(const std::string& name, double v);

// A number for a CSV cell, six significant digits: 0.0125758 -> "0.0125758".
std::string csv_number(double x);
// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string csv_field(const std::string& v);

}  // namespace racesim::report
