// PathIndex, a mount's names: its listings and subtrees in order, directory moves, and a long
// random sequence of operations checked against a plain ordered map of full paths (the structure
// it replaced, which answered a prefix question by scanning the sorted keys).
#include "sim/storage/path_index.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/kernel/random.h"

namespace racesim::storage {
namespace {

using Strings = std::vector<std::string>;

TEST(PathIndexTest, TheRootExistsAndNamesNeedTheirDirectory) {
  PathIndex<int> ix("/c");
  EXPECT_TRUE(ix.is_dir("/c"));
  EXPECT_FALSE(ix.has_children("/c"));
  EXPECT_TRUE(ix.parent_exists("/c/f"));
  EXPECT_FALSE(ix.parent_exists("/c/a/f"));
  ix.put_file("/c/f", 1);
  ix.add_dir("/c/a");
  EXPECT_TRUE(ix.parent_exists("/c/a/f"));
  EXPECT_TRUE(ix.has_children("/c"));
  ASSERT_NE(ix.file("/c/f"), nullptr);
  EXPECT_EQ(*ix.file("/c/f"), 1);
  ix.put_file("/c/f", 2);  // replaces: still one name
  EXPECT_EQ(*ix.file("/c/f"), 2);
  EXPECT_EQ(ix.children("/c", [](const std::string&) { return true; }), (Strings{"/c/a", "/c/f"}));
  EXPECT_FALSE(ix.is_file("/c/a"));
  EXPECT_FALSE(ix.is_dir("/c/f"));
  EXPECT_TRUE(ix.erase_file("/c/f"));
  EXPECT_FALSE(ix.erase_file("/c/f"));
  ix.erase_dir("/c/a");
  EXPECT_FALSE(ix.has_children("/c"));
  PathIndex<int> slash("");  // a mount on "/"
  EXPECT_TRUE(slash.parent_exists("/f"));
  slash.put_file("/f", 3);
  EXPECT_EQ(slash.children("", [](const std::string&) { return true; }), (Strings{"/f"}));
}

TEST(PathIndexTest, ListingsAndSubtreesAreSortedAsFullPaths) {
  PathIndex<int> ix("/c");
  // '-' sorts before '/': "a-b" comes between "a" and "a/x", as in the sorted map it replaced.
  for (const char* d : {"/c/a", "/c/a-b", "/c/a/x", "/c/a/x/y", "/c/b"}) ix.add_dir(d);
  for (const char* f : {"/c/z", "/c/a/2", "/c/a/10", "/c/a/x/y/f", "/c/a-b/g"}) ix.put_file(f, 0);
  EXPECT_EQ(ix.children("/c", [](const std::string&) { return true; }),
            (Strings{"/c/a", "/c/a-b", "/c/b", "/c/z"}));
  EXPECT_EQ(ix.children("/c/a", [](const std::string& n) { return n != "x"; }), (Strings{"/c/a/10", "/c/a/2"}));
  EXPECT_TRUE(ix.children("/c/nope", [](const std::string&) { return true; }).empty());
  Strings dirs, files;
  ix.subtree("/c", dirs, files);
  EXPECT_EQ(dirs, (Strings{"/c/a", "/c/a-b", "/c/a/x", "/c/a/x/y", "/c/b"}));
  EXPECT_EQ(files, (Strings{"/c/a-b/g", "/c/a/10", "/c/a/2", "/c/a/x/y/f", "/c/z"}));
}

TEST(PathIndexTest, MovingADirectoryMovesEverythingUnderIt) {
  PathIndex<int> ix("/c");
  ix.add_dir("/c/a");
  ix.add_dir("/c/a/b");
  ix.put_file("/c/a/f", 1);
  ix.put_file("/c/a/b/g", 2);
  ix.add_dir("/c/a2");  // a sibling whose name starts with the moved one's: it stays
  ix.put_file("/c/a2/h", 3);
  ix.add_dir("/c/d");
  ix.move_dir("/c/a", "/c/d/n");
  EXPECT_FALSE(ix.is_dir("/c/a"));
  EXPECT_FALSE(ix.is_dir("/c/a/b"));
  EXPECT_EQ(ix.file("/c/a/f"), nullptr);
  ASSERT_NE(ix.file("/c/d/n/b/g"), nullptr);
  EXPECT_EQ(*ix.file("/c/d/n/b/g"), 2);
  EXPECT_EQ(*ix.file("/c/d/n/f"), 1);
  EXPECT_EQ(*ix.file("/c/a2/h"), 3);
  EXPECT_EQ(ix.children("/c", [](const std::string&) { return true; }), (Strings{"/c/a2", "/c/d"}));
  Strings dirs, files;
  ix.subtree("/c/d", dirs, files);
  EXPECT_EQ(dirs, (Strings{"/c/d/n", "/c/d/n/b"}));
  EXPECT_EQ(files, (Strings{"/c/d/n/b/g", "/c/d/n/f"}));
}

// The reference: the sorted map and set of full paths the file system used before, with its
// prefix scans.
struct Reference {
  std::map<std::string, int> files;
  std::set<std::string> dirs{"/r"};
  bool parent_exists(const std::string& p) const { return dirs.count(std::string(dir_of(p))) > 0; }
  Strings children(const std::string& dir) const {
    Strings out;
    const std::string prefix = dir + "/";
    for (auto it = files.lower_bound(prefix); it != files.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      if (it->first.find('/', prefix.size()) == std::string::npos) out.push_back(it->first);
    }
    for (auto it = dirs.lower_bound(prefix); it != dirs.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
      if (it->find('/', prefix.size()) == std::string::npos) out.push_back(*it);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  void subtree(const std::string& dir, Strings& d, Strings& f) const {
    const std::string prefix = dir + "/";
    for (auto it = dirs.lower_bound(prefix); it != dirs.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) d.push_back(*it);
    for (auto it = files.lower_bound(prefix); it != files.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) f.push_back(it->first);
  }
};

TEST(PathIndexTest, AgreesWithASortedMapOverRandomOperations) {
  kernel::RandomStream rng(20261123);
  PathIndex<int> ix("/r");
  Reference ref;
  int moves = 0, rmdirs = 0;
  const Strings names = {"a", "b", "a-b", "a.b", "ab", "x"};
  auto random_path = [&] {
    std::string p = "/r";
    const auto depth = 1 + rng.uniform_u64(3);
    for (std::uint64_t i = 0; i < depth; ++i) p += "/" + names[rng.uniform_u64(names.size())];
    return p;
  };
  for (int op = 0; op < 20000; ++op) {
    const std::string p = random_path();
    const bool free = !ref.files.count(p) && !ref.dirs.count(p);
    switch (rng.uniform_u64(5)) {
      case 0:  // create or overwrite a file
        if (ref.parent_exists(p) && !ref.dirs.count(p)) {
          ref.files[p] = op;
          ix.put_file(p, op);
        }
        break;
      case 1:  // mkdir
        if (ref.parent_exists(p) && free) {
          ref.dirs.insert(p);
          ix.add_dir(p);
        }
        break;
      case 2:  // unlink
        EXPECT_EQ(ix.erase_file(p), ref.files.erase(p) > 0) << p;
        break;
      case 3:  // rmdir of an empty directory
        if (ref.dirs.count(p) && ref.children(p).empty()) {
          ref.dirs.erase(p);
          ix.erase_dir(p);
          ++rmdirs;
        }
        break;
      case 4: {  // move a directory to a free name outside it
        const std::string to = random_path();
        if (ref.dirs.count(p) && ref.parent_exists(to) && !ref.files.count(to) && !ref.dirs.count(to) &&
            to.compare(0, p.size() + 1, p + "/") != 0) {
          Strings d, f;
          ref.subtree(p, d, f);
          std::map<std::string, int> moved;
          for (const auto& x : f) {
            moved[to + x.substr(p.size())] = ref.files.at(x);
            ref.files.erase(x);
          }
          for (const auto& x : d) ref.dirs.erase(x);
          ref.dirs.erase(p);
          ref.dirs.insert(to);
          for (const auto& x : d) ref.dirs.insert(to + x.substr(p.size()));
          ref.files.insert(moved.begin(), moved.end());
          ix.move_dir(p, to);
          ++moves;
        }
        break;
      }
    }
    // Every answer agrees, for this path and its directory.
    const std::string dir(dir_of(p));
    ASSERT_EQ(ix.is_file(p), ref.files.count(p) > 0) << "op " << op << " " << p;
    ASSERT_EQ(ix.is_dir(p), ref.dirs.count(p) > 0) << "op " << op << " " << p;
    if (ix.is_file(p)) {
      ASSERT_EQ(*ix.file(p), ref.files.at(p));
    }
    ASSERT_EQ(ix.children(dir, [](const std::string&) { return true; }), ref.children(dir)) << "op " << op;
    ASSERT_EQ(ix.has_children(dir), !ref.children(dir).empty() && ref.dirs.count(dir));
    const auto named_a = [](const std::string& name) { return name.front() == 'a'; };
    ASSERT_EQ(ix.any_child(dir, named_a), !ix.children(dir, named_a).empty()) << "op " << op;
  }
  Strings d1, f1, d2, f2;
  ix.subtree("/r", d1, f1);
  ref.subtree("/r", d2, f2);
  EXPECT_EQ(d1, d2);
  EXPECT_EQ(f1, f2);
  EXPECT_GT(f1.size(), 10u) << "the sequence built a tree worth comparing";
  EXPECT_GT(moves, 50);
  EXPECT_GT(rmdirs, 50);
  std::multiset<int> values, expected;
  ix.for_each_value([&](int value) { values.insert(value); });
  for (const auto& [path, value] : ref.files) expected.insert(value);
  EXPECT_EQ(values, expected);
}

}  // namespace
}  // namespace racesim::storage
