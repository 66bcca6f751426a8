// The page cache's dirty-byte accounting and its flusher (see page_cache.h).
#include "sim/storage/page_cache.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace racesim::storage {

PageCache::PageCache(const PageCacheConfig& config) : config_(config) {
  assert(config.dirty_limit > 0 && config.dirty_background <= config.dirty_limit && config.disk_bandwidth > 0);
}

void PageCache::advance(kernel::Time now_ns) {
  assert(now_ns >= last_advance_ns_ && "the flusher's clock never goes back");
  last_advance_ns_ = now_ns;
  // Bounded: each pass removes one chunk or stops.
  while (!chunks_.empty()) {
    const Chunk c = chunks_.front();
    auto f = files_.find(c.ino);
    if (f == files_.end() || c.seq <= f->second.synced_seq) {  // taken by fsync or dropped
      chunks_.pop_front();
      continue;
    }
    const kernel::Time due = std::min(kernel::add_time(c.at, config_.dirty_expire), background_since_ns_);
    const kernel::Time start = std::max(flusher_free_ns_, due);
    if (start > now_ns) return;
    const kernel::Time done = kernel::add_time(
        start, kernel::transfer_time(static_cast<double>(c.bytes), config_.disk_bandwidth));
    if (done > now_ns) return;  // still being written: dirty until it lands
    chunks_.pop_front();
    flusher_free_ns_ = done;
    written_back_ += c.bytes;
    if (config_.by_file) [[unlikely]] flushed_by_file_[c.ino] += c.bytes;
    // A queued chunk's bytes are counted dirty, in all and for its file, until it lands or is taken.
    assert(dirty_ >= c.bytes && f->second.dirty >= c.bytes);
    dirty_ -= c.bytes;
    if ((f->second.dirty -= c.bytes) == 0) files_.erase(f);
    // The background writeback stops once the dirty bytes are back under its threshold.
    if (dirty_ <= config_.dirty_background) background_since_ns_ = kernel::kTimeMax;
  }
}

void PageCache::dirtied(std::uint64_t ino, std::uint64_t bytes, kernel::Time now_ns) {
  if (bytes == 0) return;
  auto [f, fresh] = files_.try_emplace(ino);
  // A file with no dirty bytes: every chunk of it still queued was taken or dropped before.
  if (fresh) f->second.synced_seq = seq_;
  f->second.dirty += bytes;
  chunks_.push_back({ino, bytes, now_ns, ++seq_});
  dirty_ += bytes;
  assert(dirty_ >= f->second.dirty);
  if (dirty_ > config_.dirty_background && background_since_ns_ == kernel::kTimeMax) background_since_ns_ = now_ns;
}

std::uint64_t PageCache::take(std::uint64_t ino) {
  auto f = files_.find(ino);
  if (f == files_.end()) return 0;
  const std::uint64_t bytes = f->second.dirty;
  assert(dirty_ >= bytes && "a file's dirty bytes are part of the cache's");
  dirty_ -= bytes;
  files_.erase(f);  // its queued chunks find no file and are skipped
  if (dirty_ <= config_.dirty_background) background_since_ns_ = kernel::kTimeMax;
  return bytes;
}

std::uint64_t PageCache::written_back_bytes(std::uint64_t ino) const {
  assert(config_.by_file && "only a page cache that keeps them by file knows them");
  auto f = flushed_by_file_.find(ino);
  return f == flushed_by_file_.end() ? 0 : f->second;
}

std::uint64_t PageCache::dirty_bytes(std::uint64_t ino) const {
  auto f = files_.find(ino);
  return f == files_.end() ? 0 : f->second.dirty;
}

}  // namespace racesim::storage
