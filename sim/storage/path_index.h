// The names of one mount: which paths are files (each pointing at a value, the file system's
// inode) and which are directories, kept as a tree: each directory holds its files (name ->
// value) and the names of its subdirectories, and directories are found by their path.
//
// Why not one ordered map of full paths: at 4,096 ranks a profiler's flush leaves 330,000 files
// on the shared mount; each held its full path (about 100 bytes on the heap) in a node of an
// 18-level tree whose keys share long prefixes. Here a file costs its name in its directory, a
// lookup hashes the directory's path once and then the name, and a directory moves without
// touching its files. A global hash of full paths was measured too: 20% more memory, a slower run.
//
// Both levels are Abseil's open-addressing hash tables (absl::flat_hash_map, node_hash_map for
// the directories so that a Dir stays put): with every rank's files cold between two of its
// visits, a lookup costs a control-byte group, a slot and the key it compares, where the
// std::unordered_map and per-directory std::map before walked a bucket chain and ~7 tree levels,
// each a dependent cache miss comparing names with long shared prefixes (the profiler at 4,096
// ranks: 25% less time per run, bench/README.md).
//
// Paths are absolute, without a trailing '/'. The root (the mount point; "" for "/") exists from
// the start and cannot be removed. Abseil seeds its hash per process, so a hash table's iteration
// order differs from run to run: it never reaches a result (what is returned in order is sorted,
// for_each_value is for order-free sums), and anything that let it would show as a changing trace.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>

namespace racesim::storage {

// The directory that would hold `path`: what comes before its last '/' ("" when it has none).
inline std::string_view dir_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

template <class V>
class PathIndex {
 public:
  explicit PathIndex(std::string root) : root_(std::move(root)) { dirs_[root_]; }
  // Not copied or moved: the lookup cache points into dirs_.
  PathIndex(const PathIndex&) = delete;
  PathIndex& operator=(const PathIndex&) = delete;

  const std::string& root() const { return root_; }

  // The value of file `path`, or nullptr when it is not a file.
  const V* file(std::string_view path) const {
    const Dir* d = dir(dir_of(path));
    if (d == nullptr) return nullptr;
    auto it = d->files.find(key(base_view(path)));
    return it == d->files.end() ? nullptr : &it->second;
  }
  V* file(std::string_view path) { return const_cast<V*>(std::as_const(*this).file(path)); }
  bool is_file(std::string_view path) const { return file(path) != nullptr; }
  // Whether `path` is a directory: the root or one added.
  bool is_dir(std::string_view path) const { return dir(path) != nullptr; }
  // Whether the directory that would hold `path` exists.
  bool parent_exists(std::string_view path) const { return is_dir(dir_of(path)); }

  // Points file `path` at `value`, adding the name or replacing what it held.
  // REQUIRES: parent_exists(path) and !is_dir(path).
  void put_file(std::string_view path, V value) {
    assert(parent_exists(path) && !is_dir(path));
    parent(path).files.insert_or_assign(std::string(base_view(path)), std::move(value));
  }
  // Removes file `path`; false when it is not a file.
  bool erase_file(std::string_view path) {
    Dir* d = dir(dir_of(path));
    if (d == nullptr) return false;
    auto it = d->files.find(key(base_view(path)));
    if (it == d->files.end()) return false;
    d->files.erase(it);
    return true;
  }
  // Adds directory `path`. REQUIRES: parent_exists(path) and the name is free.
  void add_dir(std::string_view path) {
    assert(parent_exists(path) && !is_dir(path) && !is_file(path));
    dirs_.emplace(std::string(path), Dir{});
    parent(path).dirs.emplace(base_view(path));
  }
  // Removes directory `path`. REQUIRES: it is an empty directory other than the root.
  void erase_dir(std::string_view path) {
    assert(is_dir(path) && !has_children(path) && path != root_ && "an empty directory, not the root");
    last_dir_ = nullptr;
    dirs_.erase(dirs_.find(key(path)));
    auto& names = parent(path).dirs;
    names.erase(names.find(base_view(path)));
  }
  // Whether anything (a file or a directory) is in directory `path`.
  bool has_children(std::string_view path) const {
    const Dir* d = dir(path);
    return d != nullptr && (!d->files.empty() || !d->dirs.empty());
  }
  // The full paths of what directory `path` holds (files and directories, not recursive) whose
  // name `keep(name)` accepts, sorted; none when `path` is not a directory.
  template <class Keep>
  std::vector<std::string> children(std::string_view path, Keep keep) const {
    std::vector<std::string> out;
    const Dir* d = dir(path);
    if (d == nullptr) return out;
    const std::string prefix = std::string(path) + "/";
    for (const auto& [name, value] : d->files) {
      if (keep(name)) out.push_back(prefix + name);
    }
    for (const std::string& name : d->dirs) {
      if (keep(name)) out.push_back(prefix + name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // Whether children(path, keep) would return anything, without building it.
  template <class Keep>
  bool any_child(std::string_view path, Keep keep) const {
    const Dir* d = dir(path);
    if (d == nullptr) return false;
    for (const auto& [name, value] : d->files) {
      if (keep(name)) return true;
    }
    for (const std::string& name : d->dirs) {
      if (keep(name)) return true;
    }
    return false;
  }
  // Everything under directory `path` (recursively), as full paths, each list sorted.
  void subtree(std::string_view path, std::vector<std::string>& dirs, std::vector<std::string>& files) const {
    const std::size_t first_dir = dirs.size(), first_file = files.size();
    collect(std::string(path), dirs, files);
    std::sort(dirs.begin() + static_cast<std::ptrdiff_t>(first_dir), dirs.end());
    std::sort(files.begin() + static_cast<std::ptrdiff_t>(first_file), files.end());
  }
  // Moves directory `from` and everything under it to `to`: each directory is renamed, its
  // contents stay where they are.
  // REQUIRES: `from` is a directory other than the root, `to` is free, parent_exists(to), and
  // `to` is not under `from`.
  void move_dir(const std::string& from, const std::string& to) {
    assert(is_dir(from) && from != root_ && !is_dir(to) && !is_file(to) && parent_exists(to));
    assert(to.compare(0, from.size() + 1, from + "/") != 0 && "a directory is not moved under itself");
    std::vector<std::string> dirs, files;
    subtree(from, dirs, files);
    dirs.push_back(from);
    last_dir_ = nullptr;
    for (const std::string& d : dirs) {
      auto node = dirs_.extract(dirs_.find(key(d)));
      node.key() = to + d.substr(from.size());
      dirs_.insert(std::move(node));
    }
    auto& names = parent(from).dirs;
    names.erase(names.find(base_view(from)));
    parent(to).dirs.emplace(base_view(to));
  }
  // Calls f(value) for every file, in no particular order: for order-free sums only.
  template <class F>
  void for_each_value(F f) const {
    for (const auto& [path, d] : dirs_) {
      for (const auto& [name, value] : d.files) f(value);
    }
  }

 private:
  // The tables' keys are std::string, found by an absl::string_view without building one
  // (Debian's Abseil has its own string_view type). Abseil's own hash: libstdc++'s was tried, 0.2%
  // more instructions on the cache race.
  static absl::string_view key(std::string_view s) { return {s.data(), s.size()}; }
  struct Dir {
    absl::flat_hash_map<std::string, V> files;  // by name in the directory
    std::set<std::string, std::less<>> dirs;    // subdirectories' names
  };
  static std::string_view base_view(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
  }
  // Most lookups in a row are of one directory (every rank polling the cache's): the last one
  // found is compared before the path is hashed. Its key and value stay put while its node
  // lives; erase_dir and move_dir forget it.
  const Dir* dir(std::string_view path) const {
    if (last_dir_ != nullptr && *last_key_ == path) return last_dir_;
    auto it = dirs_.find(key(path));
    if (it == dirs_.end()) return nullptr;
    last_key_ = &it->first;
    last_dir_ = &it->second;
    return last_dir_;
  }
  Dir* dir(std::string_view path) { return const_cast<Dir*>(std::as_const(*this).dir(path)); }
  Dir& parent(std::string_view path) { return *dir(dir_of(path)); }
  // Bounded by the number of directories (each is visited once: the tree has no cycles).
  void collect(const std::string& path, std::vector<std::string>& dirs, std::vector<std::string>& files) const {
    const Dir* d = dir(path);
    if (d == nullptr) return;
    for (const auto& [name, value] : d->files) files.push_back(path + "/" + name);
    for (const std::string& name : d->dirs) {
      std::string sub = path + "/" + name;
      dirs.push_back(sub);
      collect(sub, dirs, files);  // not dirs.back(): the recursion may reallocate `dirs`
    }
  }

  std::string root_;
  absl::node_hash_map<std::string, Dir> dirs_;
  mutable const std::string* last_key_ = nullptr;  // the key of last_dir_ in dirs_
  mutable const Dir* last_dir_ = nullptr;
};

}  // namespace racesim::storage
