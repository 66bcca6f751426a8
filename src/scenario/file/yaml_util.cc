#include "src/scenario/file/yaml_util.h"

#include <cctype>
#include <vector>

#include "sim/kernel/time.h"
#include "src/scenario/file/quantity.h"

namespace racesim::scenario {
struct MarkSetter;
}  // namespace racesim::scenario

// yaml-cpp (0.7) has no public way to give a node a position; Node befriends every as_if<T, S>,
// so this specialisation, for a type of ours alone, is the one place that reaches the node's
// detail to set it.
template <>
struct YAML::as_if<racesim::scenario::MarkSetter, void> {
  static void set(YAML::Node& node, const YAML::Mark& mark) {
    node.EnsureNodeExists();
    node.m_pNode->set_mark(mark);
  }
};

namespace racesim::scenario {

namespace {

void keep_look(const YAML::Node& from, YAML::Node& to) {
  if (!from.Tag().empty()) to.SetTag(from.Tag());
  to.SetStyle(from.Style());
  YAML::as_if<MarkSetter, void>::set(to, from.Mark());
}

}  // namespace

YAML::Node clone(const YAML::Node& node) {
  if (!node.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  YAML::Node out;
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      out = YAML::Node(node.Scalar());
      break;
    case YAML::NodeType::Sequence:
      out = YAML::Node(YAML::NodeType::Sequence);
      for (const auto& item : node) out.push_back(clone(item));
      break;
    case YAML::NodeType::Map:
      out = YAML::Node(YAML::NodeType::Map);
      for (const auto& kv : node) out.force_insert(clone(kv.first), clone(kv.second));
      break;
    default:
      out = YAML::Node(YAML::NodeType::Null);
      break;
  }
  keep_look(node, out);
  return out;
}

std::size_t count_nodes(const YAML::Node& node, std::size_t limit) {
  std::size_t n = 0;
  std::vector<YAML::Node> pending{node};  // nodes seen but not yet counted
  while (!pending.empty() && n <= limit) {
    const YAML::Node cur = pending.back();
    pending.pop_back();
    ++n;
    if (cur.IsSequence()) {
      for (const auto& item : cur) pending.push_back(item);
    } else if (cur.IsMap()) {
      for (const auto& kv : cur) {
        pending.push_back(kv.first);
        pending.push_back(kv.second);
      }
    }
  }
  return n;
}

Location at(const YAML::Node& node, const std::string& file) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

const char* kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

void check_keys(const YAML::Node& node, std::span<const std::string_view> allowed,
                std::string_view what, const std::string& file, Diagnostics& diags) {
  if (!node.IsMap()) return;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
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

std::optional<std::int64_t> read_whole(const YAML::Node& node, std::int64_t lo, std::int64_t hi,
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

std::optional<std::string> read_text(const YAML::Node& node, std::string_view what,
                                const std::string& file, Diagnostics& diags) {
  if (!node.IsScalar()) {
    diags.error(at(node, file), std::string(what) + ": expected text, got " + kind_of(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<bool> read_bool(const YAML::Node& node, std::string_view what, const std::string& file,
                            Diagnostics& diags) {
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  diags.error(at(node, file), std::string(what) + ": expected true or false");
  return std::nullopt;
}

// An optional numeric bound `key` of map `node` (metric checks and expectations).
std::optional<double> read_bound(const YAML::Node& node, const char* key, const std::string& file,
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

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
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

std::optional<std::int64_t> read_time_limit(const YAML::Node& node, const std::string& file,
                                            Diagnostics& diags) {
  auto t = node.IsScalar() ? kernel::parse_duration(node.Scalar())
                           : kernel::Result<kernel::Time>::error("expected a duration");
  if (!t || *t <= 0) {
    diags.error(at(node, file), "limits.time: expected a positive duration like '1h'");
    return std::nullopt;
  }
  return *t;
}

}  // namespace racesim::scenario
