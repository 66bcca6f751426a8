// A merged set of byte ranges (see byte_ranges.h).
#include "sim/storage/byte_ranges.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace racesim::storage {

void ByteRanges::add(std::uint64_t begin, std::uint64_t end) {
  assert(begin <= end);
  if (begin == end) return;
  // The first range that ends at or after `begin` may touch it.
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
  while (it != ranges_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  const bool inserted = ranges_.emplace(begin, end).second;
  assert(inserted && "the ranges touching [begin, end) were merged into it");
  (void)inserted;
}

void ByteRanges::remove(std::uint64_t begin, std::uint64_t end) {
  assert(begin <= end);
  if (begin == end) return;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second > begin) --it;
  while (it != ranges_.end() && it->first < end) {
    const std::uint64_t b = it->first, e = it->second;
    it = ranges_.erase(it);
    assert(b < e && "ranges are never empty");
    if (b < begin) ranges_.emplace(b, begin);
    if (e > end) {
      ranges_.emplace(end, e);
      break;
    }
  }
}

std::uint64_t ByteRanges::bytes() const {
  std::uint64_t n = 0;
  for (const auto& [b, e] : ranges_) n += e - b;
  return n;
}

}  // namespace racesim::storage
