// A local mount's page cache as Linux keeps it for write-back file systems (ext4, xfs): the
// accounting of dirty bytes, the background flusher, and fsync's share of the disk work. Pure
// bookkeeping in virtual time (it never sleeps): FileSystem asks it where a chunk goes and charges
// the time itself.
//
// The mechanism (Documentation/admin-guide/sysctl/vm.rst, mm/page-writeback.c):
// - A write copies into the page cache at memory speed and leaves the bytes dirty. Every reader
//   on the node sees them at once (the page cache is the file's content), so visibility is the
//   local mount's: immediate.
// - While the mount's dirty bytes stay under `dirty_limit` (vm.dirty_bytes or dirty_ratio of the
//   memory that can hold dirty pages), writers go at memory speed; past it, balance_dirty_pages
//   throttles them to the disk's rate. Modelled as: a chunk that would take the dirty bytes past
//   the limit is written through at the disk's rate and does not stay dirty.
// - The flusher writes dirty bytes back oldest first at the disk's `bandwidth`: each chunk once it
//   is `dirty_expire` old (vm.dirty_expire_centisecs, 30 s), or at once while the dirty bytes are
//   above `dirty_background` (vm.dirty_background_bytes/ratio).
// - fsync takes the file's dirty bytes and the caller writes them at the disk's rate (take());
//   unlinking the file's last name or truncating it drops them (drop()).
// Not modelled: eviction (every byte written stays cached, so reads of it go at memory speed),
// the flusher's wake-up period (dirty_writeback_centisecs), and the disk time the flusher takes
// from foreground fsyncs.
//
// Cost: O(1) amortised per dirtied chunk; memory O(dirty chunks not yet written back).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "sim/kernel/time.h"

namespace racesim::storage {

struct PageCacheConfig {
  std::uint64_t dirty_limit = 0;       // bytes; REQUIRES > 0
  std::uint64_t dirty_background = 0;  // bytes; REQUIRES <= dirty_limit
  kernel::Time dirty_expire = 0;       // the age at which the flusher writes a chunk back
  double disk_bandwidth = 1;           // bytes/s of the flusher; REQUIRES > 0
  bool by_file = false;                // keep each file's bytes the flusher wrote back (written_back_bytes(ino))
};

class PageCache {
 public:
  explicit PageCache(const PageCacheConfig& config);

  // Brings the flusher up to `now_ns` (chunks it has finished writing are clean).
  // REQUIRES: now_ns never decreases between calls.
  void advance(kernel::Time now_ns);
  // Whether `bytes` more dirty bytes stay within the dirty limit.
  bool fits(std::uint64_t bytes) const { return dirty_ + bytes <= config_.dirty_limit; }
  // `bytes` of file `ino` were copied in at `now_ns` and are dirty.
  void dirtied(std::uint64_t ino, std::uint64_t bytes, kernel::Time now_ns);
  // fsync: the file's dirty bytes, which the caller now writes to disk; they no longer count as
  // dirty, and the flusher skips them.
  std::uint64_t take(std::uint64_t ino);
  // The file's dirty bytes are discarded (its last name went, or it was truncated), and with
  // them what the flusher wrote back of it (its blocks are freed).
  void drop(std::uint64_t ino) {
    take(ino);
    if (config_.by_file) flushed_by_file_.erase(ino);
  }
  std::uint64_t dirty_bytes() const { return dirty_; }
  std::uint64_t dirty_bytes(std::uint64_t ino) const;
  std::uint64_t written_back_bytes() const { return written_back_; }  // by the flusher
  // The bytes of file `ino` the flusher wrote back since it was last dropped. REQUIRES: by_file.
  std::uint64_t written_back_bytes(std::uint64_t ino) const;

 private:
  struct Chunk {
    std::uint64_t ino;
    std::uint64_t bytes;
    kernel::Time at;     // when it became dirty
    std::uint64_t seq;   // its place in dirtying order
  };
  struct File {
    std::uint64_t dirty = 0;
    std::uint64_t synced_seq = 0;  // its chunks up to this one were taken (fsync or drop)
  };

  PageCacheConfig config_;
  kernel::Time last_advance_ns_ = 0;  // advance()'s last now_ns (its REQUIRES, asserted)
  std::deque<Chunk> chunks_;  // oldest first
  std::unordered_map<std::uint64_t, File> files_;  // files with dirty bytes
  std::unordered_map<std::uint64_t, std::uint64_t> flushed_by_file_;  // by_file: written back, per file
  std::uint64_t dirty_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t written_back_ = 0;
  kernel::Time flusher_free_ns_ = 0;                 // when the flusher finishes what it started
  kernel::Time background_since_ns_ = kernel::kTimeMax;  // since when dirty_ is above the background
};

}  // namespace racesim::storage
