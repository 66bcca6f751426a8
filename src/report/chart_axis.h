// Where a report chart puts things: a sweep axis's values on the x axis (numeric when they are
// quantities of one unit, on a log scale when they span decades, else one slot per value),
// series that would hide each other drawn side by side, and titles that fit the chart.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace racesim::report {

struct AxisScale {
  // Numeric: each label's value (base units: ns, bytes, bytes/s) is its position. Otherwise the
  // labels are categories at 0, 1, 2, ... in their order.
  bool numeric = false;
  bool log = false;  // numeric, every value > 0, and the largest at least 20 times the least
  std::vector<double> positions;  // one per label
  double lo = 0, hi = 0;          // the x range, with a margin around the positions
};

// The scale of an axis whose values are `labels` as written ("100ms", "1s", "5GB/s", "0.5").
// Numeric when there are at least two, each reads as a quantity, all of one unit, all distinct.
AxisScale axis_scale(const std::vector<std::string>& labels);

// Where series `index` of `count` draws a point at `position`: moved aside by a small step per
// series (a fraction of a slot, of the range, or a factor on a log scale), so that series with the
// same values are drawn side by side instead of on top of each other. REQUIRES: index < count.
double dodge(const AxisScale& scale, double position, std::size_t index, std::size_t count);

// `text` as it goes inside a gnuplot double-quoted string: '"' and '\' escaped.
std::string gp_escape(const std::string& text);

// `title` as gnuplot text that fits a chart `width_px` wide in the reports' 11-point font: broken
// onto two (or more) lines at spaces where it is too long. The result is the text inside a
// gnuplot double-quoted string's quotes, with "\n" between lines.
std::string fit_title(const std::string& title, int width_px);

}  // namespace racesim::report
