// A set of byte ranges [begin, end) of one file, kept merged: which bytes of a file a writer other
// than its current one put there (FileSystem: an older writer still writing through its own
// descriptor after a truncation). Costs O(log n) per change in the ranges it holds; a writer's
// sequential writes stay one range.
#pragma once

#include <cstdint>
#include <map>

namespace racesim::storage {

class ByteRanges {
 public:
  // Adds [begin, end) (merged with what it touches). REQUIRES: begin <= end.
  void add(std::uint64_t begin, std::uint64_t end);
  // Removes [begin, end) (splitting a range it falls inside). REQUIRES: begin <= end.
  void remove(std::uint64_t begin, std::uint64_t end);
  void clear() { ranges_.clear(); }
  bool empty() const { return ranges_.empty(); }
  // The bytes the set holds.
  std::uint64_t bytes() const;

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;  // begin -> end, disjoint, not adjacent
};

}  // namespace racesim::storage
