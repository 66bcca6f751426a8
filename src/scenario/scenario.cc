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
  for (const char* later : {"faults", "metrics", "sweep"}) {
    if (root[later]) {
      diags.error(at(root[later], file),
                  std::string("section '") + later +
                      "' is part of the scenario format but not supported by this version of "
                      "racesim yet; remove it");
    }
  }
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
  if (const YAML::Node checks = root["checks"]) {
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
        if (name != "no_deadlock" && name != "no_timeout" && name != "no_errors") {
          diags.error(at(c, file), "unknown check '" + name +
                                       "' (expected one of: no_deadlock, no_timeout, no_errors, "
                                       "or {metric: NAME, min: X, max: Y})");
          continue;
        }
        sc.checks.push_back(name);
      }
    }
  }
  if (const YAML::Node expect = root["expect"]) {
    if (!expect.IsMap()) {
      diags.error(at(expect, file), "expect: expected a map of strategy: expectations");
    } else {
      for (const auto& kv : expect) {
        Expectation e;
        e.strategy = kv.first.Scalar();
        e.where = at(kv.first, file);
        if (!sc.strategy(e.strategy)) {
          diags.error(e.where, "expect names strategy '" + e.strategy + "', which is not defined");
          continue;
        }
        const YAML::Node b = kv.second;
        if (!b.IsMap() || b.size() == 0) {
          diags.error(at(b, file), "expect." + e.strategy +
                                       ": expected a map with fails, never_fails or failure_rate");
          continue;
        }
        check_keys(b, {"fails", "never_fails", "failure_rate", "metric"}, "expect." + e.strategy,
                   file, diags);
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
            auto bound = [&](const char* k) -> std::optional<double> {
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
            e.failure_rate_min = bound("min");
            e.failure_rate_max = bound("max");
          }
        }
        sc.expect.push_back(std::move(e));
      }
    }
  }
  if (diags.count() != errors_before) return std::nullopt;
  return sc;
}

bool apply_override(Scenario& sc, const std::string& assignment, Diagnostics& diags) {
  const std::size_t before = diags.count();
  const auto eq = assignment.find('=');
  const std::string key = assignment.substr(0, eq);
  const Location where{"--set " + key, 0, 0};
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
    diags.error({"--set " + assignment, 0, 0}, "expected KEY=VALUE, e.g. params.poll=100ms");
    return false;
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    diags.error(where, "the value is not valid YAML: " + e.msg);
    return false;
  }
  // Errors about the value are reported at the override, not at a position in the file.
  Diagnostics local;
  const std::string file = "--set " + key;
  if (key == "ranks") {
    if (auto v = whole(value, 1, kMaxRanks, "ranks", file, local)) sc.ranks = static_cast<int>(*v);
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
  } else {
    local.error({file, 0, 0}, "cannot override '" + key +
                                  "' (expected ranks, seeds, limits.time, limits.events or "
                                  "params.NAME)");
  }
  for (const Diagnostic& d : local.all()) diags.error({file, 0, 0}, d.message);
  return diags.count() == before;
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
