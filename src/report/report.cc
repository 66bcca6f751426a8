#include "src/report/report.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "src/report/chart_axis.h"
#include "src/report/output_file.h"
#include "src/scenario/language/expectations.h"
#include "src/scenario/execute/stats.h"
#include "src/scenario/language/sweep.h"

namespace racesim::report {

namespace {

std::string fixed(double x, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// `s` as a gnuplot double-quoted string.
std::string gp_quote(const std::string& s) { return "\"" + gp_escape(s) + "\""; }

// A file-name-safe form of `s`.
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out;
}

// Line colours that stay apart when printed (the Okabe-Ito palette).
const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                          "#E69F00", "#56B4E9", "#000000", "#F0E442"};

std::string header(const std::string& output, int width, int height) {
  return "set terminal svg size " + std::to_string(width) + "," + std::to_string(height) +
         " font \"sans,11\" noenhanced background rgb \"white\"\nset output " + gp_quote(output) +
         "\nset grid ytics lc rgb \"#dddddd\"\nset key outside right top vertical Left reverse samplen 3\n"
         "set border 3\nset tics nomirror\n";
}

// Runs gnuplot on `script`. Returns false with `error` set when it cannot run or fails.
// gnuplot's messages go to `log_file`, shown only when it fails (benign warnings such as an
// empty x range when every run took the same time stay out of the way).
bool run_gnuplot(const std::string& script, const std::string& log_file, std::string& error) {
  const std::string cmd = gnuplot_command() + " 2>'" + log_file + "'";
  // If gnuplot is missing the shell exits at once and our write meets a closed pipe: ignore
  // SIGPIPE meanwhile, so that the write fails (EPIPE) and pclose reports the shell's status.
  const auto old_handler = std::signal(SIGPIPE, SIG_IGN);
  FILE* p = popen(cmd.c_str(), "w");
  if (p == nullptr) {
    std::signal(SIGPIPE, old_handler);
    error = "cannot start '" + gnuplot_command() + "'";
    return false;
  }
  std::fwrite(script.data(), 1, script.size(), p);
  const int status = pclose(p);
  std::signal(SIGPIPE, old_handler);
  std::ifstream log(log_file);
  const std::string messages((std::istreambuf_iterator<char>(log)), {});
  std::remove(log_file.c_str());
  if (status != 0) {
    error = "'" + gnuplot_command() + "' failed (exit status " + std::to_string(status) +
            "); racesim report draws its charts with gnuplot (Debian: apt-get install "
            "gnuplot-nox)\n" + messages.substr(0, 2000);
    return false;
  }
  return true;
}

struct Series {
  std::string title;
  std::string data;  // rows "x y [ylow yhigh]"
  int colour = -1;   // index into the palette (-1: the series' position)
  int dash = 0;      // gnuplot dash type (0: by position)
};

// The distinct strategies and points, in the order they appear.
std::vector<std::string> ordered(const std::vector<StrategySummary>& s, bool points) {
  std::vector<std::string> out;
  for (const auto& x : s) {
    const std::string& v = points ? x.point : x.strategy;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// Tics at 0, 1, 2, ... named by `labels`, on axis `which` ('x' or 'y').
std::string tics(char which, const std::vector<std::string>& labels) {
  std::string out = std::string("set ") + which + "tics (";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += (i ? ", " : "") + gp_quote(labels[i]) + " " + std::to_string(i);
  }
  return out + ")\n";
}

// A plot of several series; `style` is "yerrorbars" or "linespoints" and so on. Series beyond
// the palette's eight colours differ by dash and point type too, so 24 stay apart; a series
// with its own `dash` (failed runs) is drawn dashed in its colour.
std::string plot(const std::vector<Series>& series, const std::string& style) {
  std::string out;
  for (std::size_t i = 0; i < series.size(); ++i) {
    out += "$d" + std::to_string(i) + " << EOD\n" + series[i].data + "EOD\n";
  }
  constexpr std::size_t kPalette = sizeof kColours / sizeof *kColours;
  static const int kPoints[] = {7, 5, 9, 11, 13};  // filled circle, square, triangles, diamond
  out += "plot ";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const bool errors = style == "yerrorbars" || style == "yerrorlines";
    const std::string using_cols = errors ? "1:2:3:4" : "1:2";
    const std::size_t colour = series[i].colour >= 0 ? static_cast<std::size_t>(series[i].colour) : i;
    const int dash = series[i].dash > 0 ? series[i].dash : static_cast<int>((colour / kPalette) % 5) + 1;
    const int point = kPoints[(colour / kPalette) % 5];
    out += (i ? ", \\\n     " : "") + std::string("$d") + std::to_string(i) + " using " + using_cols +
           " with " + style + " dt " + std::to_string(dash) +
           (style == "lines" ? std::string(" lw 1.5") : " lw 1.5 pt " + std::to_string(point) + " ps 0.6") +
           " lc rgb " + gp_quote(kColours[colour % kPalette]) + " title " + gp_quote(series[i].title);
  }
  return out + "\n";
}

// The width of a chart whose legend, outside on the right, holds titles up to `longest` chars.
int chart_width(std::size_t longest) { return 560 + 7 * static_cast<int>(std::min<std::size_t>(longest, 60)); }
std::size_t longest_title(const std::vector<std::string>& v) {
  std::size_t n = 0;
  for (const auto& s : v) n = std::max(n, s.size());
  return n;
}

struct Chart {
  std::string file;     // relative to DIR
  std::string caption;
};

std::string point_title(const std::string& p) { return p.empty() ? "all runs" : p; }

std::vector<std::string> axis_keys(const scenario::Scenario& sc) {
  std::vector<std::string> keys;
  for (const auto& a : sc.sweep) keys.push_back(a.key);
  return keys;
}

}  // namespace

std::string gnuplot_command() {
  const char* env = std::getenv("RACESIM_GNUPLOT");
  return env && *env ? env : "gnuplot";
}

bool write_report(const ReportInput& in, const std::string& dir, std::string& error) {
  const scenario::Scenario& sc = *in.scenario;
  const std::string chart_dir = dir + "/" + in.stem;
  std::error_code ec;
  std::filesystem::create_directories(chart_dir, ec);
  if (ec) {
    error = "cannot create " + chart_dir + ": " + ec.message();
    return false;
  }
  const auto strategies = ordered(in.summaries, false);
  const auto points = ordered(in.summaries, true);
  auto find = [&](const std::string& strategy, const std::string& point) -> const StrategySummary* {
    for (const auto& s : in.summaries) {
      if (s.strategy == strategy && s.point == point) return &s;
    }
    return nullptr;
  };
  std::vector<Chart> charts;
  std::string script;

  // 1. Failure rate with its interval, strategies on x, one series per point (up to 6 points;
  // with more, the charts against each sweep axis below show them, faceted).
  constexpr std::size_t kMaxPointSeries = 6;
  if (points.size() <= kMaxPointSeries) {
    const std::string file = in.stem + "/failure_rate.svg";
    const int width = chart_width(longest_title(points));
    script += header(dir + "/" + file, width, 80 + 22 * static_cast<int>(strategies.size()) + 260);
    script += "set title \"" + fit_title(sc.name + ": failure rate per strategy (95% Wilson interval)", width) +
              "\"\nset ylabel \"failure rate (%)\"\n"
              "set xrange [-0.5:" + std::to_string(strategies.size()) + "-0.5]\n" +
              tics('x', strategies) + "set xtics rotate by -30\n";
    std::vector<Series> series;
    const double spread = 0.6;  // of a strategy's slot, across its points
    for (std::size_t k = 0; k < points.size(); ++k) {
      Series s{point_title(points[k]), ""};
      const double offset = points.size() == 1 ? 0
                            : -spread / 2 + spread * static_cast<double>(k) /
                                                static_cast<double>(points.size() - 1);
      for (std::size_t i = 0; i < strategies.size(); ++i) {
        const StrategySummary* x = find(strategies[i], points[k]);
        if (!x) continue;
        s.data += fixed(static_cast<double>(i) + offset, 6) + " " + fixed(100 * x->failure_rate, 6) +
                  " " + fixed(100 * x->failure_ci.lo, 6) + " " + fixed(100 * x->failure_ci.hi, 6) + "\n";
      }
      series.push_back(std::move(s));
    }
    script += "set yrange [-2:102]\n" + plot(series, "yerrorbars") + "reset\n";
    charts.push_back({file, "Failure rate per strategy with its 95% Wilson interval" +
                                std::string(in.sides != nullptr ? ", one series per side."
                                            : points.size() > 1  ? ", one series per sweep point."
                                                                 : ".")});
  }

  // 2. Makespan distribution per strategy (empirical CDF, 101 quantiles), one chart per point:
  // the passed runs solid, the failed runs (the time each took to fail) dashed, each with its
  // count, in the strategy's colour.
  constexpr std::size_t kMaxCdfCharts = 64;
  for (std::size_t k = 0; k < points.size() && k < kMaxCdfCharts; ++k) {
    const std::string file = in.stem + "/makespan_" + std::to_string(k) + ".svg";
    const int width = chart_width(longest_title(strategies) + 16);
    script += header(dir + "/" + file, width, 360);
    script += "set title \"" + fit_title(sc.name + ": makespan distribution" + (points[k].empty() ? "" : " at " + points[k]), width) +
              "\"\nset xlabel \"makespan (s)\"\nset ylabel \"fraction of runs\"\nset yrange [0:1]\n";
    std::vector<Series> series;
    for (std::size_t si = 0; si < strategies.size(); ++si) {
      std::vector<double> passed, failed;
      for (const auto& r : *in.records) {
        if (r.strategy != strategies[si] || r.point != points[k]) continue;
        auto it = r.metrics.find("makespan_s");
        if (it != r.metrics.end()) (run::failed(r.outcome) ? failed : passed).push_back(it->second);
      }
      for (auto* v : {&passed, &failed}) {
        if (v->empty()) continue;
        std::sort(v->begin(), v->end());
        const bool f = v == &failed;
        Series s{strategies[si] + (f ? ": failed (" : ": passed (") + std::to_string(v->size()) + ")", "",
                 static_cast<int>(si), f ? 2 : 1};
        for (int q = 0; q <= 100; ++q) {
          s.data += fixed(scenario::percentile_sorted(*v, q), 6) + " " + fixed(q / 100.0, 3) + "\n";
        }
        series.push_back(std::move(s));
      }
    }
    script += plot(series, "lines") + "reset\n";
    charts.push_back({file, "Makespan distribution (empirical CDF) per strategy, passed runs solid and failed runs "
                            "dashed" + (points[k].empty() ? std::string(".") : " at " + points[k] + ".")});
  }

  // 3. Against each sweep axis: failure rate, passed runs' makespan p50, and each metrics:
  // metric's p50; one chart (a facet) per combination of the other axes' values, up to
  // kMaxFacets per axis.
  constexpr std::size_t kMaxFacets = 8;
  const auto sweep = scenario::sweep_points(sc);
  for (std::size_t a = 0; a < sc.sweep.size() && in.sides == nullptr; ++a) {
    const scenario::SweepAxis& axis = sc.sweep[a];
    if (axis.labels.size() < 2) continue;
    // The facets: every combination of the other axes' values, in sweep order.
    std::vector<std::vector<std::pair<std::string, std::string>>> facets;
    for (const auto& p : sweep) {
      std::vector<std::pair<std::string, std::string>> others;
      for (const auto& v : p.values) {
        if (v.first != axis.key) others.push_back(v);
      }
      if (std::find(facets.begin(), facets.end(), others) == facets.end()) facets.push_back(others);
    }
    for (std::size_t f = 0; f < facets.size() && f < kMaxFacets; ++f) {
      // The points on this axis in this facet, in the axis's order, and where each goes on x.
      const AxisScale scale = axis_scale(axis.labels);
      std::vector<std::string> on_axis;
      std::vector<double> at;
      for (std::size_t l = 0; l < axis.labels.size(); ++l) {
        for (const auto& p : sweep) {
          bool match = std::find(p.values.begin(), p.values.end(), std::make_pair(axis.key, axis.labels[l])) != p.values.end();
          for (const auto& o : facets[f]) match = match && std::find(p.values.begin(), p.values.end(), o) != p.values.end();
          if (match) {
            on_axis.push_back(p.label);
            at.push_back(scale.positions[l]);
          }
        }
      }
      std::string x_axis = "set xrange [" + fixed(scale.lo, 12) + ":" + fixed(scale.hi, 12) + "]\nset xtics (";
      for (std::size_t l = 0; l < axis.labels.size(); ++l) {
        x_axis += (l ? ", " : "") + gp_quote(axis.labels[l]) + " " + fixed(scale.positions[l], 12);
      }
      x_axis += ")\n" + std::string(scale.log ? "set logscale x\n" : "");
      std::string others;
      for (const auto& [k, v] : facets[f]) others += (others.empty() ? "" : ", ") + k + "=" + v;
      const std::string facet_file = facets.size() > 1 ? "_f" + std::to_string(f) : "";
      std::vector<std::pair<std::string, std::string>> measures = {{"failure_rate", "failure rate (%)"},
                                                                   {"makespan_s", "passed runs' makespan p50 (s)"}};
      for (const auto& m : sc.metric_defs) measures.emplace_back(m.name, m.name + " p50");
      for (const auto& [measure, ylabel] : measures) {
        const std::string file = in.stem + "/sweep_" + slug(axis.key) + "_" + slug(measure) + facet_file + ".svg";
        const int width = chart_width(longest_title(strategies));
        script += header(dir + "/" + file, width, 360);
        script += "set title \"" + fit_title(sc.name + ": " + ylabel + " against " + axis.key +
                                                (others.empty() ? "" : " (" + others + ")"), width) +
                  "\"\nset xlabel " + gp_quote(axis.key) + "\nset ylabel " + gp_quote(ylabel) + "\n" + x_axis;
        // Each strategy's points drawn a little aside of the others' (dodge), so that strategies
        // with the same values stay visible; those that are the same are named in the caption.
        std::vector<Series> series;
        std::vector<std::string> values;  // each series' values, to find identical ones
        for (std::size_t si = 0; si < strategies.size(); ++si) {
          Series s{strategies[si], "", static_cast<int>(si), 0};
          std::string v;
          for (std::size_t i = 0; i < on_axis.size(); ++i) {
            const StrategySummary* x = find(strategies[si], on_axis[i]);
            if (!x) continue;
            std::string row;
            if (measure == "failure_rate") {
              row = fixed(100 * x->failure_rate, 6) + " " + fixed(100 * x->failure_ci.lo, 6) + " " +
                    fixed(100 * x->failure_ci.hi, 6);
            } else if (measure == "makespan_s") {
              if (x->makespan_passed.n > 0) row = fixed(x->makespan_passed.p50, 6);
            } else if (auto it = x->metrics.find(measure); it != x->metrics.end() && it->second.n > 0) {
              row = fixed(it->second.p50, 6);
            }
            if (row.empty()) continue;
            s.data += fixed(dodge(scale, at[i], si, strategies.size()), 12) + " " + row + "\n";
            v += std::to_string(i) + " " + row + "\n";
          }
          if (!s.data.empty()) {
            series.push_back(std::move(s));
            values.push_back(std::move(v));
          }
        }
        if (series.empty()) {
          script += "reset\n";
          continue;
        }
        if (measure == "failure_rate") script += "set yrange [-2:102]\n";
        script += plot(series, measure == "failure_rate" ? "yerrorlines" : "linespoints") + "reset\n";
        std::string same;
        std::vector<bool> told(series.size(), false);
        for (std::size_t i = 0; i < series.size(); ++i) {
          if (told[i]) continue;
          std::string group = series[i].title;
          for (std::size_t j = i + 1; j < series.size(); ++j) {
            if (values[j] != values[i]) continue;
            told[j] = true;
            group += " = " + series[j].title;
          }
          if (group != series[i].title) same += (same.empty() ? "" : "; ") + group;
        }
        charts.push_back({file, ylabel + " against " + axis.key + (others.empty() ? "." : " (" + others + ").") +
                                    (scale.log ? " The axis is logarithmic." : "") +
                                    (same.empty() ? "" : " The same values (drawn side by side): " + same + ".")});
      }
    }
  }
  // 4. Over the first two sweep axes at once: a heatmap of the failure rate, a panel per strategy
  // (the number in each cell), one chart per combination of the other axes' values.
  if (sc.sweep.size() >= 2 && in.sides == nullptr && sc.sweep[0].labels.size() >= 2 && sc.sweep[1].labels.size() >= 2) {
    const scenario::SweepAxis& ax = sc.sweep[0];
    const scenario::SweepAxis& ay = sc.sweep[1];
    std::vector<std::vector<std::pair<std::string, std::string>>> facets;
    for (const auto& p : sweep) {
      std::vector<std::pair<std::string, std::string>> others(p.values.begin() + 2, p.values.end());
      if (std::find(facets.begin(), facets.end(), others) == facets.end()) facets.push_back(others);
    }
    auto point_of = [&](const std::string& x, const std::string& y,
                        const std::vector<std::pair<std::string, std::string>>& others) -> const std::string* {
      for (const auto& p : sweep) {
        if (p.values[0].second == x && p.values[1].second == y &&
            std::equal(others.begin(), others.end(), p.values.begin() + 2)) {
          return &p.label;
        }
      }
      return nullptr;
    };
    const std::size_t cols = std::min<std::size_t>(3, strategies.size());
    const std::size_t rows = (strategies.size() + cols - 1) / cols;
    for (std::size_t f = 0; f < facets.size() && f < kMaxFacets; ++f) {
      std::string others;
      for (const auto& [k, v] : facets[f]) others += (others.empty() ? "" : ", ") + k + "=" + v;
      const std::string file = in.stem + "/heatmap_failure_rate" + (facets.size() > 1 ? "_f" + std::to_string(f) : "") + ".svg";
      const int width = 60 + 330 * static_cast<int>(cols);
      script += header(dir + "/" + file, width, 60 + 260 * static_cast<int>(rows));
      script += "unset key\nunset grid\nset palette defined (0 \"#f7f7f7\", 50 \"#f4a582\", 100 \"#b2182b\")\n"
                "set cbrange [0:100]\nunset colorbox\n"
                "set xrange [-0.5:" + std::to_string(ax.labels.size()) + "-0.5]\nset yrange [-0.5:" +
                std::to_string(ay.labels.size()) + "-0.5]\n" + tics('x', ax.labels) + tics('y', ay.labels) +
                "set xlabel " + gp_quote(ax.key) + "\nset ylabel " + gp_quote(ay.key) + "\n" +
                "set multiplot layout " + std::to_string(rows) + "," + std::to_string(cols) + " title \"" +
                fit_title(sc.name + ": failure rate (%) by " + ax.key + " and " + ay.key + (others.empty() ? "" : " (" + others + ")"), width) +
                "\"\n";
      for (std::size_t si = 0; si < strategies.size(); ++si) {
        std::string data;
        for (std::size_t yi = 0; yi < ay.labels.size(); ++yi) {
          for (std::size_t xi = 0; xi < ax.labels.size(); ++xi) {
            const std::string* label = point_of(ax.labels[xi], ay.labels[yi], facets[f]);
            const StrategySummary* x = label ? find(strategies[si], *label) : nullptr;
            data += std::to_string(xi) + " " + std::to_string(yi) + " " + (x ? fixed(100 * x->failure_rate, 6) : "NaN") + "\n";
          }
          data += "\n";
        }
        const std::string d = "$h" + std::to_string(si);
        script += d + " << EOD\n" + data + "EOD\nset title " + gp_quote(strategies[si]) + "\nplot " + d +
                  " using 1:2:3 with image pixels, " + d + " using 1:2:(sprintf(\"%.0f\", $3)) with labels\n";
      }
      script += "unset multiplot\nreset\n";
      charts.push_back({file, "Failure rate (%) by " + ax.key + " (across) and " + ay.key + " (up), a panel per strategy" +
                                  (others.empty() ? "." : " (" + others + ").")});
    }
  }
  if (!run_gnuplot(script, chart_dir + "/.gnuplot.log", error)) return false;

  // The Markdown page.
  std::string md = "# " + sc.name + "\n\n";
  md += "<!-- Generated by `racesim report`; do not edit. -->\n\n";
  if (!sc.summary.empty()) md += sc.summary + "\n\n";
  md += "- scenario: `" + sc.file + "`\n";
  if (!sc.source.empty()) md += "- source: " + sc.source + "\n";
  md += "- " + std::to_string(sc.ranks) + " ranks; " + in.setup + "\n";
  if (!sc.sweep.empty()) {
    md += "- sweep: ";
    for (std::size_t a = 0; a < sc.sweep.size(); ++a) {
      md += (a ? "; " : "") + std::string("`") + sc.sweep[a].key + "` in {";
      for (std::size_t i = 0; i < sc.sweep[a].labels.size(); ++i) md += (i ? ", " : "") + sc.sweep[a].labels[i];
      md += "}";
    }
    md += "\n";
  }
  if (!sc.faults.empty()) {
    md += "- faults: ";
    for (std::size_t i = 0; i < sc.faults.size(); ++i) {
      md += (i ? "; " : "") + sc.faults[i].name + " (" + sc.faults[i].kind + " on " +
            sc.faults[i].describe_on(sc.ranks) + ", probability " + fixed(sc.faults[i].probability) +
            (sc.faults[i].fires < 1 ? ", fires " + fixed(sc.faults[i].fires) : std::string()) +
            (sc.faults[i].times > 0 ? ", times " + std::to_string(sc.faults[i].times) : std::string()) + ")";
    }
    md += "\n";
  }
  bool any_summary = false;
  for (const auto& st : sc.strategies) any_summary |= !st.summary.empty();
  if (any_summary) {
    md += "\n## Strategies\n\n";
    for (const auto& st : sc.strategies) {
      md += "- **" + st.name + "**" + (st.summary.empty() ? "" : ": " + st.summary) + "\n";
    }
  }
  std::vector<std::string> metric_names;
  for (const auto& m : sc.metric_defs) metric_names.push_back(m.name);
  if (in.sides != nullptr) {
    // Side by side, the CPU each side spent on a mount's reads and writes, where both recorded it.
    for (std::string& m : cpu_measures_of_every_side(*in.sides)) metric_names.push_back(std::move(m));
    md += "\n## Results side by side\n\n" + format_comparison_markdown(*in.sides, metric_names);
  } else {
    // The comparison tables (format_markdown without its title line).
    const std::string tables = format_markdown(sc.name, in.summaries);
    md += "\n## Results\n\n" + tables.substr(tables.find('\n') + 2);
  }
  if (!in.verdicts.empty()) {
    md += "\n## Expectations\n\n| verdict | strategy | point | expectation | observed |\n|---|---|---|---|---|\n";
    for (const auto& v : in.verdicts) {
      std::string detail = v.detail;
      for (auto& c : detail) c = c == '|' ? '/' : c;
      md += std::string("| ") + (v.skipped ? "not run" : v.passed ? "pass" : "**FAIL**") + " | " + v.strategy + " | " +
            (v.point.empty() ? "-" : v.point) + " | " + v.expectation + " | " + detail + " |\n";
    }
  }
  md += "\n## Charts\n\n";
  for (const auto& c : charts) md += "![" + c.caption + "](" + c.file + ")\n\n" + c.caption + "\n\n";
  md += "Aggregates as CSV: [" + in.stem + ".csv](" + in.stem + ".csv)\n";

  return write_output_file(dir + "/" + in.stem + ".md", md, error) &&
         write_output_file(dir + "/" + in.stem + ".csv",
                           in.sides != nullptr ? format_comparison_csv(*in.sides, metric_names)
                                               : format_csv(in.summaries, axis_keys(sc)),
                           error);
}

bool write_report_index(const std::vector<ReportInput>& reports, const std::string& dir,
                        std::string& error) {
  std::string md = "# racesim reports\n\n<!-- Generated by `racesim report`; do not edit. -->\n\n"
                   "Each scenario's comparison of strategies over seeds: failure rates with 95% "
                   "Wilson intervals, makespans and metrics, the verdicts of its expectations, and "
                   "charts. Regenerate with `scripts/reports.sh` (`racesim check --ci` over every scenario: "
                   "a scenario's `ci:` subset where it has one); CI checks that the committed files "
                   "match.\n\n| scenario | strategies | points | runs | expectations |\n|---|---:|---:|---:|---|\n";
  for (const auto& r : reports) {
    std::size_t runs = 0, passed = 0;
    std::set<std::string> strategies, points;
    for (const auto& s : r.summaries) {
      runs += s.runs;
      strategies.insert(s.strategy);
      points.insert(s.point);
    }
    std::size_t judged = 0;
    for (const auto& v : r.verdicts) {
      passed += v.passed;
      judged += !v.skipped;
    }
    md += "| [" + r.scenario->name + "](" + r.stem + ".md) | " + std::to_string(strategies.size()) +
          " | " + std::to_string(points.size()) + " | " + std::to_string(runs) + " | " +
          (r.verdicts.empty() ? std::string("none")
                              : std::to_string(passed) + " of " + std::to_string(judged) + " hold" +
                                    (judged < r.verdicts.size()
                                         ? " (" + std::to_string(r.verdicts.size() - judged) + " at points not run)"
                                         : std::string())) +
          " |\n";
  }
  return write_output_file(dir + "/README.md", md, error);
}

}  // namespace racesim::report
