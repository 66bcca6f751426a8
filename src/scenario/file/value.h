// A scenario's values as the loader reads them once from YAML: an immutable tree of located
// nodes (a scalar's text, a list, a map in the file's order, null), each with its line and column.
//
// Everything past the loader (overrides, sweep points, the compiler, the platform and the
// primitives' arguments) reads Values, never yaml-cpp nodes: a yaml-cpp node is a handle onto
// the document, so assigning through one rewrites the document (and every alias of the node),
// and copying a scenario safely meant cloning its nodes at every sweep point. A Value is shared,
// not copied: copying one is a reference count, a sweep point shares every node it does not
// change, and a change (an override) builds new nodes along one path (with_entry).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace YAML {
class Node;  // yaml-cpp's: only the loader and value.cc read YAML
}

namespace racesim::scenario {

class Value {
 public:
  enum class Kind { kNone, kNull, kScalar, kList, kMap };
  using Entry = std::pair<Value, Value>;

  // Nothing: what a map gives for a key it lacks (yaml-cpp's undefined node).
  Value() = default;

  // The tree of `node` (aliases copied as often as they occur).
  // REQUIRES: `node`'s tree has at most kMaxYamlNodes nodes, aliases counted as often as they occur
  // (count_nodes), as the loader and parse_value check, so that a billion-laughs file is refused
  // before it is copied.
  static Value from_yaml(const YAML::Node& node);
  // A scalar made by the program (an override's key), at no position.
  static Value scalar_of(std::string text);
  // A map with no entries (made by the program: line 0).
  static Value empty_map();

  Kind kind() const { return data_ ? data_->kind : Kind::kNone; }
  bool is_defined() const { return data_ != nullptr; }
  explicit operator bool() const { return is_defined(); }
  bool is_null() const { return kind() == Kind::kNull; }
  bool is_scalar() const { return kind() == Kind::kScalar; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_map() const { return kind() == Kind::kMap; }

  // A scalar's text as written (quotes removed); empty for any other kind.
  const std::string& scalar() const;
  // The number of items of a list or entries of a map; 0 for any other kind.
  std::size_t size() const;
  // A list's items; empty for any other kind.
  const std::vector<Value>& items() const;
  // A map's entries in the file's order; empty for any other kind.
  const std::vector<Entry>& entries() const;
  // The value of the first entry whose key is the scalar `key`; nothing when there is none or
  // this is not a map.
  Value operator[](std::string_view key) const;
  // A list's item `i`; nothing when out of range or this is not a list.
  Value operator[](std::size_t i) const;
  Value operator[](int i) const { return i < 0 ? Value() : (*this)[static_cast<std::size_t>(i)]; }
  Value operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  Value operator[](const std::string& key) const { return (*this)[std::string_view(key)]; }

  // This map with entry `key` set to `value`: the first entry with that key gets the new value
  // (keeping its key's position), or the entry is appended. Every other entry is shared.
  // REQUIRES: is_map().
  Value with_entry(std::string_view key, Value value) const;
  // This map without its entries whose key is the scalar `key` (the rest shared, in order, and
  // the map keeps its position). REQUIRES: is_map().
  Value without_entry(std::string_view key) const;

  // The position in the text it was read from, 1-based; 0 for a value made by the program.
  int line() const { return data_ ? data_->line : 0; }
  int column() const { return data_ ? data_->column : 0; }
  // The tag as yaml-cpp reports it ("?" plain, "!" quoted, "!!str" explicit; empty when made).
  const std::string& tag() const;

 private:
  struct Data {
    Kind kind = Kind::kNull;
    int line = 0;
    int column = 0;
    std::string tag;
    std::string text;
    std::vector<Value> items;
    std::vector<Entry> entries;
  };
  explicit Value(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  static Value build(const YAML::Node& node);  // from_yaml without the check
  std::shared_ptr<const Data> data_;
};

// The most nodes one value tree may have, aliases counted as often as they occur.
inline constexpr std::size_t kMaxYamlNodes = 200'000;
// The nodes of `node`'s tree, aliases counted as often as they occur; counting stops past
// `limit` (so a billion-laughs text is refused in bounded time).
std::size_t count_nodes(const YAML::Node& node, std::size_t limit);

// A Value from YAML text (an override's value): nullopt with `error` set when the text is not
// YAML or has more than kMaxYamlNodes nodes.
std::optional<Value> parse_value(const std::string& text, std::string& error);

// A value as one line of text: a scalar as written, the rest in YAML's flow style as yaml-cpp's
// emitter writes it ("{uniform: {min: 1s, max: 2s}}", "[1, 2]"), so sweep labels and reports
// read as they always have.
std::string flow_text(const Value& value);

}  // namespace racesim::scenario
