// The loader (see loader.h).
#include "src/scenario/language/loader.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "sim/kernel/random.h"
#include "src/scenario/language/checks.h"
#include "src/scenario/language/expectations.h"
#include "src/scenario/language/param.h"
#include "src/scenario/language/sweep.h"
#include "src/scenario/file/closest.h"
#include "src/scenario/file/input_file.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

namespace {


// Every `slot: NAME` in a step list, in order.
void find_slots(const Value& node, std::vector<std::pair<std::string, Value>>& out) {
  if (node.is_list()) {
    for (const auto& n : node.items()) find_slots(n, out);
  } else if (node.is_map()) {
    for (const auto& kv : node.entries()) {
      if (kv.first.scalar() == "slot" && kv.second.is_scalar()) {
        out.emplace_back(kv.second.scalar(), kv.second);
      } else {
        find_slots(kv.second, out);
      }
    }
  }
}

// define: NAME: [steps] | {args: [A, ...], do: [steps]}.
void parse_defines(const Value& node, Scenario& sc, Diagnostics& diags) {
  const std::string& file = sc.file;
  const char* expected = "expected NAME: [steps] or NAME: {args: [NAME, ...], do: [steps]}";
  if (!node.is_map()) {
    diags.error(at(node, file), std::string("define: ") + expected + ", got " + kind_of(node));
    return;
  }
  for (const auto& kv : node.entries()) {
    Definition d;
    d.name = kv.first.scalar();
    d.where = at(kv.first, file);
    if (!is_identifier(d.name)) {
      diags.error(d.where, "define: '" + d.name + "' must be an identifier");
      continue;
    }
    const Value v = kv.second;
    if (v.is_list()) {
      d.body = v;
    } else if (v.is_map() && v["do"] && v["do"].is_list()) {
      check_keys(v, {"args", "do"}, "define." + d.name, file, diags);
      d.body = v["do"];
      if (const Value a = v["args"]) {
        if (!a.is_list()) {
          diags.error(at(a, file), "define." + d.name + ".args: expected a list of names");
        } else {
          for (const auto& n : a.items()) {
            const std::string arg = n.is_scalar() ? n.scalar() : "";
            if (!is_identifier(arg) || arg == "name") {
              diags.error(at(n, file), "define." + d.name + ".args: '" + arg + "' must be an identifier other than name");
            } else if (std::find(d.args.begin(), d.args.end(), arg) != d.args.end()) {
              diags.error(at(n, file), "define." + d.name + ".args: '" + arg + "' is listed twice");
            } else {
              d.args.push_back(arg);
            }
          }
        }
      }
    } else {
      diags.error(at(v, file), "define." + d.name + ": " + expected + ", got " + kind_of(v));
      continue;
    }
    sc.defines[d.name] = std::move(d);
  }
}

// faults: a list of {kind: K, name: N, on: SELECTOR, probability: P, fires: P, times: N, ARG: VALUE...}.
void parse_faults(const Value& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  if (!node.is_list()) {
    diags.error(at(node, file), std::string("faults: expected a list of {kind: KIND, on: RANKS, "
                                            "probability: P, ...}, got ") + kind_of(node));
    return;
  }
  // The names so far and where each was first given: a repeated name is one error at the repeat,
  // naming the first (a set, so a long plan is checked in linear time, not per pair).
  std::map<std::string, Location> named;
  for (const auto& f : node.items()) {
    if (!f.is_map() || !f["kind"]) {
      diags.error(at(f, file), "a fault: expected a map with 'kind' (see `racesim list`), and "
                               "optionally name, on, probability, fires, times and the kind's arguments");
      continue;
    }
    FaultSpec spec;
    spec.where = at(f, file);
    spec.kind = read_text(f["kind"], "kind", file, diags).value_or("");
    spec.name = f["name"] ? read_text(f["name"], "name", file, diags).value_or("") : spec.kind;
    if (!is_identifier(spec.name)) {
      diags.error(at(f["name"] ? f["name"] : f["kind"], file),
                  "fault name '" + spec.name + "' must be an identifier");
    }
    if (const auto [it, first] = named.emplace(spec.name, spec.where); !first) {
      diags.error(spec.where, "two faults are named '" + spec.name + "' (the first at " + to_string(it->second) +
                                  "; give each fault of the same kind a distinct 'name')");
    }
    if (f["on"]) spec.on = f["on"];
    for (const char* level : {"probability", "fires", "times"}) {
      if (f[level]) spec.set_level(level, f[level], at(f[level], file), diags);
    }
    for (const auto& kv : f.entries()) {
      const std::string key = kv.first.scalar();
      if (key == "kind" || key == "name" || key == "on" || FaultSpec::is_level_field(key)) continue;
      spec.args.emplace_back(kv.first, kv.second);
    }
    sc.faults.push_back(std::move(spec));
  }
}

// metrics: NAME: {of: SERIES, stat: STAT}.
void parse_metric_defs(const Value& node, Scenario& sc, Diagnostics& diags) {
  if (!node) return;
  const std::string& file = sc.file;
  const char* expected = "expected {of: SERIES, stat: STAT} or {between: [MARK, MARK], stat: STAT} "
                         "(STAT: min|max|mean|sum|count|p50|p90|p99)";
  if (!node.is_map()) {
    diags.error(at(node, file), std::string("metrics: expected a map of NAME: ") + expected);
    return;
  }
  for (const auto& kv : node.entries()) {
    MetricDef m;
    m.name = kv.first.scalar();
    m.where = at(kv.first, file);
    if (!kv.second.is_map() || kv.second["of"].is_defined() == kv.second["between"].is_defined() || !kv.second["stat"]) {
      diags.error(at(kv.second, file), "metric '" + m.name + "': " + expected);
      continue;
    }
    check_keys(kv.second, {"of", "between", "stat"}, "metric '" + m.name + "'", file, diags);
    if (const Value b = kv.second["between"]) {
      m.of_where = at(b, file);
      if (!b.is_list() || b.size() != 2 || !b[0].is_scalar() || !b[1].is_scalar()) {
        diags.error(m.of_where, "metric '" + m.name + "' between: expected two mark names, [FROM, TO]");
        continue;
      }
      m.between = {b[0].scalar(), b[1].scalar()};
    } else {
      m.of = read_text(kv.second["of"], "of", file, diags).value_or("");
      m.of_where = at(kv.second["of"], file);
    }
    m.stat = read_text(kv.second["stat"], "stat", file, diags).value_or("");
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

}  // namespace


std::optional<Scenario> load_scenario_text(const std::string& text_in, const std::string& file,
                                           Diagnostics& diags) {
  if (text_in.size() > kMaxScenarioBytes) {
    // Located where the limit is crossed.
    const auto last_nl = text_in.rfind('\n', kMaxScenarioBytes - 1);
    const auto line = 1 + std::count(text_in.begin(), text_in.begin() + static_cast<std::ptrdiff_t>(kMaxScenarioBytes), '\n');
    const auto column = kMaxScenarioBytes - (last_nl == std::string::npos ? 0 : last_nl + 1) + 1;
    diags.error({file, static_cast<int>(line), static_cast<int>(column)},
                "the file is larger than " + std::to_string(kMaxScenarioBytes / 1024) +
                    " KiB, the limit for a scenario file (the shipped ones are under 12 KiB)");
    return std::nullopt;
  }
  YAML::Node yaml;
  try {
    yaml = YAML::Load(text_in);
  } catch (const YAML::Exception& e) {
    std::string msg = e.msg;
    // yaml-cpp does not say which anchor: read the alias's name where it points.
    if (msg.find("anchor is not defined") != std::string::npos && e.mark.pos >= 0 &&
        static_cast<std::size_t>(e.mark.pos) < text_in.size() && text_in[static_cast<std::size_t>(e.mark.pos)] == '*') {
      std::size_t end = static_cast<std::size_t>(e.mark.pos) + 1;
      while (end < text_in.size() && !std::isspace(static_cast<unsigned char>(text_in[end])) &&
             std::string_view(",]}").find(text_in[end]) == std::string_view::npos) {
        ++end;
      }
      const std::string name = text_in.substr(static_cast<std::size_t>(e.mark.pos) + 1, end - static_cast<std::size_t>(e.mark.pos) - 1);
      msg = "the alias *" + name + " names no anchor &" + name + " defined before it (anchors can be defined "
            "under an x-NAME key, or name a step list under define:)";
    }
    diags.error({file, e.mark.line + 1, e.mark.column + 1}, "invalid YAML: " + msg);
    return std::nullopt;
  }
  // Aliases share their nodes, but every walk over the tree visits them once per use: a few
  // nested aliases (a "billion laughs" file) would make the walks below unbounded.
  if (count_nodes(yaml, kMaxYamlNodes) > kMaxYamlNodes) {
    // Located at the top-level entry that crosses the limit (the whole file if it is not a map).
    Location where{file, 1, 1};
    if (yaml.IsMap()) {
      std::size_t total = 0;
      for (const auto& kv : yaml) {
        total += count_nodes(kv.second, kMaxYamlNodes) + 1;
        if (total > kMaxYamlNodes) {
          where = at(Value::from_yaml(kv.first), file);
          break;
        }
      }
    }
    diags.error(where, "the file expands to more than " + std::to_string(kMaxYamlNodes) +
                           " YAML nodes here, counting each use of an alias (nested aliases?)");
    return std::nullopt;
  }
  // The one reading of the document: everything below, and everything after the loader, reads
  // the Value tree.
  const Value root = Value::from_yaml(yaml);
  if (!root.is_map()) {
    diags.error({file, 1, 1}, std::string("expected a scenario (a map with name, ranks, program, "
                                          "strategies, ...), got ") + kind_of(root));
    return std::nullopt;
  }
  const std::size_t errors_before = diags.count();
  Scenario sc;
  sc.file = file;
  {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(kernel::fnv1a64(text_in)));
    sc.content_hash = hex;
  }
  // Keys named x-NAME are the author's (anchors for aliases, notes) and are ignored.
  for (const auto& kv : root.entries()) {
    const std::string key = kv.first.scalar();
    static const std::set<std::string> kKeys = {"name", "summary", "source", "ranks", "platform", "params",
                                                "program", "define", "strategies", "faults", "checks", "metrics",
                                                "sweep", "expect", "seeds", "limits", "ci"};
    if (kKeys.count(key) || key.rfind("x-", 0) == 0) continue;
    diags.error(at(kv.first, file), "unknown key '" + key + "' in the scenario (expected one of: name, summary, "
                                    "source, ranks, platform, params, program, define, strategies, faults, "
                                    "checks, metrics, sweep, expect, seeds, limits, ci; or x-NAME for anchors)");
  }
  auto required = [&](const char* key) {
    if (!root[key]) diags.error({file, 1, 1}, std::string("missing required section '") + key + "'");
    return root[key];
  };
  if (auto n = required("name")) {
    if (auto t = read_text(n, "name", file, diags)) sc.name = *t;
  }
  if (root["summary"]) sc.summary = read_text(root["summary"], "summary", file, diags).value_or("");
  if (root["source"]) sc.source = read_text(root["source"], "source", file, diags).value_or("");
  if (auto r = required("ranks")) sc.ranks = static_cast<int>(read_whole(r, 1, kMaxRanks, "ranks", file, diags).value_or(1));
  if (root["seeds"]) sc.seeds = static_cast<int>(read_whole(root["seeds"], 1, kMaxSeeds, "seeds", file, diags).value_or(1));
  if (const Value ci = root["ci"]) {
    if (!ci.is_map()) {
      diags.error(at(ci, file), "ci: expected a map {points: [FILTER, ...], seeds: N}");
    } else {
      check_keys(ci, {"points", "seeds"}, "ci", file, diags);
      if (const Value pts = ci["points"]) {
        if (!pts.is_list()) {
          diags.error(at(pts, file), "ci.points: expected a list of sweep point filters like ranks=64");
        } else {
          for (const auto& p : pts.items()) {
            if (auto t = read_text(p, "ci.points", file, diags)) sc.ci_points.push_back(*t);
          }
        }
      }
      if (ci["seeds"]) sc.ci_seeds = static_cast<int>(read_whole(ci["seeds"], 1, kMaxSeeds, "ci.seeds", file, diags).value_or(1));
    }
  }
  if (const Value lim = root["limits"]) {
    if (!lim.is_map()) {
      diags.error(at(lim, file), "limits: expected a map with time and/or events");
    } else {
      check_keys(lim, {"time", "events"}, "limits", file, diags);
      if (lim["time"]) {
        if (auto t = read_time_limit(lim["time"], file, diags)) sc.limits.time = *t;
      }
      if (lim["events"]) {
        sc.limits.events = static_cast<std::uint64_t>(
            read_whole(lim["events"], 1, std::int64_t{1} << 50, "limits.events", file, diags).value_or(1));
      }
    }
  }
  if (const Value params = root["params"]) {
    if (!params.is_map()) {
      diags.error(at(params, file), std::string("params: expected a map of name: value, got ") + kind_of(params));
    } else {
      for (const auto& kv : params.entries()) {
        const std::string name = kv.first.scalar();
        if (!is_identifier(name) || name == "rank" || name == "world") {
          diags.error(at(kv.first, file), "param name '" + name +
                                              "' must be an identifier other than rank and world");
          continue;
        }
        // An invalid param is still defined (its error is reported once), so references to
        // it do not add misleading "unknown name" errors; the load fails anyway.
        Param p{name, at(kv.first, file), Distribution{}, std::nullopt, std::nullopt};
        parse_param_value(kv.second, file, diags, p);
        sc.params[name] = std::move(p);
      }
    }
  }
  sc.platform = root["platform"];
  if (auto prog = required("program")) {
    if (!prog.is_list() || prog.size() == 0) {
      diags.error(at(prog, file), "program: expected a non-empty list of steps");
    } else {
      sc.program = prog;
    }
  }
  if (const Value defs = root["define"]) parse_defines(defs, sc, diags);
  // Slots the program uses (and the step lists it may use).
  std::vector<std::pair<std::string, Value>> slot_uses;
  if (sc.program) find_slots(sc.program, slot_uses);
  for (const auto& [name, def] : sc.defines) find_slots(def.body, slot_uses);
  for (const auto& [name, node] : slot_uses) {
    if (std::find(sc.slot_names.begin(), sc.slot_names.end(), name) == sc.slot_names.end()) {
      sc.slot_names.push_back(name);
    }
  }
  if (auto strategies = required("strategies")) {
    if (!strategies.is_map() || strategies.size() == 0) {
      diags.error(at(strategies, file), "strategies: expected a map of name: {slot: steps, ...}");
    } else {
      for (const auto& kv : strategies.entries()) {
        Strategy st;
        st.name = kv.first.scalar();
        st.where = at(kv.first, file);
        if (!is_identifier(st.name)) {
          diags.error(st.where, "strategy name '" + st.name + "' must be an identifier");
        }
        const Value body = kv.second;
        if (body.is_null()) {
          // A strategy with no bindings is fine when the program has no slots.
        } else if (!body.is_map()) {
          diags.error(at(body, file), "strategy '" + st.name + "': expected a map of slot: steps");
        } else {
          for (const auto& b : body.entries()) {
            const std::string key = b.first.scalar();
            if (key == "summary") {
              st.summary = read_text(b.second, "summary", file, diags).value_or("");
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
            if (!b.second.is_list()) {
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
  if (const Value checks = root["checks"]) parse_checks(checks, sc, file, diags);
  parse_faults(root["faults"], sc, diags);
  parse_metric_defs(root["metrics"], sc, diags);
  parse_sweep(root["sweep"], sc, diags);
  if (const Value expect = root["expect"]) {
    if (!expect.is_map()) {
      diags.error(at(expect, file), "expect: expected a map of strategy: expectations");
    } else {
      for (const auto& kv : expect.entries()) {
        const std::string name = kv.first.scalar();
        if (!sc.strategy(name)) {
          const auto names = sc.strategy_names();
          diags.error(at(kv.first, file), "expect names strategy '" + name + "', which is not defined (" +
                                              did_you_mean(name, names) + "strategies: " + name_list(names) + ")");
          continue;
        }
        // One expectation (a map) or several (a list of maps, e.g. one per sweep point).
        if (kv.second.is_list() && kv.second.size() > 0) {
          for (const auto& one : kv.second.items()) {
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

std::optional<Scenario> load_scenario(const std::string& path, Diagnostics& diags) {
  // At most one byte past the limit is read: load_scenario_text says where the limit is crossed.
  auto text = read_input_file(path, kMaxScenarioBytes, "a scenario file", Oversize::kFirstBytes);
  if (!text) {
    diags.error({path, 0, 0}, text.message());
    return std::nullopt;
  }
  return load_scenario_text(*text, path, diags);
}

}  // namespace racesim::scenario
