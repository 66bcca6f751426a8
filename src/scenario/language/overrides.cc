// Overrides (see overrides.h).
#include "src/scenario/language/overrides.h"

#include <algorithm>

#include "src/scenario/language/platform.h"

#include "src/scenario/language/checks.h"
#include "src/scenario/language/param.h"
#include "src/scenario/file/quantity.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

namespace {

// platform.PATH: every component must exist (a typo is an error, not a new key), except a mount's
// own setting, which may be added when it is one a mount takes (a calibration's meta_jitter on a
// mount that left it at its default), a key of such a setting that is a map, which may be added
// with its setting or to it (file_overhead.read: live --fit-costs' lines), and a setting of a
// section other than storage,
// platform.SECTION.KEY, which may be added with its section (a calibration's platform.host.cores
// on a scenario without platform.host): the platform's parser then checks both, so a misspelt
// section or key is still an error naming it.
void set_platform(Scenario& sc, const std::string& path, const Value& value,
                  const std::string& file, Diagnostics& local) {
  // The maps from the platform down to the one that changes, and the key taken at each; the new
  // value is then set bottom up (with_entry), sharing every node off the path.
  std::vector<std::pair<Value, std::string>> chain;
  Value node = sc.platform ? sc.platform : Value::empty_map();
  std::size_t pos = 0;
  std::string done = "platform";
  const std::string storage = "platform.storage.";
  for (int depth = 0; depth < 64; ++depth) {
    const std::size_t dot = path.find('.', pos);
    const std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    // Below platform.storage: "M" at a mount's settings, "M.SETTING" at a setting's keys.
    const bool in_storage = done.rfind(storage, 0) == 0;
    const std::string below = in_storage ? done.substr(storage.size()) : std::string();
    const auto dots = std::count(below.begin(), below.end(), '.');
    const auto mount_key = [](const std::string& k) {
      return std::count(mount_keys().begin(), mount_keys().end(), k) > 0;
    };
    const bool mount_setting = dot == std::string::npos && in_storage && dots == 0 && node.is_map() && mount_key(part);
    // platform.storage.M.SETTING.KEY: the setting (added when missing), then its key.
    const bool mount_map_setting = dot != std::string::npos && path.find('.', dot + 1) == std::string::npos &&
                                   in_storage && dots == 0 && node.is_map() && mount_key(part);
    const bool mount_map_key = dot == std::string::npos && in_storage && dots == 1 && node.is_map() &&
                               mount_key(below.substr(below.find('.') + 1));
    const bool section_setting = depth <= 1 && (depth == 1 ? done != "platform.storage" : part != "storage") &&
                                 (depth == 1 || dot != std::string::npos) && !value.is_map();
    if (section_setting && (!node.is_map() || !node[part])) {
      // Created, as an empty map for the section, the value for its key (checked when parsed).
      if (!node.is_map() && node) {
        local.error({file, 0, 0}, done + " is not a map");
        return;
      }
    } else if (!((mount_setting || mount_map_setting || mount_map_key) && !node[part])) {
      if (!node.is_map() || !node[part]) {
        std::string known;
        for (const auto& kv : node.entries()) known += (known.empty() ? "" : ", ") + kv.first.scalar();
        local.error({file, 0, 0}, "no value '" + part + "' in " + done + " (" +
                                      (known.empty() ? std::string("it has no keys")
                                                     : "keys: " + known) + ")");
        return;
      }
      if (dot == std::string::npos && node[part].is_map() && !value.is_map()) {
        local.error({file, 0, 0}, done + "." + part + " is a map; set one of its values instead");
        return;
      }
    }
    chain.emplace_back(node, part);
    if (dot == std::string::npos) {
      Value changed = value;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) changed = it->first.with_entry(it->second, changed);
      sc.platform = std::move(changed);
      return;
    }
    node = node.is_map() && node[part] ? node[part] : Value::empty_map();
    done += "." + part;
    pos = dot + 1;
  }
  local.error({file, 0, 0}, "the path is deeper than 64 levels");
}

// After `--set platform.storage.M.kind=K`: the mount's settings that K does not take and that
// the file wrote (not an override) are dropped, and a note says which: a calibration of a local
// directory (kind=local) applies to a scenario whose mount is nfs with its attribute caches.
void drop_settings_of_old_kind(Scenario& sc, const std::string& key, const Value& value, const Location& where) {
  const std::string storage = "platform.storage.";
  if (key.rfind(storage, 0) != 0 || key.size() < 5 || key.compare(key.size() - 5, 5, ".kind") != 0 || !value.is_scalar()) return;
  const std::string mount = key.substr(storage.size(), key.size() - 5 - storage.size());
  if (mount.empty() || mount.find('.') != std::string::npos) return;
  const Value m = sc.platform["storage"][mount];
  if (!m.is_map()) return;
  Value kept = m;
  std::string dropped;
  for (const auto& [k, v] : m.entries()) {
    const std::string name = k.scalar();
    if (mount_kind_takes(value.scalar(), name) || sc.overridden.count(storage + mount + "." + name)) continue;
    kept = kept.without_entry(name);
    dropped += (dropped.empty() ? "" : ", ") + name;
  }
  if (dropped.empty()) return;
  sc.platform = sc.platform.with_entry("storage", sc.platform["storage"].with_entry(mount, kept));
  sc.notes.push_back(to_string(where) + " makes mount " + mount + " " + value.scalar() + ": its " + dropped +
                     " (settings a " + value.scalar() + " mount does not take) are dropped");
}

// faults.NAME.FIELD
void set_fault(Scenario& sc, const std::string& rest, const Value& value,
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
                                           : "expected faults.NAME.FIELD (probability, fires, times, on or "
                                             "one of the kind's arguments)");
    return;
  }
  const std::string field = rest.substr(dot + 1);
  if (FaultSpec::is_level_field(field)) {
    f->set_level(field, value, {file, 0, 0}, local);
  } else if (field == "on") {
    f->on = value;  // resolved when the program is compiled
  } else if (field == "kind" || field == "name") {
    local.error({file, 0, 0}, "a fault's " + field + " cannot be overridden");
  } else {
    // The kind checks its arguments when the program is compiled.
    f->set_arg(field, value);
  }
}

}  // namespace

bool apply_override(Scenario& sc, const std::string& key, const Value& value,
                    const Location& where, Diagnostics& diags) {
  const std::size_t before = diags.count();
  // Errors about the value are reported at `where`, not at a position inside the value.
  Diagnostics local;
  const std::string file = where.file;
  if (key == "ranks") {
    if (auto v = read_whole(value, 1, kMaxRanks, "ranks", file, local)) sc.ranks = static_cast<int>(*v);
  } else if (key == "checks") {
    parse_checks(value, sc, file, local);
  } else if (key == "seeds") {
    if (auto v = read_whole(value, 1, kMaxSeeds, "seeds", file, local)) sc.seeds = static_cast<int>(*v);
  } else if (key == "limits.events") {
    if (auto v = read_whole(value, 1, std::int64_t{1} << 50, "limits.events", file, local)) {
      sc.limits.events = static_cast<std::uint64_t>(*v);
    }
  } else if (key == "limits.time") {
    if (auto t = read_time_limit(value, file, local)) sc.limits.time = *t;
  } else if (key.rfind("params.", 0) == 0) {
    const std::string name = key.substr(7);
    auto it = sc.params.find(name);
    if (it == sc.params.end()) {
      std::string known;
      for (const auto& [n, p] : sc.params) known += (known.empty() ? "" : ", ") + n;
      local.error({file, 0, 0}, "no param '" + name + "' in the scenario (params: " +
                                    (known.empty() ? "none" : known) + ")");
    } else {
      Param p = it->second;
      if (!parse_param_value(value, file, local, p)) {
        // reported
      } else if (p.text && !it->second.text) {
        // A quantity param stays one: "soon" for a duration is a typo, not a new text param.
        local.error(at(value, file), "value: expected a quantity or a distribution (param '" + name + "' is " +
                                         (it->second.expr ? "an expression" : "a " + std::string(to_string(it->second.value.unit))) +
                                         "), got '" + *p.text + "'");
      } else {
        it->second = std::move(p);
      }
    }
  } else if (key.rfind("platform.", 0) == 0 && key.size() > 9) {
    set_platform(sc, key.substr(9), value, file, local);
    if (local.ok()) drop_settings_of_old_kind(sc, key, value, where);
  } else if (key.rfind("faults.", 0) == 0) {
    set_fault(sc, key.substr(7), value, file, local);
  } else {
    local.error({file, 0, 0}, "cannot override '" + key +
                                  "' (expected ranks, seeds, checks, limits.time, "
                                  "limits.events, params.NAME, platform.PATH, faults.NAME.FIELD or sweep.KEY)");
  }
  for (const Diagnostic& d : local.all()) diags.error(where, d.message);
  if (diags.count() != before) return false;
  if (key.rfind("platform.", 0) == 0 || key.rfind("faults.", 0) == 0) {
    sc.overridden[key] = where;
    // A section the override created names the override too (a misspelt one is reported there).
    if (const auto dot = key.find('.', 9); key.rfind("platform.", 0) == 0 && dot != std::string::npos) {
      sc.overridden.emplace(key.substr(0, dot), where);
    }
  }
  return true;
}

}  // namespace racesim::scenario
