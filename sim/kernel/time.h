// Virtual time: a signed 64-bit count of nanoseconds since the start of a simulation.
// Nothing in a simulation reads the wall clock; time advances only by the event queue.
//
// A plain integer (not a wrapper class) so arithmetic on the hot path costs nothing; the
// `_ns/_us/_ms/_s/_min/_h` literals and parse/format helpers keep units explicit at the edges.
// int64 nanoseconds cover about 292 years of virtual time.
#pragma once

#include <cassert>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "sim/kernel/status.h"

namespace racesim::kernel {

using Time = std::int64_t;  // nanoseconds (a point or a duration)

inline constexpr Time kTimeMax = std::numeric_limits<Time>::max();
inline constexpr Time kNanosecond = 1;
inline constexpr Time kMicrosecond = 1'000;
inline constexpr Time kMillisecond = 1'000'000;
inline constexpr Time kSecond = 1'000'000'000;
inline constexpr Time kMinute = 60 * kSecond;
inline constexpr Time kHour = 60 * kMinute;

namespace time_literals {
constexpr Time operator""_ns(unsigned long long v) { return static_cast<Time>(v); }
constexpr Time operator""_us(unsigned long long v) { return static_cast<Time>(v) * kMicrosecond; }
constexpr Time operator""_ms(unsigned long long v) { return static_cast<Time>(v) * kMillisecond; }
constexpr Time operator""_s(unsigned long long v) { return static_cast<Time>(v) * kSecond; }
constexpr Time operator""_min(unsigned long long v) { return static_cast<Time>(v) * kMinute; }
constexpr Time operator""_h(unsigned long long v) { return static_cast<Time>(v) * kHour; }
}  // namespace time_literals

// Parses a duration: a decimal number (optionally with a fraction, e.g. "1.5") followed by a
// unit: ns, us, ms, s, min, h. Whitespace between number and unit is allowed. Rounds to the
// nearest nanosecond; `exact`, when given, is set to whether no fraction of a nanosecond was
// rounded away. Errors (empty, no unit, unknown unit, negative, overflow) say what was expected.
Result<Time> parse_duration(std::string_view text, bool* exact = nullptr);

// Formats a duration with the largest unit that keeps it readable, exactly when possible:
// 0 -> "0s", 1500000 -> "1.5ms", 40000000000 -> "40s", 90 * kSecond -> "90s".
std::string format_duration(Time t);

// Sums and products of times saturate: kTimeMax stands for "beyond any limit", and a process
// that waits until then ends its run as a timeout at the run's limit (Simulation::sleep_until).
// No time arithmetic in the kernel or the models wraps.
// a + b, saturating at kTimeMax. REQUIRES: a >= 0, b >= 0 (a point in time and a duration).
inline constexpr Time add_time(Time a, Time b) {
  assert(a >= 0 && b >= 0 && "add_time: times are never negative");
  return b >= kTimeMax - a ? kTimeMax : a + b;
}
// A duration stretched by a factor (a straggler's, a slow mount's), saturating at kTimeMax.
// REQUIRES: d >= 0, factor >= 0 (and not NaN).
inline Time scale_time(Time d, double factor) {
  assert(d >= 0 && factor >= 0 && "scale_time: a non-negative duration and factor");
  if (factor == 1) return d;
  const double ns = static_cast<double>(d) * factor;
  return ns >= static_cast<double>(kTimeMax) ? kTimeMax : static_cast<Time>(ns);
}

// Seconds as a double, for reports (never for simulation logic).
inline double to_seconds(Time t) { return static_cast<double>(t) / kSecond; }
// A sampled duration in ns as a Time: negative (or NaN) is 0, beyond kTimeMax is kTimeMax.
inline Time to_time(double ns) {
  if (ns >= static_cast<double>(kTimeMax)) return kTimeMax;
  return ns > 0 ? static_cast<Time>(ns) : 0;
}

// The one rule by which the models turn an amount of work at a rate into a duration: bytes over a
// bandwidth (a storage transfer, a host<->device copy, a page-cache write-back, a checkpoint
// read, the profiler's analysis) and a cost model's seconds (the collectives' alpha-beta time).
// Rounded up to the next nanosecond: an operation never ends before its last byte is through,
// and any positive amount takes at least 1 ns. The product is a double, so a duration that is a
// whole number of nanoseconds on paper may come out 1 ns longer (its last bit); never shorter.
// Beyond kTimeMax it is kTimeMax (which every run's time limit ends first).
// REQUIRES: bytes >= 0, bytes_per_s > 0 (and seconds >= 0).
// A non-negative count of nanoseconds rounded up to a whole one; kTimeMax at or beyond it (and
// for NaN). The same value as std::ceil, in a few instructions without a call: below 2^63 the
// truncation is the floor, and a value with a fraction is below 2^53, where floor + 1 is exact.
inline Time ceil_to_time(double ns) {
  if (!(ns < static_cast<double>(kTimeMax))) return kTimeMax;
  assert(ns >= 0);
  const Time whole = static_cast<Time>(ns);
  return whole + (static_cast<double>(whole) < ns ? 1 : 0);
}
// Inline: a storage transfer calls it for every chunk.
inline Time duration_of_seconds(double seconds) {
  assert(seconds >= 0 && "a duration in seconds is never negative");
  return ceil_to_time(seconds * 1e9);
}
inline Time transfer_time(double bytes, double bytes_per_s) {
  assert(bytes >= 0 && bytes_per_s > 0 && "bytes at a positive rate");
  return ceil_to_time(bytes / bytes_per_s * 1e9);
}

}  // namespace racesim::kernel
