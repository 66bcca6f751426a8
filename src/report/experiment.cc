// Experiment identity (see experiment.h).
#include "src/report/experiment.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "src/report/strict_json.h"
#include "src/run/runner.h"

namespace racesim::report {

#ifndef RACESIM_VERSION
#define RACESIM_VERSION "unknown"
#endif
const char* const kRacesimVersion = RACESIM_VERSION;

std::uint64_t Experiment::expected_runs() const {
  return run::seeds_in_shard(seeds, shard_index, shard_count) * programs.size();
}

std::string format_experiment(const Experiment& e) {
  nlohmann::ordered_json j;
  j["scenario"] = e.scenario;
  j["content"] = e.content;
  j["overrides"] = e.overrides;
  j["policy"] = e.policy;
  j["seed_start"] = e.seed_start;
  j["seeds"] = e.seeds;
  j["programs"] = e.programs;
  j["axes"] = e.axes;
  j["version"] = e.version;
  nlohmann::ordered_json line;
  line["experiment"] = j;
  line["shard"] = {e.shard_index, e.shard_count};
  line["runs"] = e.expected_runs();
  return line.dump();
}

bool parse_experiment(const std::string& line, Experiment& e, std::string& error) {
  try {
    const auto doc = parse_strict(line);
    if (!doc.is_object() || !doc.contains("experiment")) {
      error = "no experiment header (the first line of a results.jsonl written by racesim run names its "
              "experiment; results of older versions or other tools cannot be merged)";
      return false;
    }
    const auto& j = doc.at("experiment");
    e.scenario = j.at("scenario").get<std::string>();
    e.content = j.at("content").get<std::string>();
    e.overrides = j.at("overrides").get<std::vector<std::string>>();
    e.policy = j.at("policy").get<std::string>();
    // Whole numbers read as such: a fraction, a negative or a huge float converted to an integer
    // type is undefined behaviour, not an error.
    e.seed_start = whole_field(j, "seed_start");
    e.seeds = whole_field(j, "seeds");
    e.programs = j.at("programs").get<std::vector<std::string>>();
    e.axes = j.value("axes", std::vector<std::string>{});
    e.version = j.at("version").get<std::string>();
    const auto& shard = doc.at("shard");
    const auto small = [](const nlohmann::json& v) { return v.is_number_unsigned() && v.get<std::uint64_t>() <= 1'000'000'000; };
    if (!shard.is_array() || shard.size() != 2 || !small(shard[0]) || !small(shard[1]) ||
        shard[1].get<std::uint64_t>() < 1 || shard[0].get<std::uint64_t>() >= shard[1].get<std::uint64_t>()) {
      error = "experiment header: shard must be [INDEX, COUNT] with 0 <= INDEX < COUNT";
      return false;
    }
    e.shard_index = static_cast<int>(shard[0].get<std::uint64_t>());
    e.shard_count = static_cast<int>(shard[1].get<std::uint64_t>());
    if (whole_field(doc, "runs") != e.expected_runs()) {
      error = "experiment header: runs does not match its seeds, shard and programs";
      return false;
    }
  } catch (const std::exception& ex) {
    error = std::string("experiment header: ") + ex.what();
    return false;
  }
  return true;
}

std::string format_trailer(std::uint64_t runs, const std::string& digest) {
  nlohmann::ordered_json j;
  j["end"]["runs"] = runs;
  j["end"]["digest"] = digest;
  return j.dump();
}

namespace {

std::string list_text(const std::vector<std::string>& v) {
  std::string out = "[";
  for (const auto& s : v) out += (out.size() > 1 ? ", " : "") + s;
  return out + "]";
}

}  // namespace

bool same_experiment(const Experiment& a, const Experiment& b, std::string& why) {
  auto differ = [&](const char* field, const std::string& x, const std::string& y) {
    if (x == y) return false;
    why = std::string(field) + " differs: '" + x + "' and '" + y + "'";
    return true;
  };
  return !(differ("scenario", a.scenario, b.scenario) ||
           differ("scenario content (the file was edited between the runs)", a.content, b.content) ||
           differ("--set overrides", list_text(a.overrides), list_text(b.overrides)) ||
           differ("--policy", a.policy, b.policy) ||
           differ("--seed-start", std::to_string(a.seed_start), std::to_string(b.seed_start)) ||
           differ("--seeds", std::to_string(a.seeds), std::to_string(b.seeds)) ||
           differ("programs (--strategy or --point)", list_text(a.programs), list_text(b.programs)) ||
           differ("racesim version", a.version, b.version) ||
           differ("shard count", std::to_string(a.shard_count), std::to_string(b.shard_count)));
}

bool join_shards(const std::vector<Experiment>& parts, const std::vector<std::string>& names,
                 Experiment& whole, std::string& error) {
  if (parts.empty()) {
    error = "nothing to merge";
    return false;
  }
  std::vector<int> seen(static_cast<std::size_t>(parts[0].shard_count), -1);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string why;
    if (!same_experiment(parts[0], parts[i], why)) {
      error = names[i] + " is not a shard of the same experiment as " + names[0] + ": " + why;
      return false;
    }
    int& first = seen[static_cast<std::size_t>(parts[i].shard_index)];
    if (first >= 0) {
      error = names[i] + " and " + names[static_cast<std::size_t>(first)] + " are both shard " +
              std::to_string(parts[i].shard_index) + "/" + std::to_string(parts[i].shard_count);
      return false;
    }
    first = static_cast<int>(i);
  }
  std::string missing;
  for (std::size_t s = 0; s < seen.size(); ++s) {
    if (seen[s] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(s) + "/" + std::to_string(seen.size());
  }
  if (!missing.empty()) {
    error = "shard " + missing + " missing: the merge would leave out seeds";
    return false;
  }
  whole = parts[0];
  whole.shard_index = 0;
  whole.shard_count = 1;
  return true;
}

bool group_experiments(const std::vector<Experiment>& parts, const std::vector<std::string>& names,
                       std::vector<JoinedExperiment>& out, std::string& error) {
  out.clear();
  if (parts.empty()) {
    error = "nothing to merge";
    return false;
  }
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string why;
    if (parts[i].scenario != parts[0].scenario || parts[i].content != parts[0].content) {
      same_experiment(parts[0], parts[i], why);
      error = names[i] + " and " + names[0] + " are results of different scenario files: " + why;
      return false;
    }
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& group) { return same_experiment(parts[group[0]], parts[i], why); });
    if (g == groups.end()) {
      groups.push_back({i});
    } else {
      g->push_back(i);
    }
  }
  for (const auto& group : groups) {
    std::vector<Experiment> shards;
    std::vector<std::string> shard_names;
    for (std::size_t i : group) {
      shards.push_back(parts[i]);
      shard_names.push_back(names[i]);
    }
    JoinedExperiment joined;
    joined.parts = group;
    if (!join_shards(shards, shard_names, joined.whole, error)) {
      // Say what sets it apart from the other experiments given: a shard run differently?
      for (const auto& other : groups) {
        std::string why;
        if (other != group && !same_experiment(parts[other[0]], parts[group[0]], why)) {
          error += " (" + names[other[0]] + " is of another experiment: " + why + ")";
          break;
        }
      }
      return false;
    }
    out.push_back(std::move(joined));
  }
  return true;
}

bool is_live(const Experiment& e) { return e.policy.rfind("live:", 0) == 0; }

std::string live_field(const Experiment& e, const std::string& key) {
  if (!is_live(e)) return "";
  std::size_t pos = 5;
  // Bounded by the policy's length: each pass moves past one ':'.
  while (pos < e.policy.size()) {
    const std::size_t end = std::min(e.policy.find(':', pos), e.policy.size());
    const std::string field = e.policy.substr(pos, end - pos);
    if (field.rfind(key + "=", 0) == 0) return field.substr(key.size() + 1);
    pos = end + 1;
  }
  return "";
}

}  // namespace racesim::report
