// Quantities with units, as written in scenario files.
//
//   duration   "200ms", "1.5s", "40s", "3min"      -> nanoseconds (ns, us, ms, s, min, h)
//   bytes      "180MiB", "1GB", "512B", "4KiB"     -> bytes (B; KB MB GB TB = 10^3..10^12;
//                                                     KiB MiB GiB TiB = 2^10..2^40)
//   bandwidth  "5GB/s", "100MiB/s"                 -> bytes per second (a bytes unit + "/s")
//   count      "8", 8                              -> a whole number >= 0, no unit
//   number     "0.25", 0.25                        -> a real number, no unit
//
// A value's unit must match what the place that uses it expects: "200ms" where bytes are
// expected is an error that names both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/kernel/status.h"

namespace racesim::scenario {

enum class Unit : std::uint8_t { kDuration, kBytes, kBandwidth, kCount, kNumber };
const char* to_string(Unit unit);
// An example of a value of this unit, for error messages ("like '200ms'").
const char* example_of(Unit unit);

template <typename T>
using Result = kernel::Result<T>;

Result<std::int64_t> parse_bytes(std::string_view text);
Result<double> parse_bandwidth(std::string_view text);  // bytes per second
// Parses text as the given unit; durations and bytes come back as exact whole numbers in a
// double (ns and bytes both fit in 53 bits up to ~104 days and 8 PiB). The one range check every
// value read from a scenario, an override, a sweep axis or a distribution's parameters goes
// through: a duration or a size is a whole number of its grain (1ns, 1B), and no value but a
// count is beyond max_of(unit) (a count's range is its setting's).
Result<double> parse_quantity(std::string_view text, Unit unit);
// Which unit a literal carries ("200ms" -> duration, "5GB/s" -> bandwidth, "8" -> count,
// "0.5" -> number), or an error if it is not a quantity at all.
Result<Unit> infer_unit(std::string_view text);
// The largest value of `unit` any setting may take unless it names a narrower bound: 100 days,
// 4 PiB, 1 PB/s, 2^31 - 1 (a count fits an int), 1e15. Durations and sizes stay exact in a double
// and their sums fit the models' 64-bit integers. Inline: every draw is kept in range with it.
constexpr double max_of(Unit unit) {
  switch (unit) {
    case Unit::kDuration:
      return 100.0 * 86400 * 1e9;
    case Unit::kBytes:
      return 4.0 * 1024 * 1024 * 1024 * 1024 * 1024;
    case Unit::kBandwidth:
    case Unit::kNumber:
      return 1e15;
    case Unit::kCount:
      return 2147483647.0;
  }
  return 0;
}
// The same bound as text for messages: "100 days (8640000s)", "4096TiB".
const char* max_text(Unit unit);
// Formats a base-unit value for reports: 2e11 ns -> "200s", 188743680 B -> "180MiB".
std::string format_quantity(double value, Unit unit);

}  // namespace racesim::scenario
