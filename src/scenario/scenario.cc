#include "src/scenario/scenario.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "src/scenario/yaml_util.h"

namespace racesim::scenario {

namespace {

constexpr int kMaxRanks = 100'000;
constexpr int kMaxSeeds = 10'000'000;

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::optional<std::int64_t> whole(const YAML::Node& node, std::int64_t lo, std::int64_t hi,
                                  std::string_view what, const std::string& file,
                                  Diagnostics& diags) {
  if (!node.IsScalar()) {
    diags.error(at(node, file), std::string(what) + ": expected a whole number, got " + kind_of(node));
    return std::nullopt;
  }
  auto v = parse_quantity(node.Scalar(), Unit::kCount);
  if (!v || *v < static_cast<double>(lo) || *v > static_cast<double>(hi)) {
    diags.error(at(node, file), std::string(what) + ": expected a whole number from " +
                                    std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
                                    node.Scalar() + "'");
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*v);
}

std::optional<std::string> text(const YAML::Node& node, std::string_view what,
                                const std::string& file, Diagnostics& diags) {
  if (!node.IsScalar()) {
    diags.error(at(node, file), std::string(what) + ": expected text, got " + kind_of(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<bool> boolean(const YAML::Node& node, std::string_view what, const std::string& file,
                            Diagnostics& diags) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  diags.error(at(node, file), std::string(what) + ": expected true or false");
  return std::nullopt;
}

// Visits every scalar under `node`.
template <typename F>
void each_scalar(const YAML::Node& node, F&& f) {
  if (node.IsScalar()) {
    f(node);
  } else if (node.IsSequence()) {
    for (const auto& n : node) each_scalar(n, f);
  } else if (node.IsMap()) {
    for (const auto& kv : node) each_scalar(kv.second, f);
  }
}

// Every `slot: NAME` in a step list, in order.
void find_slots(const YAML::Node& node, std::vector<std::pair<std::string, YAML::Node>>& out) {
  if (node.IsSequence()) {
    for (const auto& n : node) find_slots(n, out);
  } else if (node.IsMap()) {
    for (const auto& kv : node) {
      if (kv.first.Scalar() == "slot" && kv.second.IsScalar()) {
        out.emplace_back(kv.second.Scalar(), kv.second);
      } else {
        find_slots(kv.second, out);
      }
    }
  }
}

// limits.time: a positive duration.
std::optional<kernel::Time> time_limit(const YAML::Node& node, const std::string& file,
                                       Diagnostics& diags) {
  auto t = node.IsScalar() ? kernel::parse_duration(node.Scalar())
                           : kernel::Result<kernel::Time>::error("expected a duration");
  if (!t || *t <= 0) {
    diags.error(at(node, file), "limits.time: expected a positive duration like '1h'");
    return std::nullopt;
  }
  return *t;
}

// An optional numeric bound `key` of map `node` (metric checks and expectations).
std::optional<double> bound(const YAML::Node& node, const char* key, const std::string& file,
                            Diagnostics& diags) {
  if (!node[key]) return std::nullopt;
  auto v = node[key].IsScalar() ? parse_quantity(node[key].Scalar(), Unit::kNumber)
                                : Result<double>::error("");
  if (!v) {
    diags.error(at(node[key], file), std::string(key) + ": expected a number (metrics are plain "
                                                        "numbers; times in seconds)");
    return std::nullopt;
  }
  return *v;
}



// checks: [NAME | {metric: NAME, min: X, max: Y}, ...]; replaces any checks already set.
void parse_checks(const YAML::Node& checks, Scenario& sc, const std::string& file, Diagnostics& diags) {
  sc.checks.clear();
  sc.metric_checks.clear();
  if (!checks.IsSequence()) {
    diags.error(at(checks, file), "checks: expected a list of check names");
  } else {
    for (const auto& c : checks) {
      if (c.IsMap() && c["metric"]) {
        check_keys(c, {"metric", "min", "max"}, "a metric check", file, diags);
        MetricCheck mc;
        mc.where = at(c, file);
        mc.metric = text(c["metric"], "metric", file, diags).value_or("");
        mc.min = bound(c, "min", file, diags);
        mc.max = bound(c, "max", file, diags);
        if (!mc.min && !mc.max) diags.error(mc.where, "a metric check needs min and/or max");
        sc.metric_checks.push_back(std::move(mc));
        continue;
      }
      const std::string name = c.IsScalar() ? c.Scalar() : "";
      if (name != "no_deadlock" && name != "no_timeout" && name != "no_errors" &&
          name != "model_loads_intact" && name != "no_io_errors" && name != "shards_correct" &&
        name != "no_oom") {
        diags.error(at(c, file), "unknown check '" + name +
                                     "' (expected one of: no_deadlock, no_timeout, no_errors, "
                                     "model_loads_intact, no_io_errors, shards_correct, no_oom, "
                                     "or {metric: NAME, min: X, max: Y})");
        continue;
      }
      sc.checks.push_back(name);
    }
  }
}

// faults: a list of {kind: K, name: N, on: SELECTOR, probability: P, ARG: VALUE...}.
void parse_faults(const YAML::Node& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  if (!node.IsSequence()) {
    diags.error(at(node, file), std::string("faults: expected a list of {kind: KIND, on: RANKS, "
                                            "probability: P, ...}, got ") + kind_of(node));
    return;
  }
  for (const auto& f : node) {
    if (!f.IsMap() || !f["kind"]) {
      diags.error(at(f, file), "a fault: expected a map with 'kind' (see `racesim list`), and "
                               "optionally name, on, probability and the kind's arguments");
      continue;
    }
    FaultSpec spec;
    spec.where = at(f, file);
    spec.kind = text(f["kind"], "kind", file, diags).value_or("");
    spec.name = f["name"] ? text(f["name"], "name", file, diags).value_or("") : spec.kind;
    if (!is_identifier(spec.name)) {
      diags.error(at(f["name"] ? f["name"] : f["kind"], file),
                  "fault name '" + spec.name + "' must be an identifier");
    }
    for (const FaultSpec& other : sc.faults) {
      if (other.name == spec.name) {
        diags.error(spec.where, "two faults are named '" + spec.name +
                                    "' (give each fault of the same kind a distinct 'name')");
      }
    }
    if (f["on"]) spec.on = f["on"];
    if (f["probability"]) {
      auto v = f["probability"].IsScalar()
                   ? parse_quantity(f["probability"].Scalar(), Unit::kNumber)
                   : Result<double>::error("");
      if (!v || *v < 0 || *v > 1) {
        diags.error(at(f["probability"], file), "probability: expected a number from 0 to 1");
      } else {
        spec.probability = *v;
      }
    }
    spec.args = YAML::Node(YAML::NodeType::Map);
    for (const auto& kv : f) {
      const std::string key = kv.first.Scalar();
      if (key == "kind" || key == "name" || key == "on" || key == "probability") continue;
      spec.args[kv.first] = kv.second;
    }
    sc.faults.push_back(std::move(spec));
  }
}

// metrics: NAME: {of: SERIES, stat: STAT}.
void parse_metric_defs(const YAML::Node& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  const char* expected = "expected {of: SERIES, stat: min|max|mean|sum|count|p50|p90|p99}";
  if (!node.IsMap()) {
    diags.error(at(node, file), std::string("metrics: expected a map of NAME: ") + expected);
    return;
  }
  for (const auto& kv : node) {
    MetricDef m;
    m.name = kv.first.Scalar();
    m.where = at(kv.first, file);
    if (!kv.second.IsMap() || !kv.second["of"] || !kv.second["stat"]) {
      diags.error(at(kv.second, file), "metric '" + m.name + "': " + expected);
      continue;
    }
    check_keys(kv.second, {"of", "stat"}, "metric '" + m.name + "'", file, diags);
    m.of = text(kv.second["of"], "of", file, diags).value_or("");
    m.stat = text(kv.second["stat"], "stat", file, diags).value_or("");
    static const std::set<std::string> kStats = {"min", "max",  "mean", "sum",
                                                 "count", "p50", "p90", "p99"};
    if (!kStats.count(m.stat)) {
      diags.error(at(kv.second["stat"], file), "stat: expected min, max, mean, sum, count, p50, "
                                               "p90 or p99, got '" + m.stat + "'");
      continue;
    }
    sc.metric_defs.push_back(std::move(m));
  }
}

// A copy that shares no mutable YAML with `sc` (platform and fault arguments are cloned).
Scenario deep_copy(const Scenario& sc) {
  Scenario out = sc;
  if (sc.platform) out.platform = YAML::Clone(sc.platform);
  for (FaultSpec& f : out.faults) {
    f.args = YAML::Clone(f.args);
    if (f.on) f.on = YAML::Clone(f.on);
  }
  return out;
}

// sweep: KEY: [values]. Each value is checked now by applying it to a copy of the scenario.
void parse_sweep(const YAML::Node& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  if (!node.IsMap() || node.size() == 0) {
    diags.error(at(node, file), "sweep: expected a map of KEY: [values] (KEY as for --set, e.g. "
                                "params.om_bytes: [180MiB, 1GiB])");
    return;
  }
  std::size_t points = 1;
  for (const auto& kv : node) {
    SweepAxis axis;
    axis.key = kv.first.Scalar();
    axis.where = at(kv.first, file);
    if (axis.key == "seeds") {
      diags.error(axis.where, "sweep: 'seeds' cannot be an axis (every point runs the same seeds)");
      continue;
    }
    if (!kv.second.IsSequence() || kv.second.size() == 0) {
      diags.error(at(kv.second, file), "sweep." + axis.key + ": expected a non-empty list of values");
      continue;
    }
    for (const auto& v : kv.second) {
      Scenario scratch = deep_copy(sc);
      if (!apply_override(scratch, axis.key, v, at(v, file), diags)) continue;
      const std::string label = flow_text(v);
      if (std::find(axis.labels.begin(), axis.labels.end(), label) != axis.labels.end()) {
        diags.error(at(v, file), "sweep." + axis.key + ": '" + label + "' is listed twice");
        continue;
      }
      axis.values.push_back(v);
      axis.labels.push_back(label);
    }
    for (const SweepAxis& other : sc.sweep) {
      if (other.key == axis.key) diags.error(axis.where, "sweep: axis '" + axis.key + "' appears twice");
    }
    points *= std::max<std::size_t>(1, axis.values.size());
    sc.sweep.push_back(std::move(axis));
  }
  constexpr std::size_t kMaxPoints = 10'000;
  if (points > kMaxPoints) {
    diags.error(at(node, file), "sweep: " + std::to_string(points) + " points, more than the limit of " +
                                    std::to_string(kMaxPoints));
  }
}

std::optional<Expectation> parse_expectation(const std::string& strategy, const Location& where,
                                             const YAML::Node& b, const Scenario& sc,
                                             Diagnostics& diags) {
  const std::string& file = sc.file;
  Expectation e;
  e.strategy = strategy;
  e.where = b.IsMap() ? at(b, file) : where;
  if (!b.IsMap() || b.size() == 0) {
    diags.error(at(b, file), "expect." + strategy +
                                 ": expected a map with fails, never_fails, failure_rate or metric "
                                 "(and optionally at), or a list of such maps");
    return std::nullopt;
  }
  check_keys(b, {"fails", "never_fails", "failure_rate", "metric", "at"}, "expect." + strategy,
             file, diags);
  if (const YAML::Node a = b["at"]) {
    if (!a.IsMap() || a.size() == 0) {
      diags.error(at(a, file), "at: expected a map of sweep axis: value");
    } else {
      for (const auto& kv : a) {
        const std::string key = kv.first.Scalar();
        const SweepAxis* axis = nullptr;
        for (const SweepAxis& x : sc.sweep) {
          if (x.key == key) axis = &x;
        }
        if (axis == nullptr) {
          std::string known;
          for (const SweepAxis& x : sc.sweep) known += (known.empty() ? "" : ", ") + x.key;
          diags.error(at(kv.first, file), "at: '" + key + "' is not a sweep axis (axes: " +
                                              (known.empty() ? "none" : known) + ")");
          continue;
        }
        const std::string label = flow_text(kv.second);
        if (std::find(axis->labels.begin(), axis->labels.end(), label) == axis->labels.end()) {
          std::string known;
          for (const auto& l : axis->labels) known += (known.empty() ? "" : ", ") + l;
          diags.error(at(kv.second, file), "at: '" + label + "' is not a value of sweep axis '" +
                                               key + "' (values: " + known + ")");
          continue;
        }
        e.at.emplace_back(key, label);
      }
    }
  }
  if (const YAML::Node m = b["metric"]) {
    std::vector<YAML::Node> list;
    if (m.IsSequence()) {
      for (const auto& one : m) list.push_back(one);
    } else {
      list.push_back(m);
    }
    for (const auto& one : list) {
      if (!one.IsMap()) {
        diags.error(at(one, file), "metric: expected {name: NAME, stat: p50|p90|p99|max|mean, min: X, max: Y}");
        continue;
      }
      check_keys(one, {"name", "stat", "min", "max"}, "metric", file, diags);
      MetricExpectation me;
      me.metric = one["name"] ? text(one["name"], "metric name", file, diags).value_or("") : "";
      if (me.metric.empty()) diags.error(at(one, file), "metric: missing 'name'");
      if (one["stat"]) {
        me.stat = text(one["stat"], "stat", file, diags).value_or("p50");
        if (me.stat != "p50" && me.stat != "p90" && me.stat != "p99" && me.stat != "max" &&
            me.stat != "mean") {
          diags.error(at(one["stat"], file), "stat: expected p50, p90, p99, max or mean, got '" + me.stat + "'");
        }
      }
      me.min = bound(one, "min", file, diags);
      me.max = bound(one, "max", file, diags);
      if (!me.min && !me.max) diags.error(at(one, file), "metric: needs min and/or max");
      e.metrics.push_back(std::move(me));
    }
  }
  if (b["fails"]) e.fails = boolean(b["fails"], "fails", file, diags);
  if (b["never_fails"]) e.never_fails = boolean(b["never_fails"], "never_fails", file, diags);
  if (const YAML::Node fr = b["failure_rate"]) {
    if (!fr.IsMap()) {
      diags.error(at(fr, file), "failure_rate: expected {min: X, max: Y} with 0 <= X <= Y <= 1");
    } else {
      check_keys(fr, {"min", "max"}, "failure_rate", file, diags);
      auto rate = [&](const char* k) -> std::optional<double> {
        if (!fr[k]) return std::nullopt;
        auto v = fr[k].IsScalar() ? parse_quantity(fr[k].Scalar(), Unit::kNumber)
                                  : Result<double>::error("");
        if (!v || *v < 0 || *v > 1) {
          diags.error(at(fr[k], file), std::string("failure_rate.") + k +
                                           ": expected a number from 0 to 1");
          return std::nullopt;
        }
        return *v;
      };
      e.failure_rate_min = rate("min");
      e.failure_rate_max = rate("max");
    }
  }
  if (!e.fails && !e.never_fails && !e.failure_rate_min && !e.failure_rate_max && e.metrics.empty()) {
    diags.error(e.where, "expect." + strategy + ": nothing to check (give fails, never_fails, "
                                                "failure_rate or metric)");
    return std::nullopt;
  }
  return e;
}

}  // namespace

bool RankSelector::contains(int rank) const {
  switch (kind) {
    case Kind::kAll:
      return true;
    case Kind::kList:
      return std::binary_search(ranks.begin(), ranks.end(), rank);
    case Kind::kEvery:
      return rank >= offset && (rank - offset) % every == 0;
  }
  return false;
}

std::string RankSelector::describe() const {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kEvery:
      return "every " + std::to_string(every) + " from " + std::to_string(offset);
    case Kind::kList: {
      std::string s = "[";
      for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
      return s + "]";
    }
  }
  return "?";
}

std::optional<RankSelector> parse_rank_selector(const YAML::Node& node, int world,
                                                const std::string& file, Diagnostics& diags) {
  const std::string expected =
      "expected a rank selector: all, rank0, others, a rank, a list of ranks, a range 'A-B', or "
      "{every: K, offset: M}";
  RankSelector sel;
  auto check_rank = [&](long r, const YAML::Node& where) {
    if (r < 0 || r >= world) {
      diags.error(at(where, file), "rank " + std::to_string(r) + " is out of range (ranks are 0 to " +
                                       std::to_string(world - 1) + ")");
      return false;
    }
    return true;
  };
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "all") return sel;
    sel.kind = RankSelector::Kind::kList;
    if (s == "rank0") {
      sel.ranks = {0};
      return sel;
    }
    if (s == "others") {
      for (int r = 1; r < world; ++r) sel.ranks.push_back(r);
      return sel;
    }
    const auto dash = s.find('-');
    auto a = parse_quantity(s.substr(0, dash), Unit::kCount);
    if (dash == std::string::npos) {
      if (!a) {
        diags.error(at(node, file), expected + ", got '" + s + "'");
        return std::nullopt;
      }
      if (!check_rank(static_cast<long>(*a), node)) return std::nullopt;
      sel.ranks = {static_cast<int>(*a)};
      return sel;
    }
    auto b = parse_quantity(s.substr(dash + 1), Unit::kCount);
    if (!a || !b || *b < *a) {
      diags.error(at(node, file), expected + ", got '" + s + "'");
      return std::nullopt;
    }
    if (!check_rank(static_cast<long>(*a), node) || !check_rank(static_cast<long>(*b), node)) {
      return std::nullopt;
    }
    for (int r = static_cast<int>(*a); r <= static_cast<int>(*b); ++r) sel.ranks.push_back(r);
    return sel;
  }
  if (node.IsSequence()) {
    sel.kind = RankSelector::Kind::kList;
    for (const auto& n : node) {
      auto r = whole(n, 0, kMaxRanks, "rank", file, diags);
      if (!r || !check_rank(static_cast<long>(*r), n)) return std::nullopt;
      sel.ranks.push_back(static_cast<int>(*r));
    }
    std::sort(sel.ranks.begin(), sel.ranks.end());
    sel.ranks.erase(std::unique(sel.ranks.begin(), sel.ranks.end()), sel.ranks.end());
    if (sel.ranks.empty()) {
      diags.error(at(node, file), "the rank list is empty: a step on no rank never runs");
      return std::nullopt;
    }
    return sel;
  }
  if (node.IsMap() && node["every"]) {
    check_keys(node, {"every", "offset"}, "rank selector", file, diags);
    auto k = whole(node["every"], 1, kMaxRanks, "every", file, diags);
    std::optional<std::int64_t> m = 0;
    if (node["offset"]) m = whole(node["offset"], 0, kMaxRanks, "offset", file, diags);
    if (!k || !m) return std::nullopt;
    if (*m >= world) {
      check_rank(static_cast<long>(*m), node["offset"]);
      return std::nullopt;
    }
    sel.kind = RankSelector::Kind::kEvery;
    sel.every = static_cast<int>(*k);
    sel.offset = static_cast<int>(*m);
    return sel;
  }
  diags.error(at(node, file), expected + ", got " + kind_of(node));
  return std::nullopt;
}

void check_references(const std::string& s, const Location& where,
                      const std::map<std::string, Param>& params, Diagnostics& diags) {
  std::size_t pos = 0;
  // Bounded: each iteration consumes at least one character.
  while ((pos = s.find("${", pos)) != std::string::npos) {
    const std::size_t end = s.find('}', pos + 2);
    if (end == std::string::npos) {
      diags.error(where, "unterminated '${' in '" + s + "' (expected ${name})");
      return;
    }
    const std::string name = s.substr(pos + 2, end - pos - 2);
    if (name != "rank" && name != "world" && !params.count(name)) {
      std::string known = "rank, world";
      for (const auto& [n, p] : params) known += ", " + n;
      diags.error(where, "undefined '${" + name + "}' (known: " + known + ")");
    }
    pos = end + 1;
  }
}

std::string FaultSpec::describe_on(int world) const {
  if (!on || on.IsNull()) return "all";
  const bool target = on.IsMap() && (on["ranks"] || on["mount"] || on["comm"] || on["link"]);
  Diagnostics scratch;  // the compiler reports errors; a bad selector here prints as written
  auto ranks = [&](const YAML::Node& n) {
    auto sel = parse_rank_selector(n, world, std::string(), scratch);
    return sel ? sel->describe() : flow_text(n);
  };
  if (!target) return ranks(on);
  std::string s = on["ranks"] ? ranks(on["ranks"]) : "all";
  for (const char* k : {"mount", "comm", "link"}) {
    if (on[k]) s += std::string(", ") + k + " " + flow_text(on[k]);
  }
  return s;
}

Location Scenario::where(const std::string& key, const YAML::Node& node) const {
  auto it = overridden.find(key);
  return it != overridden.end() ? it->second : at(node, file);
}

const Strategy* Scenario::strategy(const std::string& n) const {
  for (const Strategy& s : strategies) {
    if (s.name == n) return &s;
  }
  return nullptr;
}

std::optional<Scenario> load_scenario_text(const std::string& text_in, const std::string& file,
                                           Diagnostics& diags) {
  YAML::Node root;
  try {
    root = YAML::Load(text_in);
  } catch (const YAML::Exception& e) {
    diags.error({file, e.mark.line + 1, e.mark.column + 1}, "invalid YAML: " + e.msg);
    return std::nullopt;
  }
  if (!root.IsMap()) {
    diags.error({file, 1, 1}, std::string("expected a scenario (a map with name, ranks, program, "
                                          "strategies, ...), got ") + kind_of(root));
    return std::nullopt;
  }
  const std::size_t errors_before = diags.count();
  Scenario sc;
  sc.file = file;
  check_keys(root,
             {"name", "summary", "source", "ranks", "platform", "params", "program", "strategies",
              "faults", "checks", "metrics", "sweep", "expect", "seeds", "limits"},
             "the scenario", file, diags);
  auto required = [&](const char* key) {
    if (!root[key]) diags.error({file, 1, 1}, std::string("missing required section '") + key + "'");
    return root[key];
  };
  if (auto n = required("name")) {
    if (auto t = text(n, "name", file, diags)) sc.name = *t;
  }
  if (root["summary"]) sc.summary = text(root["summary"], "summary", file, diags).value_or("");
  if (root["source"]) sc.source = text(root["source"], "source", file, diags).value_or("");
  if (auto r = required("ranks")) sc.ranks = static_cast<int>(whole(r, 1, kMaxRanks, "ranks", file, diags).value_or(1));
  if (root["seeds"]) sc.seeds = static_cast<int>(whole(root["seeds"], 1, kMaxSeeds, "seeds", file, diags).value_or(1));
  if (const YAML::Node lim = root["limits"]) {
    if (!lim.IsMap()) {
      diags.error(at(lim, file), "limits: expected a map with time and/or events");
    } else {
      check_keys(lim, {"time", "events"}, "limits", file, diags);
      if (lim["time"]) {
        if (auto t = time_limit(lim["time"], file, diags)) sc.limits.time = *t;
      }
      if (lim["events"]) {
        sc.limits.events = static_cast<std::uint64_t>(
            whole(lim["events"], 1, std::int64_t{1} << 50, "limits.events", file, diags).value_or(1));
      }
    }
  }
  if (const YAML::Node params = root["params"]) {
    if (!params.IsMap()) {
      diags.error(at(params, file), std::string("params: expected a map of name: value, got ") + kind_of(params));
    } else {
      for (const auto& kv : params) {
        const std::string name = kv.first.Scalar();
        if (!is_identifier(name) || name == "rank" || name == "world") {
          diags.error(at(kv.first, file), "param name '" + name +
                                              "' must be an identifier other than rank and world");
          continue;
        }
        auto d = parse_distribution(kv.second, std::nullopt, file, diags);
        // An invalid param is still defined (its error is reported once), so references to
        // it do not add misleading "undefined" errors; the load fails anyway.
        sc.params[name] = Param{name, at(kv.first, file), d.value_or(Distribution{})};
      }
    }
  }
  sc.platform = root["platform"];
  if (auto prog = required("program")) {
    if (!prog.IsSequence() || prog.size() == 0) {
      diags.error(at(prog, file), "program: expected a non-empty list of steps");
    } else {
      sc.program = prog;
    }
  }
  // Slots the program uses.
  std::vector<std::pair<std::string, YAML::Node>> slot_uses;
  if (sc.program) find_slots(sc.program, slot_uses);
  for (const auto& [name, node] : slot_uses) {
    if (std::find(sc.slot_names.begin(), sc.slot_names.end(), name) == sc.slot_names.end()) {
      sc.slot_names.push_back(name);
    }
  }
  if (auto strategies = required("strategies")) {
    if (!strategies.IsMap() || strategies.size() == 0) {
      diags.error(at(strategies, file), "strategies: expected a map of name: {slot: steps, ...}");
    } else {
      for (const auto& kv : strategies) {
        Strategy st;
        st.name = kv.first.Scalar();
        st.where = at(kv.first, file);
        if (!is_identifier(st.name)) {
          diags.error(st.where, "strategy name '" + st.name + "' must be an identifier");
        }
        const YAML::Node body = kv.second;
        if (body.IsNull()) {
          // A strategy with no bindings is fine when the program has no slots.
        } else if (!body.IsMap()) {
          diags.error(at(body, file), "strategy '" + st.name + "': expected a map of slot: steps");
        } else {
          for (const auto& b : body) {
            const std::string key = b.first.Scalar();
            if (key == "summary") {
              st.summary = text(b.second, "summary", file, diags).value_or("");
              continue;
            }
            if (std::find(sc.slot_names.begin(), sc.slot_names.end(), key) == sc.slot_names.end()) {
              std::string known;
              for (const auto& s : sc.slot_names) known += (known.empty() ? "" : ", ") + s;
              diags.error(at(b.first, file), "strategy '" + st.name + "' binds '" + key +
                                                 "', which the program has no slot for (slots: " +
                                                 (known.empty() ? "none" : known) + ")");
              continue;
            }
            if (!b.second.IsSequence()) {
              diags.error(at(b.second, file), "strategy '" + st.name + "', slot '" + key +
                                                  "': expected a list of steps");
              continue;
            }
            st.slots[key] = b.second;
          }
        }
        for (const auto& slot : sc.slot_names) {
          if (!st.slots.count(slot)) {
            diags.error(st.where, "strategy '" + st.name + "' has no binding for slot '" + slot +
                                      "' (every strategy must bind every slot the program uses)");
          }
        }
        sc.strategies.push_back(std::move(st));
      }
    }
  }
  // ${name} references anywhere in the program and the strategies.
  auto refs = [&](const YAML::Node& n) {
    each_scalar(n, [&](const YAML::Node& s) { check_references(s.Scalar(), at(s, file), sc.params, diags); });
  };
  if (sc.program) refs(sc.program);
  for (const Strategy& st : sc.strategies) {
    for (const auto& [slot, steps] : st.slots) refs(steps);
  }
  if (const YAML::Node checks = root["checks"]) parse_checks(checks, sc, file, diags);
  parse_faults(root["faults"], sc, diags);
  parse_metric_defs(root["metrics"], sc, diags);
  parse_sweep(root["sweep"], sc, diags);
  if (const YAML::Node expect = root["expect"]) {
    if (!expect.IsMap()) {
      diags.error(at(expect, file), "expect: expected a map of strategy: expectations");
    } else {
      for (const auto& kv : expect) {
        const std::string name = kv.first.Scalar();
        if (!sc.strategy(name)) {
          diags.error(at(kv.first, file), "expect names strategy '" + name + "', which is not defined");
          continue;
        }
        // One expectation (a map) or several (a list of maps, e.g. one per sweep point).
        if (kv.second.IsSequence() && kv.second.size() > 0) {
          for (const auto& one : kv.second) {
            if (auto e = parse_expectation(name, at(kv.first, file), one, sc, diags)) {
              sc.expect.push_back(std::move(*e));
            }
          }
        } else if (auto e = parse_expectation(name, at(kv.first, file), kv.second, sc, diags)) {
          sc.expect.push_back(std::move(*e));
        }
      }
    }
  }
  if (diags.count() != errors_before) return std::nullopt;
  return sc;
}

bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags) {
  const auto eq = assignment.find('=');
  const std::string key = assignment.substr(0, eq);
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
    diags.error({"--set " + assignment, 0, 0}, "expected KEY=VALUE, e.g. params.poll=100ms");
    return false;
  }
  const Location where{"--set " + key, 0, 0};
  // A sweep point sets its axes after the overrides, so a --set of an axis would be silently
  // replaced at every point.
  for (const SweepAxis& axis : sc.sweep) {
    if (axis.key != key) continue;
    std::string values;
    for (const std::string& l : axis.labels) values += (values.empty() ? "" : ", ") + l;
    diags.error(where, key + " is a sweep axis of " + sc.file + " (" + to_string(axis.where) +
                           ": " + values + "): every sweep point would replace the override; change the "
                           "axis's values in the file, or remove the axis");
    return false;
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    diags.error(where, "the value is not valid YAML: " + e.msg);
    return false;
  }
  return apply_override(sc, key, value, where, diags);
}

namespace {

// platform.PATH: every component must exist (a typo is an error, not a new key).
void set_platform(Scenario& sc, const std::string& path, const YAML::Node& value,
                  const std::string& file, Diagnostics& local) {
  YAML::Node node = sc.platform;
  std::size_t pos = 0;
  std::string done = "platform";
  for (int depth = 0; depth < 64; ++depth) {
    const std::size_t dot = path.find('.', pos);
    const std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!node || !node.IsMap() || !node[part]) {
      std::string known;
      if (node && node.IsMap()) {
        for (const auto& kv : node) known += (known.empty() ? "" : ", ") + kv.first.Scalar();
      }
      local.error({file, 0, 0}, "no value '" + part + "' in " + done + " (" +
                                    (known.empty() ? std::string("it has no keys")
                                                   : "keys: " + known) + ")");
      return;
    }
    if (dot == std::string::npos) {
      if (node[part].IsMap() != value.IsMap() && node[part].IsMap()) {
        local.error({file, 0, 0}, done + "." + part + " is a map; set one of its values instead");
        return;
      }
      node[part] = YAML::Clone(value);
      return;
    }
    node.reset(node[part]);
    done += "." + part;
    pos = dot + 1;
  }
  local.error({file, 0, 0}, "the path is deeper than 64 levels");
}

// faults.NAME.FIELD
void set_fault(Scenario& sc, const std::string& rest, const YAML::Node& value,
               const std::string& file, Diagnostics& local) {
  const auto dot = rest.find('.');
  const std::string name = rest.substr(0, dot);
  FaultSpec* f = nullptr;
  for (FaultSpec& x : sc.faults) {
    if (x.name == name) f = &x;
  }
  if (f == nullptr || dot == std::string::npos || dot + 1 == rest.size()) {
    std::string known;
    for (const FaultSpec& x : sc.faults) known += (known.empty() ? "" : ", ") + x.name;
    local.error({file, 0, 0}, f == nullptr ? "no fault named '" + name + "' (faults: " +
                                                 (known.empty() ? "none" : known) + ")"
                                           : "expected faults.NAME.FIELD (probability, on or "
                                             "one of the kind's arguments)");
    return;
  }
  const std::string field = rest.substr(dot + 1);
  if (field == "probability") {
    auto v = value.IsScalar() ? parse_quantity(value.Scalar(), Unit::kNumber)
                              : Result<double>::error("");
    if (!v || *v < 0 || *v > 1) {
      local.error({file, 0, 0}, "probability: expected a number from 0 to 1");
    } else {
      f->probability = *v;
    }
  } else if (field == "on") {
    f->on = YAML::Clone(value);  // resolved when the program is compiled
  } else if (field == "kind" || field == "name") {
    local.error({file, 0, 0}, "a fault's " + field + " cannot be overridden");
  } else {
    // The kind checks its arguments when the program is compiled.
    f->args[field] = YAML::Clone(value);
  }
}

}  // namespace

bool apply_override(Scenario& sc, const std::string& key, const YAML::Node& value,
                    const Location& where, Diagnostics& diags) {
  const std::size_t before = diags.count();
  // Errors about the value are reported at `where`, not at a position inside the value.
  Diagnostics local;
  const std::string file = where.file;
  if (key == "ranks") {
    if (auto v = whole(value, 1, kMaxRanks, "ranks", file, local)) sc.ranks = static_cast<int>(*v);
  } else if (key == "checks") {
    parse_checks(value, sc, file, local);
  } else if (key == "seeds") {
    if (auto v = whole(value, 1, kMaxSeeds, "seeds", file, local)) sc.seeds = static_cast<int>(*v);
  } else if (key == "limits.events") {
    if (auto v = whole(value, 1, std::int64_t{1} << 50, "limits.events", file, local)) {
      sc.limits.events = static_cast<std::uint64_t>(*v);
    }
  } else if (key == "limits.time") {
    if (auto t = time_limit(value, file, local)) sc.limits.time = *t;
  } else if (key.rfind("params.", 0) == 0) {
    const std::string name = key.substr(7);
    auto it = sc.params.find(name);
    if (it == sc.params.end()) {
      std::string known;
      for (const auto& [n, p] : sc.params) known += (known.empty() ? "" : ", ") + n;
      local.error({file, 0, 0}, "no param '" + name + "' in the scenario (params: " +
                                    (known.empty() ? "none" : known) + ")");
    } else if (auto d = parse_distribution(value, std::nullopt, file, local)) {
      it->second.value = *d;
    }
  } else if (key.rfind("platform.", 0) == 0 && key.size() > 9) {
    set_platform(sc, key.substr(9), value, file, local);
  } else if (key.rfind("faults.", 0) == 0) {
    set_fault(sc, key.substr(7), value, file, local);
  } else {
    local.error({file, 0, 0}, "cannot override '" + key +
                                  "' (expected ranks, seeds, checks, limits.time, "
                                  "limits.events, params.NAME, platform.PATH or faults.NAME.FIELD)");
  }
  for (const Diagnostic& d : local.all()) diags.error(where, d.message);
  if (diags.count() != before) return false;
  if (key.rfind("platform.", 0) == 0 || key.rfind("faults.", 0) == 0) sc.overridden[key] = where;
  return true;
}

std::string flow_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

std::vector<SweepPoint> sweep_points(const Scenario& sc) {
  std::vector<SweepPoint> points(1);
  for (const SweepAxis& axis : sc.sweep) {
    std::vector<SweepPoint> next;
    for (const SweepPoint& p : points) {
      for (std::size_t i = 0; i < axis.values.size(); ++i) {
        SweepPoint q = p;
        q.label += (q.label.empty() ? "" : " ") + axis.key + "=" + axis.labels[i];
        q.values.emplace_back(axis.key, axis.labels[i]);
        q.assignments.emplace_back(axis.key, axis.values[i]);
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::optional<Scenario> at_point(const Scenario& sc, const SweepPoint& point, Diagnostics& diags) {
  Scenario out = deep_copy(sc);
  bool ok = true;
  for (const auto& [key, value] : point.assignments) {
    ok = apply_override(out, key, value, at(value, sc.file), diags) && ok;
  }
  if (!ok) return std::nullopt;
  out.point = point.label;
  out.point_values = point.values;
  return out;
}

bool applies_at(const Expectation& e, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& want : e.at) {
    if (std::find(values.begin(), values.end(), want) == values.end()) return false;
  }
  return true;
}

std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& diags) {
  std::ifstream in(path);
  if (!in) {
    diags.error({path, 0, 0}, "cannot open the scenario file");
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return load_scenario_text(ss.str(), path, diags);
}

}  // namespace racesim::scenario
