// Choice files (see choice_file.h).
#include "src/search/choice_file.h"

#include <cstddef>
#include <exception>

#include <nlohmann/json.hpp>

namespace racesim::search {

namespace {

using json = nlohmann::ordered_json;

std::string located(const std::string& path, std::size_t line, std::size_t col, const std::string& what) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + what;
}

// A JSON parse error's column within its line (nlohmann counts bytes from 1).
std::size_t column_of(const std::exception& e) {
  if (const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e)) return pe->byte;
  return 1;
}

// The value of `key` in object `j`, of the JSON type `is`, or an error naming what was expected.
template <typename Check>
const json* field(const json& j, const char* key, Check is, const char* expected, std::string& why) {
  auto it = j.find(key);
  if (it == j.end()) {
    why = std::string("expected the key \"") + key + "\" (" + expected + ")";
    return nullptr;
  }
  if (!is(*it)) {
    why = std::string("\"") + key + "\": expected " + expected + ", got " + it->dump();
    return nullptr;
  }
  return &*it;
}

bool strings(const json& j, const char* key, std::vector<std::string>& out, std::string& why) {
  const json* v = field(j, key, [](const json& x) { return x.is_array(); }, "a list of strings", why);
  if (!v) return false;
  for (const json& s : *v) {
    if (!s.is_string()) {
      why = std::string("\"") + key + "\": expected a list of strings, got " + s.dump();
      return false;
    }
    out.push_back(s.get<std::string>());
  }
  return true;
}

bool ranks(const json& j, const char* key, std::vector<int>& out, std::string& why) {
  const char* expected = "a list of rank numbers (0 to 10000000)";
  const json* v = field(j, key, [](const json& x) { return x.is_array(); }, expected, why);
  if (!v) return false;
  for (const json& r : *v) {
    if (!r.is_number_unsigned() || r.get<std::uint64_t>() > 10'000'000) {
      why = std::string("\"") + key + "\": expected " + expected + ", got " + r.dump();
      return false;
    }
    out.push_back(static_cast<int>(r.get<std::uint64_t>()));
  }
  return true;
}

bool text(const json& j, const char* key, std::string& out, std::string& why);

bool order(const json& j, bool& sticky, std::string& why) {
  std::string o;
  if (!text(j, "order", o, why)) return false;
  if (o != "fifo" && o != "sticky") {
    why = "\"order\": expected fifo or sticky, got \"" + o + "\"";
    return false;
  }
  sticky = o == "sticky";
  return true;
}

bool text(const json& j, const char* key, std::string& out, std::string& why) {
  const json* v = field(j, key, [](const json& x) { return x.is_string(); }, "a string", why);
  if (v) out = v->get<std::string>();
  return v != nullptr;
}

bool whole(const json& j, const char* key, std::uint64_t& out, std::string& why) {
  const json* v = field(j, key, [](const json& x) { return x.is_number_unsigned(); }, "a whole number >= 0", why);
  if (v) out = v->get<std::uint64_t>();
  return v != nullptr;
}

bool parse_header(const json& doc, ChoiceFile& f, std::string& why) {
  const json* h = field(doc, "racesim_choices", [](const json& x) { return x.is_object(); },
                        "an object: the header of a choice file written by racesim explore or replay --record", why);
  if (!h) return false;
  std::uint64_t format = 0;
  if (!whole(*h, "format", format, why)) return false;
  if (format != static_cast<std::uint64_t>(kChoiceFileFormat)) {
    why = "\"format\": this racesim reads choice files of format " + std::to_string(kChoiceFileFormat) + ", got " +
          std::to_string(format);
    return false;
  }
  return text(*h, "racesim", f.version, why) && text(*h, "scenario", f.scenario, why) &&
         text(*h, "content", f.content, why) && strings(*h, "overrides", f.overrides, why) &&
         text(*h, "strategy", f.strategy, why) && text(*h, "point", f.point, why) && whole(*h, "seed", f.seed, why) &&
         text(*h, "made_by", f.made_by, why) && strings(*h, "disarmed", f.disarmed, why) &&
         ranks(*h, "rank_streams", f.rank_streams, why) && order(*h, f.sticky, why) &&
         text(*h, "outcome", f.outcome, why) && text(*h, "check", f.check, why) &&
         text(*h, "diagnosis", f.diagnosis, why) && text(*h, "trace_hash", f.trace_hash, why) &&
         strings(*h, "processes", f.processes, why);
}

bool parse_choice(const json& doc, kernel::Choice& c, std::string& why) {
  if (!doc.is_object()) {
    why = "expected a choice ({\"kind\": K, \"of\": N, \"took\": I, ...}) or the trailer, got " + doc.dump();
    return false;
  }
  std::string kind;
  if (!text(doc, "kind", kind, why)) return false;
  const auto k = kernel::choice_kind_named(kind);
  if (!k) {
    why = "\"kind\": expected schedule, wake, model, fault or draw, got \"" + kind + "\"";
    return false;
  }
  c.kind = *k;
  if (!whole(doc, "of", c.options, why) || !whole(doc, "took", c.value, why)) return false;
  if (c.options < 2 || c.value >= c.options) {
    why = "expected 2 or more options (\"of\") and an option taken (\"took\") below them, got of " +
          std::to_string(c.options) + ", took " + std::to_string(c.value);
    return false;
  }
  return true;
}

}  // namespace

std::string format_choice_file(const ChoiceFile& f) {
  json h;
  h["format"] = kChoiceFileFormat;
  h["racesim"] = f.version;
  h["scenario"] = f.scenario;
  h["content"] = f.content;
  h["overrides"] = f.overrides;
  h["strategy"] = f.strategy;
  h["point"] = f.point;
  h["seed"] = f.seed;
  h["made_by"] = f.made_by;
  h["disarmed"] = f.disarmed;
  h["rank_streams"] = f.rank_streams;
  h["order"] = f.sticky ? "sticky" : "fifo";
  h["outcome"] = f.outcome;
  h["check"] = f.check;
  h["diagnosis"] = f.diagnosis;
  h["trace_hash"] = f.trace_hash;
  h["processes"] = f.processes;
  json head;
  head["racesim_choices"] = std::move(h);
  std::string out = head.dump() + "\n";
  for (const kernel::Choice& c : f.choices) {
    json line;
    line["kind"] = std::string(kernel::to_string(c.kind));
    line["of"] = c.options;
    line["took"] = c.value;
    const bool named = c.process >= 0 && static_cast<std::size_t>(c.process) < f.processes.size();
    line["process"] = named ? f.processes[static_cast<std::size_t>(c.process)] : std::string();
    line["at_ns"] = c.at;
    out += line.dump() + "\n";
  }
  json end;
  end["end"]["choices"] = f.choices.size();
  return out + end.dump() + "\n";
}

bool parse_choice_file(const std::string& text_in, const std::string& path, ChoiceFile& out, std::string& error) {
  out = ChoiceFile{};
  std::size_t pos = 0, line = 0;
  bool ended = false;
  while (pos < text_in.size()) {
    const std::size_t nl = text_in.find('\n', pos);
    const std::string l = text_in.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text_in.size() : nl + 1;
    ++line;
    if (ended) {
      error = located(path, line, 1, "expected nothing after the trailer line");
      return false;
    }
    json doc;
    try {
      doc = json::parse(l);
    } catch (const std::exception& e) {
      error = located(path, line, column_of(e), std::string("not JSON: ") + e.what());
      return false;
    }
    std::string why;
    if (line == 1) {
      if (!parse_header(doc, out, why)) {
        error = located(path, line, 1, why);
        return false;
      }
      continue;
    }
    if (doc.is_object() && doc.contains("end")) {
      std::uint64_t n = 0;
      if (!doc.at("end").is_object() || !whole(doc.at("end"), "choices", n, why)) {
        error = located(path, line, 1, "trailer: " + (why.empty() ? "expected {\"end\": {\"choices\": N}}" : why));
        return false;
      }
      if (n != out.choices.size()) {
        error = located(path, line, 1, "the trailer counts " + std::to_string(n) + " choices, the file holds " +
                                           std::to_string(out.choices.size()));
        return false;
      }
      ended = true;
      continue;
    }
    if (out.choices.size() >= kMaxChoices) {
      error = located(path, line, 1, "more than " + std::to_string(kMaxChoices) + " choices");
      return false;
    }
    kernel::Choice c;
    if (!parse_choice(doc, c, why)) {
      error = located(path, line, 1, why);
      return false;
    }
    out.choices.push_back(c);
  }
  if (line == 0) {
    error = located(path, 1, 1, "empty: expected a choice file (written by racesim explore or replay --record)");
    return false;
  }
  if (!ended) {
    error = located(path, line, 1, "expected the trailer {\"end\": {\"choices\": N}} (the file was cut short)");
    return false;
  }
  return true;
}

std::string count_by_kind(const std::vector<kernel::Choice>& tape) {
  std::uint64_t n[kernel::kChoiceKinds] = {};
  for (const kernel::Choice& c : tape) ++n[static_cast<std::size_t>(c.kind)];
  std::string out;
  for (std::size_t k = 0; k < kernel::kChoiceKinds; ++k) {
    if (!out.empty()) out += ", ";
    out += std::string(kernel::to_string(static_cast<kernel::ChoiceKind>(k))) + " " + std::to_string(n[k]);
  }
  return out;
}

}  // namespace racesim::search
