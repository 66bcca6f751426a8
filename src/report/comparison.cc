// Results of several experiments side by side (see comparison.h).
#include "src/report/comparison.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "src/report/failure_kind.h"
#include "src/report/number_text.h"

namespace racesim::report {

namespace {

using Program = std::pair<std::string, std::string>;  // (point, strategy)

// Every program any side ran, in the order the sides first list them.
std::vector<Program> programs_of(const std::vector<Side>& sides) {
  std::vector<Program> out;
  for (const auto& side : sides) {
    for (const auto& s : side.summaries) {
      const Program p{s.point, s.strategy};
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  }
  return out;
}

const StrategySummary* find(const Side& side, const Program& p) {
  for (const auto& s : side.summaries) {
    if (s.point == p.first && s.strategy == p.second) return &s;
  }
  return nullptr;
}

bool has_points(const std::vector<Program>& programs) {
  return std::any_of(programs.begin(), programs.end(), [](const Program& p) { return !p.first.empty(); });
}

// A difference in percentage points, signed: "+12.5".
std::string points_text(double d) { return format_number("%+.1f", 100 * d); }

// The p50 of the passed runs' makespan (metric "" ) or of a metric, when the side has it.
bool median_of(const StrategySummary& s, const std::string& metric, double& out, std::uint64_t& n) {
  if (metric.empty()) {
    n = s.makespan_passed.n;
    out = s.makespan_passed.p50;
    return n > 0;
  }
  const auto it = s.metrics.find(metric);
  if (it == s.metrics.end() || it->second.n == 0) return false;
  n = it->second.n;
  out = it->second.p50;
  return true;
}

// The ratio of side b's p50 of `measure` to side a's, both over the seeds on which both
// recorded it; false when there are none (or a's p50 is 0). `n`: those seeds.
bool paired_ratio(const Side& a, const Side& b, const Program& p, const std::string& measure, double& ratio,
                  std::uint64_t& n) {
  n = 0;
  const auto in_a = a.value_by_seed.find(p);
  const auto in_b = b.value_by_seed.find(p);
  if (in_a == a.value_by_seed.end() || in_b == b.value_by_seed.end()) return false;
  const auto of_a = in_a->second.find(measure);
  const auto of_b = in_b->second.find(measure);
  if (of_a == in_a->second.end() || of_b == in_b->second.end()) return false;
  std::vector<double> va, vb;
  for (const auto& [seed, v] : of_a->second) {
    const auto it = of_b->second.find(seed);
    if (it == of_b->second.end()) continue;
    va.push_back(v);
    vb.push_back(it->second);
  }
  n = va.size();
  if (n == 0) return false;
  const double base = quantiles(va).p50;
  if (base == 0) return false;
  ratio = quantiles(vb).p50 / base;
  return true;
}

// A row's first cells: the program's point (with `points`) and strategy, each closed by " |".
std::string program_cells(const Program& p, bool points) {
  return points ? "| " + (p.first.empty() ? std::string("-") : p.first) + " | " + p.second + " |" : "| " + p.second + " |";
}

// A table's head and rule: the program's columns (point, strategy) and `more` when given, then
// a group per side (" LABEL" + `side_head`, its columns' rule `side_rule`), then each later
// side's difference from the first.
std::string table_head(const std::vector<Side>& sides, bool points, const std::string& more, const std::string& side_head,
                       const std::string& side_rule) {
  std::string out = points ? "| point | strategy |" : "| strategy |";
  std::string rule = points ? "|---|---|" : "|---|";
  if (!more.empty()) {
    out += " " + more + " |";
    rule += "---|";
  }
  for (const Side& side : sides) {
    out += " " + side.label + side_head + " |";
    rule += side_rule;
  }
  for (std::size_t k = 1; k < sides.size(); ++k) {
    out += " " + sides[k].label + " - " + sides[0].label + " (95% CI) |";
    rule += "---|";
  }
  return out + "\n" + rule + "\n";
}

// The cells of each later side's difference from the first for program `p`: the difference of
// their shares of failures (`failures(k, summary)`: how many of side k's runs count) in points
// and its 95% interval, marked where the interval excludes 0, or "-" where a side has no runs.
// `compared` and `differ`, when given, count the differences and those marked.
template <class Failures>
std::string difference_cells(const std::vector<Side>& sides, const Program& p, Failures failures,
                             std::size_t* compared = nullptr, std::size_t* differ = nullptr) {
  std::string out;
  const StrategySummary* first = find(sides[0], p);
  for (std::size_t k = 1; k < sides.size(); ++k) {
    const StrategySummary* s = find(sides[k], p);
    if (!first || !s || first->runs == 0 || s->runs == 0) {
      out += " - |";
      continue;
    }
    const std::uint64_t fa = failures(0, *first), fb = failures(k, *s);
    const Interval d = difference_interval(fa, first->runs, fb, s->runs);
    const bool apart = d.lo > 0 || d.hi < 0;
    if (compared) ++*compared;
    if (differ) *differ += apart;
    const double diff = static_cast<double>(fb) / static_cast<double>(s->runs) -
                        static_cast<double>(fa) / static_cast<double>(first->runs);
    out += " " + points_text(diff) + " pts (" + points_text(d.lo) + " to " + points_text(d.hi) + ")" +
           (apart ? " **differ**" : "") + " |";
  }
  return out;
}

// `text` as it goes in a Markdown table's cell.
std::string cell_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// The kinds of failure program `p` had on any side, most runs first (over the sides' shares of
// their runs, so that a side with more runs does not rank its kinds first), then by name.
std::vector<std::string> kinds_of(const std::vector<Side>& sides, const Program& p) {
  std::map<std::string, double> share;
  for (const Side& side : sides) {
    const StrategySummary* s = find(side, p);
    const auto it = side.failures_by_kind.find(p);
    if (s == nullptr || s->runs == 0 || it == side.failures_by_kind.end()) continue;
    for (const auto& [kind, n] : it->second) share[kind] += static_cast<double>(n) / static_cast<double>(s->runs);
  }
  std::vector<std::string> out;
  for (const auto& [kind, v] : share) out.push_back(kind);
  std::stable_sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) { return share[a] > share[b]; });
  return out;
}

// How many of side `side`'s runs of `p` failed as one of `kinds`.
std::uint64_t failures_of(const Side& side, const Program& p, const std::vector<std::string>& kinds) {
  const auto it = side.failures_by_kind.find(p);
  if (it == side.failures_by_kind.end()) return 0;
  std::uint64_t n = 0;
  for (const std::string& k : kinds) {
    if (const auto f = it->second.find(k); f != it->second.end()) n += f->second;
  }
  return n;
}

// The rows of `p`'s kinds (or the rest of them, as one row labelled `label`): each side's runs
// that failed so and their share of its runs, and each later side's difference from the first
// with its 95% interval.
std::string kind_row(const std::vector<Side>& sides, const Program& p, bool points, const std::string& label,
                     const std::vector<std::string>& kinds) {
  std::string out = program_cells(p, points) + " " + cell_text(label) + " |";
  std::vector<std::uint64_t> failed(sides.size(), 0);
  for (std::size_t k = 0; k < sides.size(); ++k) {
    const StrategySummary* s = find(sides[k], p);
    if (s == nullptr || s->runs == 0) {
      out += " - |";
      continue;
    }
    failed[k] = failures_of(sides[k], p, kinds);
    assert(failed[k] <= s->failures && "a run fails as one kind");
    out += " " + std::to_string(failed[k]) + " (" +
           pct(static_cast<double>(failed[k]) / static_cast<double>(s->runs)) + ") |";
  }
  return out + difference_cells(sides, p, [&](std::size_t k, const StrategySummary&) { return failed[k]; }) + "\n";
}

// "Where the runs failed": every program that failed on some side, its kinds of failure.
std::string failure_kinds_markdown(const std::vector<Side>& sides, const std::vector<Program>& programs, bool points) {
  std::string body;
  for (const Program& p : programs) {
    const std::vector<std::string> kinds = kinds_of(sides, p);
    const std::size_t listed = std::min(kinds.size(), kFailureKindsListed);
    for (std::size_t i = 0; i < listed; ++i) body += kind_row(sides, p, points, kinds[i], {kinds[i]});
    if (kinds.size() > listed) {
      const std::vector<std::string> rest(kinds.begin() + static_cast<std::ptrdiff_t>(listed), kinds.end());
      body += kind_row(sides, p, points, "any other (" + std::to_string(rest.size()) + " kinds)", rest);
    }
  }
  if (body.empty()) return "";
  std::string out =
      "\n### Where the runs failed\n\nThe failed runs by what failed, in terms every side can state: the check and the "
      "files its diagnosis names, with an error's code and the step's location (a model's \"read while the file was "
      "truncated\" and a live run's \"holding no model\" of one file at one step are one kind), every hang as one "
      "kind (a live run cannot tell a deadlock from work still running at its time limit), and any other diagnosis "
      "with the run's own figures masked (`_`); with each side's runs that failed so and their share of its runs, and "
      "each later side's difference from the first with its 95% interval, as for the failure rates.\n\n";
  return out + table_head(sides, points, "failure", "", "---:|") + body;
}

}  // namespace

Side side_of(const Experiment& e, const std::vector<run::RunRecord>& records) {
  Side side;
  std::string overrides;
  for (const auto& o : e.overrides) overrides += (overrides.empty() ? "" : " ") + o;
  const std::string seeds = std::to_string(e.seeds) + " seeds from " + std::to_string(e.seed_start);
  if (is_live(e)) {
    const std::string fs = live_field(e, "fs"), scale = live_field(e, "scale");
    side.label = fs.empty() ? "live" : "live " + fs;
    side.setup = "live runs" + (fs.empty() ? std::string() : " on " + fs) + " at time scale " + scale + ", " + seeds;
  } else {
    side.label = "sim";
    side.setup = "simulated, policy " + e.policy + ", " + seeds;
  }
  if (!overrides.empty()) side.setup += ", --set " + overrides;
  side.setup += ", racesim " + e.version;
  side.summaries = summarize(records);
  for (const auto& r : records) {
    side.failed_by_seed[{r.point, r.strategy}][r.seed] = run::failed(r.outcome);
    if (run::failed(r.outcome)) ++side.failures_by_kind[{r.point, r.strategy}][failure_kind(r)];
    auto& values = side.value_by_seed[{r.point, r.strategy}];
    for (const auto& [name, v] : r.metrics) values[name][r.seed] = v;
    if (auto m = r.metrics.find("makespan_s"); m != r.metrics.end() && !run::failed(r.outcome)) {
      values[""][r.seed] = m->second;
    }
  }
  return side;
}

void label_sides(std::vector<Side>& sides) {
  std::map<std::string, int> seen;
  for (auto& side : sides) {
    const int k = ++seen[side.label];
    if (k > 1) side.label += " #" + std::to_string(k);
  }
}

Interval difference_interval(std::uint64_t fa, std::uint64_t na, std::uint64_t fb, std::uint64_t nb) {
  assert(na > 0 && nb > 0 && fa <= na && fb <= nb);
  const double pa = static_cast<double>(fa) / static_cast<double>(na);
  const double pb = static_cast<double>(fb) / static_cast<double>(nb);
  const Interval a = wilson_interval(fa, na), b = wilson_interval(fb, nb);
  const double d = pb - pa;
  return {d - std::sqrt((pb - b.lo) * (pb - b.lo) + (a.hi - pa) * (a.hi - pa)),
          d + std::sqrt((b.hi - pb) * (b.hi - pb) + (pa - a.lo) * (pa - a.lo))};
}

std::vector<std::string> cpu_measures_of_every_side(const std::vector<Side>& sides) {
  const auto is_cpu = [](const std::string& m) {
    return m.starts_with("fs.") && (m.ends_with(".read_cpu_s") || m.ends_with(".write_cpu_s"));
  };
  std::map<std::string, std::size_t> sides_with;  // measure -> how many sides recorded it
  for (const Side& side : sides) {
    std::set<std::string> here;
    for (const auto& [program, measures] : side.value_by_seed) {
      for (const auto& [m, by_seed] : measures) {
        if (!by_seed.empty() && is_cpu(m)) here.insert(m);
      }
    }
    for (const std::string& m : here) ++sides_with[m];
  }
  std::vector<std::string> out;
  for (const auto& [m, n] : sides_with) {
    if (n == sides.size()) out.push_back(m);
  }
  return out;
}

std::string format_comparison_markdown(const std::vector<Side>& sides, const std::vector<std::string>& metrics) {
  const auto programs = programs_of(sides);
  const bool points = has_points(programs);
  std::string out = "### Failure rates\n\n" + table_head(sides, points, "", ": failed | rate (95% CI)", "---:|---|");
  std::size_t differ = 0, compared = 0;
  for (const auto& p : programs) {
    out += program_cells(p, points);
    for (const auto& side : sides) {
      const StrategySummary* s = find(side, p);
      out += s ? " " + std::to_string(s->failures) + " of " + std::to_string(s->runs) + " | " + pct(s->failure_rate) +
                     " (" + pct(s->failure_ci.lo) + "-" + pct(s->failure_ci.hi) + ") |"
               : std::string(" not run | - |");
    }
    out += difference_cells(sides, p, [](std::size_t, const StrategySummary& s) { return s.failures; }, &compared, &differ);
    out += "\n";
  }
  if (sides.size() > 1) {
    out += "\n" + std::to_string(compared - differ) + " of " + std::to_string(compared) +
           " comparisons agree: the 95% interval of the difference holds 0";
    out += differ ? "; " + std::to_string(differ) + " differ (marked).\n" : ".\n";
  }
  // Paired by seed: where the sides part.
  if (sides.size() > 1) {
    out += "\n### Paired by seed\n\nOver the seeds both sides ran (a seed samples the same values on every side): "
           "runs that fail on both, on one only, on neither.\n\n";
    out += points ? "| point | strategy |" : "| strategy |";
    std::string rule = points ? "|---|---|" : "|---|";
    for (std::size_t k = 1; k < sides.size(); ++k) {
      out += " " + sides[k].label + ": seeds | both fail | " + sides[0].label + " only | " + sides[k].label +
             " only | neither |";
      rule += "---:|---:|---:|---:|---:|";
    }
    out += "\n" + rule + "\n";
    for (const auto& p : programs) {
      out += program_cells(p, points);
      const auto first = sides[0].failed_by_seed.find(p);
      for (std::size_t k = 1; k < sides.size(); ++k) {
        const auto other = sides[k].failed_by_seed.find(p);
        std::uint64_t n = 0, both = 0, only_first = 0, only_other = 0;
        if (first != sides[0].failed_by_seed.end() && other != sides[k].failed_by_seed.end()) {
          for (const auto& [seed, f] : first->second) {
            const auto it = other->second.find(seed);
            if (it == other->second.end()) continue;
            ++n;
            both += f && it->second;
            only_first += f && !it->second;
            only_other += !f && it->second;
          }
        }
        out += n == 0 ? std::string(" 0 | - | - | - | - |")
                      : " " + std::to_string(n) + " | " + std::to_string(both) + " | " + std::to_string(only_first) +
                            " | " + std::to_string(only_other) + " | " + std::to_string(n - both - only_first - only_other) +
                            " |";
      }
      out += "\n";
    }
  }
  out += failure_kinds_markdown(sides, programs, points);
  // Medians and their ratios to the first side.
  std::vector<std::string> measures{""};
  measures.insert(measures.end(), metrics.begin(), metrics.end());
  out += "\n### Medians\n\nThe p50 over runs (the makespan over passed runs only), with the runs it is over; and the "
         "ratio of the two sides' p50s over the same seeds, those on which both recorded it (n: how many), so that "
         "runs that recorded it on one side only (a run cut short by its failure) do not part the sides.\n\n";
  out += points ? "| point | strategy | measure |" : "| strategy | measure |";
  std::string rule = points ? "|---|---|---|" : "|---|---|";
  for (std::size_t k = 0; k < sides.size(); ++k) {
    out += " " + sides[k].label + " |";
    rule += "---:|";
    if (k > 0) {
      out += " " + sides[k].label + " / " + sides[0].label + ", same seeds |";
      rule += "---:|";
    }
  }
  out += "\n" + rule + "\n";
  for (const auto& p : programs) {
    for (const auto& m : measures) {
      out += program_cells(p, points) + " ";
      out += (m.empty() ? std::string("makespan (passed)") : m) + " |";
      for (std::size_t k = 0; k < sides.size(); ++k) {
        const StrategySummary* s = find(sides[k], p);
        double v = 0;
        std::uint64_t n = 0;
        const bool has = s && median_of(*s, m, v, n);
        out += has ? " " + metric_text(m.empty() ? "makespan_s" : m, v) + " (n " + std::to_string(n) + ") |" : " - |";
        if (k == 0) continue;
        double ratio = 0;
        std::uint64_t paired = 0;
        out += paired_ratio(sides[0], sides[k], p, m, ratio, paired)
                   ? " " + num(ratio) + "x (n " + std::to_string(paired) + ") |"
                   : " - |";
      }
      out += "\n";
    }
  }
  out += "\n### Sides\n\n";
  for (const auto& side : sides) out += "- **" + side.label + "**: " + side.setup + "\n";
  return out;
}

std::string format_comparison_csv(const std::vector<Side>& sides, const std::vector<std::string>& metrics) {
  std::string out = "point,strategy,side,runs,failures,failure_rate,failure_ci_lo,failure_ci_hi,"
                    "difference_lo,difference_hi,makespan_passed_p50";
  for (const auto& m : metrics) out += "," + m + "_p50," + m + "_n";
  out += "\n";
  for (const auto& p : programs_of(sides)) {
    const StrategySummary* first = find(sides[0], p);
    for (std::size_t k = 0; k < sides.size(); ++k) {
      const StrategySummary* s = find(sides[k], p);
      if (!s) continue;
      out += csv_field(p.first) + "," + csv_field(p.second) + "," + csv_field(sides[k].label) + "," + std::to_string(s->runs) +
             "," + std::to_string(s->failures) + "," + csv_number(s->failure_rate) + "," + csv_number(s->failure_ci.lo) + "," +
             csv_number(s->failure_ci.hi) + ",";
      if (k > 0 && first && first->runs > 0 && s->runs > 0) {
        const Interval d = difference_interval(first->failures, first->runs, s->failures, s->runs);
        out += csv_number(d.lo) + "," + csv_number(d.hi);
      } else {
        out += ",";
      }
      out += "," + (s->makespan_passed.n ? csv_number(s->makespan_passed.p50) : std::string());
      for (const auto& m : metrics) {
        double v = 0;
        std::uint64_t n = 0;
        out += median_of(*s, m, v, n) ? "," + csv_number(v) + "," + std::to_string(n) : std::string(",,");
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace racesim::report
