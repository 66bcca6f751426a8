#include "src/scenario/file/value_reader.h"

#include <cctype>
#include <vector>

#include "sim/kernel/time.h"
#include "src/scenario/file/quantity.h"

namespace racesim::scenario {

Location at(const Value& node, const std::string& file) { return {file, node.line(), node.column()}; }

const char* kind_of(const Value& node) {
  switch (node.kind()) {
    case Value::Kind::kMap:
      return "a map";
    case Value::Kind::kList:
      return "a list";
    case Value::Kind::kScalar:
      return "a scalar";
    case Value::Kind::kNull:
    case Value::Kind::kNone:
      break;
  }
  return "nothing";
}

void check_keys(const Value& node, std::span<const std::string_view> allowed,
                std::string_view what, const std::string& file, Diagnostics& diags) {
  if (!node.is_map()) return;
  for (const auto& kv : node.entries()) {
    const std::string key = kv.first.scalar();
    bool ok = false;
    for (std::string_view a : allowed) ok = ok || a == key;
    if (ok) continue;
    std::string list;
    for (std::string_view a : allowed) {
      if (!list.empty()) list += ", ";
      list += a;
    }
    diags.error(at(kv.first, file),
                "unknown key '" + key + "' in " + std::string(what) + " (expected one of: " + list +
                    ")");
  }
}

std::optional<std::int64_t> read_whole(const Value& node, std::int64_t lo, std::int64_t hi,
                                  std::string_view what, const std::string& file,
                                  Diagnostics& diags) {
  if (!node.is_scalar()) {
    diags.error(at(node, file), std::string(what) + ": expected a whole number, got " + kind_of(node));
    return std::nullopt;
  }
  auto v = parse_quantity(node.scalar(), Unit::kCount);
  if (!v || *v < static_cast<double>(lo) || *v > static_cast<double>(hi)) {
    diags.error(at(node, file), std::string(what) + ": expected a whole number from " +
                                    std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
                                    node.scalar() + "'");
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*v);
}

std::optional<std::string> read_text(const Value& node, std::string_view what,
                                const std::string& file, Diagnostics& diags) {
  if (!node.is_scalar()) {
    diags.error(at(node, file), std::string(what) + ": expected text, got " + kind_of(node));
    return std::nullopt;
  }
  return node.scalar();
}

std::optional<bool> read_bool(const Value& node, std::string_view what, const std::string& file,
                            Diagnostics& diags) {
  if (node.is_scalar()) {
    const std::string& s = node.scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  diags.error(at(node, file), std::string(what) + ": expected true or false");
  return std::nullopt;
}

// An optional numeric bound `key` of map `node` (metric checks and expectations).
std::optional<double> read_bound(const Value& node, const char* key, const std::string& file,
                            Diagnostics& diags) {
  if (!node[key]) return std::nullopt;
  auto v = node[key].is_scalar() ? parse_quantity(node[key].scalar(), Unit::kNumber)
                                : Result<double>::error("");
  if (!v) {
    diags.error(at(node[key], file), std::string(key) + ": expected a number (metrics are plain "
                                                        "numbers; times in seconds)");
    return std::nullopt;
  }
  return *v;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::optional<std::int64_t> read_time_limit(const Value& node, const std::string& file,
                                            Diagnostics& diags) {
  if (!node.is_scalar()) {
    diags.error(at(node, file), std::string("limits.time: expected a duration like '1h', got ") + kind_of(node));
    return std::nullopt;
  }
  auto t = parse_quantity(node.scalar(), Unit::kDuration);
  if (!t) {
    diags.error(at(node, file), "limits.time: " + t.message());
    return std::nullopt;
  }
  if (*t <= 0) {
    diags.error(at(node, file), std::string("limits.time: expected a duration from 1ns to ") +
                                    max_text(Unit::kDuration) + ", got '" + node.scalar() + "'");
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*t);
}

}  // namespace racesim::scenario
