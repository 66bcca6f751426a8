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

// A number for a CSV cell, six significant digits: 0.0125758 -> "0.0125758".
std::string csv_number(double x);
// A CSV field, quoted when it holds a comma, a quote or a newline (RFC 4180).
std::string csv_field(const std::string& v);

}  // namespace racesim::report
