// Located value trees (see value.h).
#include "src/scenario/file/value.h"

#include <cassert>

#include <yaml-cpp/yaml.h>

namespace racesim::scenario {

namespace {

const std::string kEmpty;
const std::vector<Value> kNoItems;
const std::vector<Value::Entry> kNoEntries;

// As yaml-cpp's emitter writes a node (its EmitFromEvents): a tag unless it is the plain or
// non-specific one.
void emit_tag(YAML::Emitter& out, const std::string& tag) {
  if (!tag.empty() && tag != "?" && tag != "!") out << YAML::VerbatimTag(tag);
}

void emit(YAML::Emitter& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kScalar:
      emit_tag(out, v.tag());
      out << v.scalar();
      return;
    case Value::Kind::kList:
      emit_tag(out, v.tag());
      out << YAML::BeginSeq;
      for (const Value& item : v.items()) emit(out, item);
      out << YAML::EndSeq;
      return;
    case Value::Kind::kMap:
      emit_tag(out, v.tag());
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.entries()) {
        out << YAML::Key;
        emit(out, key);
        out << YAML::Value;
        emit(out, value);
      }
      out << YAML::EndMap;
      return;
    case Value::Kind::kNull:
    case Value::Kind::kNone:
      out << YAML::Null;
      return;
  }
}

}  // namespace

Value Value::from_yaml(const YAML::Node& node) {
  assert(count_nodes(node, kMaxYamlNodes) <= kMaxYamlNodes && "from_yaml REQUIRES a bounded tree");
  return build(node);
}

Value Value::build(const YAML::Node& node) {
  if (!node.IsDefined()) return Value();
  auto data = std::make_shared<Data>();
  const YAML::Mark mark = node.Mark();
  if (!mark.is_null()) {
    data->line = mark.line + 1;
    data->column = mark.column + 1;
  }
  data->tag = node.Tag();
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      data->kind = Kind::kScalar;
      data->text = node.Scalar();
      break;
    case YAML::NodeType::Sequence:
      data->kind = Kind::kList;
      data->items.reserve(node.size());
      for (const auto& item : node) data->items.push_back(build(item));
      break;
    case YAML::NodeType::Map:
      data->kind = Kind::kMap;
      data->entries.reserve(node.size());
      for (const auto& kv : node) data->entries.emplace_back(build(kv.first), build(kv.second));
      break;
    default:
      data->kind = Kind::kNull;
      break;
  }
  return Value(std::move(data));
}

Value Value::scalar_of(std::string text) {
  auto data = std::make_shared<Data>();
  data->kind = Kind::kScalar;
  data->text = std::move(text);
  return Value(std::move(data));
}

const std::string& Value::scalar() const { return is_scalar() ? data_->text : kEmpty; }
const std::string& Value::tag() const { return data_ ? data_->tag : kEmpty; }

std::size_t Value::size() const {
  if (is_list()) return data_->items.size();
  if (is_map()) return data_->entries.size();
  return 0;
}

const std::vector<Value>& Value::items() const { return is_list() ? data_->items : kNoItems; }
const std::vector<Value::Entry>& Value::entries() const { return is_map() ? data_->entries : kNoEntries; }

Value Value::operator[](std::string_view key) const {
  for (const auto& [k, v] : entries()) {
    if (k.is_scalar() && k.scalar() == key) return v;
  }
  return Value();
}

Value Value::operator[](std::size_t i) const {
  const auto& list = items();
  return i < list.size() ? list[i] : Value();
}

Value Value::empty_map() { return from_yaml(YAML::Node(YAML::NodeType::Map)); }

Value Value::with_entry(std::string_view key, Value value) const {
  assert(is_map());
  auto data = std::make_shared<Data>(*data_);
  for (auto& [k, v] : data->entries) {
    if (k.is_scalar() && k.scalar() == key) {
      v = std::move(value);
      return Value(std::move(data));
    }
  }
  data->entries.emplace_back(scalar_of(std::string(key)), std::move(value));
  return Value(std::move(data));
}

Value Value::without_entry(std::string_view key) const {
  assert(is_map());
  auto data = std::make_shared<Data>(*data_);
  std::erase_if(data->entries, [&](const Entry& e) { return e.first.is_scalar() && e.first.scalar() == key; });
  return Value(std::move(data));
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

std::optional<Value> parse_value(const std::string& text, std::string& error) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    error = "the value is not valid YAML: " + e.msg;
    return std::nullopt;
  }
  if (count_nodes(node, kMaxYamlNodes) > kMaxYamlNodes) {
    error = "the value has more than " + std::to_string(kMaxYamlNodes) +
            " nodes (aliases counted as often as they are used)";
    return std::nullopt;
  }
  return Value::from_yaml(node);
}

std::string flow_text(const Value& value) {
  if (value.is_scalar()) return value.scalar();
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  emit(out, value);
  return out.c_str();
}

}  // namespace racesim::scenario
