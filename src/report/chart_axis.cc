// A chart's x axis, side-by-side series and fitted titles (see chart_axis.h).
#include "src/report/chart_axis.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>

#include "src/scenario/file/quantity.h"

namespace racesim::report {

AxisScale axis_scale(const std::vector<std::string>& labels) {
  AxisScale s;
  auto categories = [&] {
    s = AxisScale{};
    for (std::size_t i = 0; i < labels.size(); ++i) s.positions.push_back(static_cast<double>(i));
    s.lo = -0.3;
    s.hi = static_cast<double>(labels.size()) - 0.7;
    return s;
  };
  if (labels.size() < 2) return categories();
  std::optional<scenario::Unit> unit;
  for (const std::string& l : labels) {
    auto u = scenario::infer_unit(l);
    if (!u) return categories();
    // A count and a number are both plain numbers on an axis ([1, 0.5]).
    const scenario::Unit kind = *u == scenario::Unit::kCount ? scenario::Unit::kNumber : *u;
    if (unit && kind != *unit) return categories();
    unit = kind;
    const auto v = scenario::parse_quantity(l, *u);
    if (!v || !std::isfinite(*v)) return categories();
    s.positions.push_back(*v);
  }
  std::vector<double> sorted = s.positions;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return categories();
  s.numeric = true;
  const double least = sorted.front(), most = sorted.back();
  s.log = least > 0 && most >= 20 * least;
  if (s.log) {
    s.lo = least / 1.5;
    s.hi = most * 1.5;
  } else {
    const double margin = (most - least) * 0.06;
    s.lo = least - margin;
    s.hi = most + margin;
  }
  return s;
}

double dodge(const AxisScale& scale, double position, std::size_t index, std::size_t count) {
  assert(index < count && "dodge REQUIRES index < count");
  if (count < 2) return position;
  // From -1 to 1 across the series.
  const double k = 2.0 * static_cast<double>(index) / static_cast<double>(count - 1) - 1.0;
  if (!scale.numeric) return position + k * std::min(0.2, 0.04 * static_cast<double>(count));
  if (scale.log) return position * std::pow(1.0 + std::min(0.12, 0.02 * static_cast<double>(count)), k);
  return position + k * (scale.hi - scale.lo) * std::min(0.025, 0.005 * static_cast<double>(count));
}

std::string fit_title(const std::string& title, int width_px) {
  // The 11-point sans font is about 6.5 px a character; keep 40 px of margin.
  const std::size_t per_line = static_cast<std::size_t>(std::max(20, (width_px - 40) * 2 / 13));
  std::string out, line;
  std::size_t start = 0;
  while (start < title.size()) {
    if (title.size() - start <= per_line) {
      line = title.substr(start);
      start = title.size();
    } else {
      // The last space within the line's width, else the first after it, else the rest.
      std::size_t cut = title.rfind(' ', start + per_line);
      if (cut == std::string::npos || cut <= start) cut = title.find(' ', start + per_line);
      if (cut == std::string::npos) cut = title.size();
      line = title.substr(start, cut - start);
      start = cut + 1;
    }
    if (!out.empty()) out += "\\n";
    out += gp_escape(line);
  }
  return out;
}

std::string gp_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace racesim::report
